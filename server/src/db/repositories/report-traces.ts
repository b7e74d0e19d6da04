import { sql } from 'kysely';
import type { Reader, Writer } from '../database.js';
import { engineOf } from '../engine.js';

/**
 * The reconciliation's trace ids of past days, packed (migration 0045): the `trace|<id>` rows of
 * `rollup_reports` of one store, mode, day and destination moved into one row of
 * `rollup_report_traces`: `[ids, counts]`, two JSON arrays, the ids sorted and no count 0 (a
 * year's 245,000 ids parse as arrays of strings and numbers several times faster than as one
 * object's keys). The report adds the rows still there to the packed counts (report-rollups.ts
 * `reportCountsAndLists`), so what is packed and when never changes an answer.
 */

/** A packed row's `traces`: the ids (sorted) and their counts, none 0. */
export type PackedTraces = [ids: string[], counts: number[]];

/** The item prefix of a trace id's count (report-fold.ts `TRACE_ITEM`). */
export const TRACE_PREFIX = 'trace|';
/** A trace row: a literal, as the partial index `rollup_reports_old_traces` is defined, so that its planner may use it. */
const TRACE_ROW = sql<boolean>`substr(item, 1, 6) = 'trace|'`;
/** Trace rows read, and deleted, per statement. */
const CHUNK = 500;

export interface TraceGroup {
  store_id: string;
  livemode: number;
  local_date: string;
  destination: string;
}

/** The group of the oldest trace row of a day before `before` (a local date), if any: one step of the partial index. */
async function oldestGroup(db: Reader, before: string): Promise<TraceGroup | undefined> {
  return db
    .selectFrom('rollup_reports')
    .select(['store_id', 'livemode', 'local_date', 'destination'])
    .where(TRACE_ROW)
    .where('local_date', '<', before)
    .orderBy('local_date')
    .limit(1)
    .executeTakeFirst();
}

/**
 * Packs up to `rows` trace rows of days before `before`, oldest group (store, mode, day,
 * destination) first, in this transaction: each group's rows are added to its packed counts and
 * deleted. A group larger than what is left of `rows` is packed in part, in item order (the rest
 * stays rows, which the report adds, until the next write): a write stays short however many
 * trace ids a day has. Returns how many rows it packed (fewer than `rows`: none is left).
 *
 * On PostgreSQL the group is serialized first (two instances packing it take turns) and its
 * rows are locked in key order, as a recording's upserts lock them: a recording that changes one
 * meanwhile waits, then writes a new row, which the next packing takes.
 */
export async function packTraceRows(trx: Writer, before: string, rows: number): Promise<number> {
  const { locks } = engineOf(trx);
  let packed = 0;
  while (packed < rows) {
    const group = await oldestGroup(trx, before);
    if (!group) break;
    await locks.serialize(trx, `traces:${group.store_id}:${group.livemode}:${group.local_date}:${group.destination}`);
    const taken = await groupRows(trx, group)
      .select(['item', 'count'])
      .orderBy('item')
      .limit(rows - packed)
      .$call(locks.forUpdate)
      .execute();
    const counts = await packedCounts(trx, group);
    for (const { item, count } of taken) {
      const id = item.slice(TRACE_PREFIX.length);
      counts.set(id, (counts.get(id) ?? 0) + Number(count));
    }
    const ids = [...counts.keys()].filter((id) => counts.get(id) !== 0).sort();
    if (ids.length === 0) await groupKey(trx.deleteFrom('rollup_report_traces'), group).execute();
    else {
      const traces: PackedTraces = [ids, ids.map((id) => counts.get(id) as number)];
      await trx
        .insertInto('rollup_report_traces')
        .values({ ...group, traces: JSON.stringify(traces) })
        .onConflict((oc) =>
          oc
            .columns(['store_id', 'livemode', 'local_date', 'destination'])
            .doUpdateSet({ traces: (eb) => eb.ref('excluded.traces') }),
        )
        .execute();
    }
    for (let i = 0; i < taken.length; i += CHUNK) {
      const items = taken.slice(i, i + CHUNK).map((row) => row.item);
      await groupKey(trx.deleteFrom('rollup_reports'), group)
        .where('report', '=', 'reconciliation')
        .where('item', 'in', items)
        .execute();
    }
    packed += taken.length;
  }
  return packed;
}

/** A group's trace rows. */
function groupRows(db: Reader, group: TraceGroup) {
  return groupKey(db.selectFrom('rollup_reports'), group).where('report', '=', 'reconciliation').where(TRACE_ROW);
}

async function packedCounts(db: Reader, group: TraceGroup): Promise<Map<string, number>> {
  const row = await groupKey(db.selectFrom('rollup_report_traces'), group).select('traces').executeTakeFirst();
  if (!row) return new Map();
  const [ids, counts] = JSON.parse(row.traces) as PackedTraces;
  return new Map(ids.map((id, i) => [id, counts[i] as number]));
}

// biome-ignore lint/suspicious/noExplicitAny: a select or delete of either table, narrowed by the group's key
function groupKey<Q extends { where: (...args: any[]) => any }>(query: Q, group: TraceGroup): Q {
  return query
    .where('store_id', '=', group.store_id)
    .where('livemode', '=', group.livemode)
    .where('local_date', '=', group.local_date)
    .where('destination', '=', group.destination) as Q;
}
