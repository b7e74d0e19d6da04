import { sql } from 'kysely';
import type { Writer } from '../database.js';
import type { DeletingConversions, DroppedMonth, RetentionStatements } from '../engine.js';
import { lockKey } from './key-lock.js';
import { listPartitions } from './partitions.js';

/**
 * Events are partitioned by month (migration 0007): a month that has wholly expired is dropped as
 * one table (no row-by-row delete, no dead rows to vacuum), before retention deletes what remains
 * expired row by row (db/repositories/retention.ts).
 *
 * One month a transaction, its DROP the transaction's last statement: dropping a partition takes
 * an ACCESS EXCLUSIVE lock on it and its table until commit, and a transaction that held one
 * (a month of conversions) while asking for another (a month of clicks) deadlocked with any
 * reader of both tables (measured: bench/retention.js on a 1M-click store, 6 conversions
 * answered 500 and the bench's own count aborted).
 */
export class PostgresRetention implements RetentionStatements {
  async dropExpiredMonth(trx: Writer, before: number, deleting: DeletingConversions): Promise<DroppedMonth | undefined> {
    // Instances take turns: two dropping the same month would fail the second.
    await lockKey(trx, 'retention');
    return dropExpiredMonth(trx, before, deleting);
  }
}

/**
 * Drops the oldest monthly partition of clicks or conversions whose whole month is
 * before `before`, with the touchpoints, outbox jobs and click ids of its rows (no foreign key holds them
 * on partitioned tables), unless one of its rows is still waiting in the rollup queue. One
 * month per call, the DROP last: the caller commits, then comes back for the next. `undefined`
 * when none can go.
 */
async function dropExpiredMonth(trx: Writer, before: number, deleting: DeletingConversions): Promise<DroppedMonth | undefined> {
  for (const [table, idColumn, keys, timeColumn] of [
    ['conversions', 'conversion_id', 'conversion_keys', 'event_time'],
    ['clicks', 'click_id', 'click_keys', 'click_time'],
  ] as const) {
    for (const partition of await listPartitions(trx, table)) {
      if (partition.upper === undefined || partition.lower === undefined || partition.upper > before) continue;
      const part = sql.table(partition.name);
      const waiting = await sql<{ one: number }>`
        select 1 as one from rollup_queue where id in (select id from ${part})
        ${
          table === 'clicks'
            ? sql`union all select 1 from touchpoints join rollup_queue on rollup_queue.id = touchpoints.conversion_id where touchpoints.click_id in (select id from ${part})
              union all select 1 from touchpoints join refunds on refunds.conversion_id = touchpoints.conversion_id join rollup_queue on rollup_queue.id = refunds.id where touchpoints.click_id in (select id from ${part})`
            : sql`union all select 1 from refunds join rollup_queue on rollup_queue.id = refunds.id where refunds.conversion_id in (select id from ${part})`
        }
        limit 1`.execute(trx);
      if (waiting.rows.length > 0) continue;
      const counted = await sql<{ n: number }>`select count(*) as n from ${part}`.execute(trx);
      await sql`delete from touchpoints where ${sql.ref(idColumn)} in (select id from ${part})`.execute(trx);
      if (table === 'conversions') {
        const ids = await sql<{ id: string }>`select id from ${part}`.execute(trx);
        await deleting(
          trx,
          ids.rows.map((r) => r.id),
        );
        await sql`delete from refunds where conversion_id in (select id from ${part})`.execute(trx);
        await sql`delete from destination_jobs where conversion_id in (select id from ${part})`.execute(trx);
      } else {
        // The month's other click ids (gclid, ttclid, …): exactly those of its clicks, by click time.
        await sql`delete from click_ids where click_time >= ${partition.lower} and click_time < ${partition.upper}`.execute(trx);
      }
      // The month's keys: exactly those in its time range (rows outside every month are in the default partition).
      await sql`delete from ${sql.table(keys)} where ${sql.ref(timeColumn)} >= ${partition.lower} and ${sql.ref(timeColumn)} < ${partition.upper}`.execute(
        trx,
      );
      await sql`drop table ${part}`.execute(trx);
      const n = Number(counted.rows[0]?.n ?? 0);
      return table === 'clicks'
        ? { clicks: n, conversions: 0, month: partition.name }
        : { clicks: 0, conversions: n, month: partition.name };
    }
  }
  return undefined;
}
