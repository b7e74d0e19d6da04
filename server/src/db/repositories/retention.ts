import type { Reader, Writer } from '../database.js';
import { type Deleted, type DeletingConversions, engineOf } from '../engine.js';
import { rowLimit } from '../row-limit.js';

/**
 * Retention (RETENTION_DAYS): deletes clicks older than a cutoff by click time, and conversions
 * older than it by event time, with the rows that depend on them, in bounded batches.
 *
 * - A conversion goes with its touchpoints, its outbox jobs (Conversions API and every other
 *   destination's), its refunds and its rollup queue row (a pending delivery of an expired
 *   conversion is dropped). Its refunds stay counted in the rollups like the conversion itself,
 *   so every figure stays as it was.
 * - A click goes with its `click_ids` rows (its gclid, ttclid, …: a later click with the same id
 *   is then new, as one with the fbclid of an expired click is).
 * - A click goes with the touchpoints that point at it, also those of a newer conversion that
 *   is kept: the foreign key touchpoints.click_id → clicks.id must hold. Such a conversion keeps
 *   its `attributed_click_id` and `attributed_fbclid` as stored facts (what it was attributed
 *   to when it was recorded); the click they name is gone, and its attribution explanation no
 *   longer lists that touchpoint.
 * - The analytics rollups are aggregates and are not changed: what was folded in stays
 *   counted. So that everything deleted was folded in first, an event still waiting in the
 *   rollup queue is not deleted yet (nor a conversion with a queued refund, nor a click
 *   credited by a queued conversion or by the conversion of a queued refund); a later batch
 *   takes it once the rollup refresher has folded it.
 *
 * Expired events are found, oldest first, through the time indexes of migration 0006. On
 * PostgreSQL the events are partitioned by month (migration 0007): a month that has wholly
 * expired is dropped as one table first (db/postgres/retention.ts: no row-by-row delete, no dead
 * rows to vacuum); what remains expired (the part of the cutoff's month before it, and old
 * events in the default partition) goes in the same batches as on SQLite, so both engines keep
 * exactly the same days.
 */

/** Up to `limit` conversions with event time before `before` whose deletion loses nothing the rollups still need. */
export function expiredConversions(db: Reader, before: number, limit: number) {
  return (
    db
      .selectFrom('conversions')
      .select('conversions.id')
      .where('conversions.event_time', '<', before)
      .where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom('rollup_queue').select('rollup_queue.id').whereRef('rollup_queue.id', '=', 'conversions.id'))),
      )
      // A queued refund is folded with its conversion's touchpoints.
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('refunds')
              .innerJoin('rollup_queue', 'rollup_queue.id', 'refunds.id')
              .select('refunds.id')
              .whereRef('refunds.conversion_id', '=', 'conversions.id'),
          ),
        ),
      )
      .orderBy('conversions.event_time')
      .limit(rowLimit(limit))
  );
}

/** Up to `limit` clicks with click time before `before` whose deletion loses nothing the rollups still need. */
export function expiredClicks(db: Reader, before: number, limit: number) {
  return (
    db
      .selectFrom('clicks')
      .select('clicks.id')
      .where('clicks.click_time', '<', before)
      .where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom('rollup_queue').select('rollup_queue.id').whereRef('rollup_queue.id', '=', 'clicks.id'))),
      )
      // A queued conversion credited to this click is folded with the click's campaign values.
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('touchpoints')
              .innerJoin('rollup_queue', 'rollup_queue.id', 'touchpoints.conversion_id')
              .select('touchpoints.click_id')
              .whereRef('touchpoints.click_id', '=', 'clicks.id'),
          ),
        ),
      )
      // So is a queued refund of a conversion credited to it.
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('touchpoints')
              .innerJoin('refunds', 'refunds.conversion_id', 'touchpoints.conversion_id')
              .innerJoin('rollup_queue', 'rollup_queue.id', 'refunds.id')
              .select('touchpoints.click_id')
              .whereRef('touchpoints.click_id', '=', 'clicks.id'),
          ),
        ),
      )
      .orderBy('clicks.click_time')
      .limit(rowLimit(limit))
  );
}

export type { Deleted, DeletingConversions };

/**
 * What one step of retention deleted, whether another step may find more to delete now, and
 * (PostgreSQL) the month it dropped whole.
 */
export interface RetentionStep extends Deleted {
  more: boolean;
  month?: string;
}

/** How long one batch of row-by-row retention should hold the database (the engine's `batchBudgetMs`). */
export function retentionBatchBudgetMs(db: Reader): number | undefined {
  return engineOf(db).retention.batchBudgetMs;
}

/**
 * One step of retention in the caller's transaction: a wholly expired month dropped (PostgreSQL;
 * alone in its transaction, see db/postgres/retention.ts), else up to `limit` expired events
 * (conversions first, then clicks, `limit` in all) and their dependants. Bounded, so that one
 * step holds the (SQLite) writer only briefly.
 */
export async function deleteExpiredEvents(
  trx: Writer,
  before: number,
  limit: number,
  deleting: DeletingConversions,
): Promise<RetentionStep> {
  const month = await engineOf(trx).retention.dropExpiredMonth(trx, before, deleting);
  if (month) return { ...month, more: true };
  const rows = await deleteExpiredRows(trx, before, limit, deleting);
  return { ...rows, more: rows.clicks + rows.conversions >= limit };
}

/** Up to `limit` expired events, row by row. */
async function deleteExpiredRows(trx: Writer, before: number, limit: number, deleting: DeletingConversions): Promise<Deleted> {
  // Sorted, so that runs of several instances (PostgreSQL) take row locks in a like order; a
  // deadlock between them is retried by `Database.write` anyway.
  const conversionIds = (await expiredConversions(trx, before, limit).execute()).map((r) => r.id).sort();
  let conversions = 0;
  if (conversionIds.length > 0) {
    await deleting(trx, conversionIds);
    await trx.deleteFrom('touchpoints').where('conversion_id', 'in', conversionIds).execute();
    await trx.deleteFrom('destination_jobs').where('conversion_id', 'in', conversionIds).execute();
    // None was queued when selected; on PostgreSQL a rebuild committed since may have queued it.
    await trx.deleteFrom('rollup_queue').where('id', 'in', conversionIds).execute();
    await trx
      .deleteFrom('rollup_queue')
      .where('id', 'in', (eb) =>
        eb.selectFrom('refunds').select('refunds.id').where('refunds.conversion_id', 'in', conversionIds),
      )
      .execute();
    await trx.deleteFrom('refunds').where('conversion_id', 'in', conversionIds).execute();
    await engineOf(trx).conversions.deleteKeys(trx, before, conversionIds);
    const result = await trx.deleteFrom('conversions').where('id', 'in', conversionIds).executeTakeFirst();
    conversions = Number(result.numDeletedRows);
  }

  const room = limit - conversionIds.length;
  if (room <= 0) return { clicks: 0, conversions };
  const clickIds = (await expiredClicks(trx, before, room).execute()).map((r) => r.id).sort();
  let clicks = 0;
  if (clickIds.length > 0) {
    // Before the clicks: the foreign key refuses to delete a click a touchpoint still names.
    await trx.deleteFrom('touchpoints').where('click_id', 'in', clickIds).execute();
    await trx.deleteFrom('rollup_queue').where('id', 'in', clickIds).execute();
    await trx.deleteFrom('click_ids').where('click_id', 'in', clickIds).execute();
    await engineOf(trx).clicks.deleteKeys(trx, before, clickIds);
    const result = await trx.deleteFrom('clicks').where('id', 'in', clickIds).executeTakeFirst();
    clicks = Number(result.numDeletedRows);
  }
  return { clicks, conversions };
}
