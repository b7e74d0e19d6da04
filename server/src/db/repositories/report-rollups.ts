import { sql } from 'kysely';
import type { Reader } from '../database.js';
import { engineOf } from '../engine.js';
import { type PackedTraces, TRACE_PREFIX } from './report-traces.js';

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
 * ~250,000 trace ids, and one row each cost the report most of its time (bench/README.md). The
 * trace ids of past days are packed (report-traces.ts): the same statement reads the packed
 * counts of the range, and a value's count is its packed count plus its row's.
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
  let query = scoped(db, scope, destinations)
    .select([
      'local_date',
      'destination',
      json.objectOf(sql`item`, sql`count`, sql`not ${ofKind(kind)} and count != 0`).as('counts'),
      json.objectOf(sql`substr(item, ${sql.lit(kind.length + 1)})`, sql`count`, sql`${ofKind(kind)} and count != 0`).as('values'),
    ])
    .groupBy(['local_date', 'destination']);
  if (kind === TRACE_PREFIX) {
    // One statement: a packing that commits meanwhile is seen whole or not at all.
    let packed = db
      .selectFrom('rollup_report_traces')
      .select(['local_date', 'destination', sql<string | null>`null`.as('counts'), 'traces as values'])
      .where('store_id', '=', scope.storeId)
      .where('livemode', '=', scope.livemode)
      .where('local_date', '>=', scope.startDate)
      .where('local_date', '<=', scope.endDate);
    if (destinations) packed = packed.where('destination', 'in', destinations);
    query = query.unionAll(packed as unknown as typeof query);
  }
  const rows = await query.execute();
  const counts: ReportCount[] = [];
  // Per day and destination, its values' counts: the rows' (an object) and the packed ones (`[ids, counts]`).
  const parts = new Map<string, { local_date: string; destination: string; of: Array<Record<string, number> | PackedTraces> }>();
  for (const row of rows) {
    const { local_date, destination } = row;
    const items = row.counts === null ? {} : (JSON.parse(row.counts) as Record<string, number>);
    for (const [item, count] of Object.entries(items)) counts.push({ local_date, destination, item, count: Number(count) });
    // No values (SQLite's aggregate gives `{}` where PostgreSQL's gives null): nothing to add to the packed ones.
    if (row.values === null || row.values === '{}') continue;
    const key = `${local_date}\n${destination}`;
    const entry = parts.get(key) ?? { local_date, destination, of: [] };
    parts.set(key, entry);
    entry.of.push(JSON.parse(row.values) as Record<string, number> | PackedTraces);
  }
  const lists: ReportList[] = [];
  for (const { local_date, destination, of } of parts.values()) {
    const values = valuesAboveZero(of);
    if (values.length > 0) lists.push({ local_date, destination, values });
  }
  return { counts, lists };
}

/** The values whose counts, added up over the parts, are above zero. */
function valuesAboveZero(parts: Array<Record<string, number> | PackedTraces>): string[] {
  const [only] = parts;
  // A past day's packed ids alone (almost every day of a long range): no counts to add up.
  if (parts.length === 1 && Array.isArray(only)) {
    const [ids, counts] = only;
    return counts.every((count) => count > 0) ? ids : ids.filter((_, i) => (counts[i] as number) > 0);
  }
  const sums = new Map<string, number>();
  for (const part of parts) {
    const pairs = Array.isArray(part) ? part[0].map((id, i) => [id, part[1][i] as number] as const) : Object.entries(part);
    for (const [value, count] of pairs) sums.set(value, (sums.get(value) ?? 0) + Number(count));
  }
  return [...sums].filter(([, count]) => count > 0).map(([value]) => value);
}
