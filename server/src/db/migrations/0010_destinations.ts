import type { Kysely } from 'kysely';

/**
 * Every ad platform (api.md §8):
 * - clicks gain the other platforms' click ids (`gclid`, `gbraid`, `wbraid`, `ttclid`,
 *   `msclkid`) and TikTok's browser id `ttp`. A click without an fbclid keeps the NOT NULL
 *   `fbclid` column filled with `<kind>:<id>` of its first id (a colon never occurs in a real
 *   fbclid), so the existing dedup key (the table's own on SQLite, `click_keys` on PostgreSQL)
 *   still holds one row per click; `presentClick` shows it as no fbclid.
 * - `click_ids`: one row per (store, mode, id kind, id) other than fbclid, naming its click
 *   and the click's time (its partition on PostgreSQL): a click is a duplicate when any of its
 *   ids is already here (or its fbclid is already a click's).
 * - conversions gain `ref_ids` (JSON of the explicit click ids it named), `ttp`, and
 *   `forwarding` (JSON of the per-destination state other than Meta's, which keeps its
 *   `capi_*` columns).
 * - `store_destinations`: a store's Google Ads and TikTok settings (Meta's stay in `stores`);
 *   secrets sealed like the Meta token.
 * - `destination_jobs`: the outbox of every destination other than Meta, one job per
 *   (conversion, destination), committed with the conversion.
 * On PostgreSQL `alter table` on the partitioned tables reaches every partition.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const column of ['gclid', 'gbraid', 'wbraid', 'ttclid', 'msclkid', 'ttp']) {
    await db.schema.alterTable('clicks').addColumn(column, 'text').execute();
  }
  for (const column of ['ref_ids', 'ttp', 'forwarding']) {
    await db.schema.alterTable('conversions').addColumn(column, 'text').execute();
  }

  await db.schema
    .createTable('click_ids')
    .addColumn('store_id', 'text', (c) => c.notNull())
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('click_id', 'text', (c) => c.notNull())
    .addColumn('click_time', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('click_ids_pk', ['store_id', 'livemode', 'kind', 'value'])
    .execute();
  await db.schema.createIndex('click_ids_time').on('click_ids').column('click_time').execute();
  await db.schema.createIndex('click_ids_click').on('click_ids').column('click_id').execute();

  await db.schema
    .createTable('store_destinations')
    .addColumn('store_id', 'text', (c) => c.notNull().references('stores.id'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('config', 'text', (c) => c.notNull())
    .addColumn('secrets', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('store_destinations_pk', ['store_id', 'kind'])
    .execute();

  await db.schema
    .createTable('destination_jobs')
    .addColumn('conversion_id', 'text', (c) => c.notNull())
    .addColumn('destination', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('store_id', 'text', (c) => c.notNull())
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('claimed_by', 'text')
    .addColumn('last_error', 'text')
    .addColumn('trace_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('sent_at', 'bigint')
    .addPrimaryKeyConstraint('destination_jobs_pk', ['conversion_id', 'destination'])
    .execute();
  await db.schema.createIndex('destination_jobs_due').on('destination_jobs').columns(['status', 'next_attempt_at']).execute();
}
