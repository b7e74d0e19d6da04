import { sql } from 'kysely';
import type { Reader } from '../database.js';
import { engineOf } from '../engine.js';

/** Reads of the report rollups (migration 0035; analytics/report-fold.ts). */

export interface ReportCount {
  local_date: string;
  destination: string;
  item: string;
  count: number;
}

/** Which report of a store and mode, over inclusive local dates. */
export interface ReportScope {
  storeId: string;
  livemode: number;
  report: string;
  startDate: string;
  endDate: string;
}

/** The rows of `scope`, of the given destinations (and of '', the reconciliation's totals) or of all: a range of the primary key. */
function scoped(db: Reader, scope: ReportScope, destinations?: readonly string[]) {
  let query = db
    .selectFrom('rollup_reports')
    .where('store_id', '=', scope.storeId)
    .where('livemode', '=', scope.livemode)
    .where('report', '=', scope.report)
    .where('local_date', '>=', scope.startDate)
    .where('local_date', '<=', scope.endDate);
  if (destinations) query = query.where('destination', 'in', ['', ...destinations]);
  return query;
}

/** Whether an item is of a listed kind (`trace|<id>`): compared exactly, never by a collation's order. */
const ofKind = (kind: string) => sql<boolean>`substr(item, 1, ${sql.lit(kind.length)}) = ${kind}`;

/** The non-zero counts of one report over `scope`, of the given destinations or of all. */
export async function reportCounts(db: Reader, scope: ReportScope, destinations?: readonly string[]): Promise<ReportCount[]> {
  const rows = await scoped(db, scope, destinations)
    .select(['local_date', 'destination', 'item', 'count'])
    .where('count', '!=', 0)
    .execute();
  return rows.map((r) => ({ ...r, count: Number(r.count) }));
}

/** One day's and destination's values of a listed item kind, in no set order. */
export interface ReportList {
  local_date: string;
  destination: string;
  values: string[];
}

/**
 * `reportCounts`, but the items of one kind (`<kind><value>`: the reconciliation's trace ids,
 * `trace|…`) come as lists of the values counted above zero, one per day and destination. The
 * database gathers both in one walk of the key, one row per day and destination: a year holds
 * ~250,000 trace ids, and one row each cost the report most of its time (bench/README.md).
 */
export async function reportCountsAndLists(
  db: Reader,
  scope: ReportScope,
  kind: string,
  destinations?: readonly string[],
): Promise<{ counts: ReportCount[]; lists: ReportList[] }> {
  const { json } = engineOf(db);
  // The kind is tested in the aggregates' filters, not the WHERE: PostgreSQL cannot estimate how
  // many rows `substr(…) = …` keeps, and with it sorted the rows instead of walking the key in order.
  const rows = await scoped(db, scope, destinations)
    .select([
      'local_date',
      'destination',
      json.objectOf(sql`item`, sql`count`, sql`not ${ofKind(kind)} and count != 0`).as('counts'),
      json.arrayOf(sql`substr(item, ${sql.lit(kind.length + 1)})`, sql`${ofKind(kind)} and count > 0`).as('values'),
    ])
    .groupBy(['local_date', 'destination'])
    .execute();
  const counts: ReportCount[] = [];
  const lists: ReportList[] = [];
  for (const { local_date, destination, ...row } of rows) {
    const items = row.counts === null ? {} : (JSON.parse(row.counts) as Record<string, number>);
    for (const [item, count] of Object.entries(items)) counts.push({ local_date, destination, item, count: Number(count) });
    const values = row.values === null ? [] : (JSON.parse(row.values) as string[]);
    if (values.length > 0) lists.push({ local_date, destination, values });
  }
  return { counts, lists };
}
