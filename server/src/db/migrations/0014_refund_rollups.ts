import { type Kysely, sql } from 'kysely';
import { newId } from '../../ids.js';

/**
 * Refunds in the analytics rollups (api.md §9: "breakdowns and multi-touch credit are reduced
 * in proportion"; docs/api.md "Refunds in analytics").
 * - `refunds.id`: an internal id (`rfd_…`), the refund's key in `rollup_queue` (kind
 *   `refund`). Existing refunds get one here.
 * - `rollup_days` / `rollup_hours` gain `refunds_minor` (refunds of Purchase conversions) and
 *   `attributed_refunds_minor` (of those attributed), in the local day / hour of the refund's
 *   own time and the refund's currency.
 * - `rollup_dimension_credits` gains `refund_minor`: each model's share of a refund credited
 *   to a click's dimension value, in the local day of the refund.
 * Every refund recorded so far is queued, so the next fold counts it once.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('refunds').addColumn('id', 'text').execute();
  const existing = await sql<{ store_id: string; livemode: number; refund_id: string; created_at: number | string }>`
    select store_id, livemode, refund_id, created_at from refunds`.execute(db);
  for (const r of existing.rows) {
    await sql`update refunds set id = ${newId('refund', Number(r.created_at))}
      where store_id = ${r.store_id} and livemode = ${r.livemode} and refund_id = ${r.refund_id}`.execute(db);
  }
  await db.schema.createIndex('refunds_id').on('refunds').column('id').unique().execute();

  for (const table of ['rollup_days', 'rollup_hours']) {
    for (const column of ['refunds_minor', 'attributed_refunds_minor']) {
      await db.schema
        .alterTable(table)
        .addColumn(column, 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
    }
  }
  await db.schema
    .alterTable('rollup_dimension_credits')
    .addColumn('refund_minor', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();

  await sql`insert into rollup_queue (id, store_id, kind, version)
    select id, store_id, 'refund', 0 from refunds`.execute(db);
}
