import type { Kysely } from 'kysely';

/**
 * Destination health (api.md §12): whether each destination of a store delivers.
 * - `destination_health`, one row per (store, destination kind), written in the transaction that
 *   records each attempt's outcome (destinations/health.ts): the consecutive failures are counted
 *   in the row itself (an upsert adding one), so several instances count together. No row: the
 *   destination has had no attempt yet (`unverified`).
 * - `status` 'ok' or 'failing'; `failing_reason` 'failures' (5 attempts in a row failed) or
 *   'stale' (a job pending longer than DESTINATION_ALERT_AFTER_S); `failing_since` when it turned.
 * - Index `destination_jobs_store_pending` (store, destination, status, created_at): a
 *   destination's oldest pending job is one seek (the periodic stale check, `oldestPendingAt`),
 *   never a walk over a backlog.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('destination_health')
    .addColumn('store_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('consecutive_failures', 'integer', (c) => c.notNull())
    .addColumn('last_success_at', 'bigint')
    .addColumn('last_failure_at', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('failing_reason', 'text')
    .addColumn('failing_since', 'bigint')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('destination_health_pk', ['store_id', 'kind'])
    .execute();
  await db.schema
    .createIndex('destination_jobs_store_pending')
    .on('destination_jobs')
    .columns(['store_id', 'destination', 'status', 'created_at'])
    .execute();
}
