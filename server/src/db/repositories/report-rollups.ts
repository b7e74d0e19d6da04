import type { Reader } from '../database.js';

/** Reads of the report rollups (migration 0035; analytics/report-fold.ts). */

export interface ReportCount {
  local_date: string;
  destination: string;
  item: string;
  count: number;
}

/**
 * The non-zero counts of one report of a store and mode over inclusive local dates, of the given
 * destinations (and of '' , the reconciliation's totals) or of all. A range scan of the primary key.
 */
export async function reportCounts(
  db: Reader,
  scope: { storeId: string; livemode: number; report: string; startDate: string; endDate: string },
  destinations?: readonly string[],
): Promise<ReportCount[]> {
  let query = db
    .selectFrom('rollup_reports')
    .select(['local_date', 'destination', 'item', 'count'])
    .where('store_id', '=', scope.storeId)
    .where('livemode', '=', scope.livemode)
    .where('report', '=', scope.report)
    .where('local_date', '>=', scope.startDate)
    .where('local_date', '<=', scope.endDate)
    .where('count', '!=', 0);
  if (destinations) query = query.where('destination', 'in', ['', ...destinations]);
  const rows = await query.execute();
  return rows.map((r) => ({ ...r, count: Number(r.count) }));
}
