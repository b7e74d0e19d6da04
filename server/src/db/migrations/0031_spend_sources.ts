import type { Kysely } from 'kysely';

/**
 * Spend sync (api.md §11 "Spend sources", "Sync"):
 * - `spend_sources`, one row per (store, platform kind): the non-secret settings (JSON), the
 *   sealed secrets (JSON, sealed with `store:spend:kind`; null when the store's destination's are
 *   used), `backfill_days`, and the source's state (`status` never|ok|failing, `last_synced_at`,
 *   `synced_through`, `last_error`, `consecutive_failures`). The row is its own durable job, leased
 *   as the outbox's jobs are: `next_sync_at` is when it falls due; `claimed_by`/`lease_until` the
 *   instance running it and until when (a killed instance's lease ends and another takes it);
 *   `synced_through` null means the next run backfills `backfill_days`.
 * - `ad_spend.source`: `api` (POST …/ad-spend) or `sync` (the job); rows before are `api`.
 * - Index `spend_sources_due` (next_sync_at): the claim's seek.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('spend_sources')
    .addColumn('store_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('settings', 'text', (c) => c.notNull())
    .addColumn('secrets', 'text')
    .addColumn('backfill_days', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('last_synced_at', 'bigint')
    .addColumn('synced_through', 'text')
    .addColumn('last_error', 'text')
    .addColumn('consecutive_failures', 'integer', (c) => c.notNull())
    .addColumn('next_sync_at', 'bigint', (c) => c.notNull())
    .addColumn('claimed_by', 'text')
    .addColumn('lease_until', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('spend_sources_pk', ['store_id', 'kind'])
    .execute();
  await db.schema.createIndex('spend_sources_due').on('spend_sources').column('next_sync_at').execute();
  await db.schema
    .alterTable('ad_spend')
    .addColumn('source', 'text', (c) => c.notNull().defaultTo('api'))
    .execute();
}
