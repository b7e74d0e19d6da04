import type { Kysely } from 'kysely';
import { engineOf } from '../engine.js';

/**
 * Refunds reach the ad platforms (api.md §9):
 * - `destination_jobs` holds several jobs per (conversion, destination): `job_key` is '' for the
 *   conversion itself and the refund's row id (`refunds.id`) for a refund's job (a Google Ads
 *   adjustment, an opt-in TikTok refund event); `kind` is `conversion` or `refund`. The primary
 *   key becomes (conversion_id, destination, job_key). SQLite cannot change a primary key in
 *   place: the table is rebuilt (same rows, job_key '').
 * - `stores.capi_refund_event`: the Meta destination's opt-in `refundEvent` (Meta's settings
 *   stay in `stores`).
 * - `capi_outbox` also holds a refund's Meta event, keyed by the refund's row id
 *   (destinations/meta/refund-event.ts): on SQLite its key no longer references `conversions` (rebuilt
 *   without that foreign key; PostgreSQL dropped it with partitioning, 0007).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await engineOf(db).migrations.rekeyForRefunds(db);
  await db.schema.alterTable('stores').addColumn('capi_refund_event', 'text').execute();
}
