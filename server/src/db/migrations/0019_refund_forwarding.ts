import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../dialect.js';

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
 *   (capi/refund-event.ts): on SQLite its key no longer references `conversions` (rebuilt
 *   without that foreign key; PostgreSQL dropped it with partitioning, 0007).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db as never)) {
    await sql`alter table destination_jobs add column job_key text not null default ''`.execute(db);
    await sql`alter table destination_jobs add column kind text not null default 'conversion'`.execute(db);
    await sql`alter table destination_jobs drop constraint destination_jobs_pk`.execute(db);
    await sql`alter table destination_jobs add constraint destination_jobs_pk primary key (conversion_id, destination, job_key)`.execute(
      db,
    );
  } else {
    await db.schema
      .createTable('destination_jobs_0019')
      .addColumn('conversion_id', 'text', (c) => c.notNull())
      .addColumn('destination', 'text', (c) => c.notNull())
      .addColumn('job_key', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('kind', 'text', (c) => c.notNull().defaultTo('conversion'))
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
      .addPrimaryKeyConstraint('destination_jobs_pk', ['conversion_id', 'destination', 'job_key'])
      .execute();
    await sql`insert into destination_jobs_0019 (conversion_id, destination, account_id, store_id, livemode, payload,
      status, attempts, next_attempt_at, expires_at, claimed_by, last_error, trace_id, created_at, updated_at, sent_at)
      select conversion_id, destination, account_id, store_id, livemode, payload, status, attempts, next_attempt_at,
      expires_at, claimed_by, last_error, trace_id, created_at, updated_at, sent_at from destination_jobs`.execute(db);
    await db.schema.dropTable('destination_jobs').execute();
    await db.schema.alterTable('destination_jobs_0019').renameTo('destination_jobs').execute();
    await db.schema.createIndex('destination_jobs_due').on('destination_jobs').columns(['status', 'next_attempt_at']).execute();
  }
  await db.schema.alterTable('stores').addColumn('capi_refund_event', 'text').execute();
  if (!isPostgres(db as never)) await rebuildCapiOutbox(db);
}

const CAPI_COLUMNS = `conversion_id, account_id, store_id, livemode, pixel_id, test_event_code, event, status, attempts,
  next_attempt_at, expires_at, claimed_by, last_error, fbtrace_id, created_at, updated_at, sent_at`;

/** SQLite: `capi_outbox` as 0002 made it, without the foreign key from its key to `conversions`. */
async function rebuildCapiOutbox(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('capi_outbox_0019')
    .addColumn('conversion_id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('store_id', 'text', (c) => c.notNull().references('stores.id'))
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('pixel_id', 'text', (c) => c.notNull())
    .addColumn('test_event_code', 'text')
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('claimed_by', 'text')
    .addColumn('last_error', 'text')
    .addColumn('fbtrace_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('sent_at', 'bigint')
    .execute();
  await sql`insert into capi_outbox_0019 (${sql.raw(CAPI_COLUMNS)}) select ${sql.raw(CAPI_COLUMNS)} from capi_outbox`.execute(db);
  await db.schema.dropTable('capi_outbox').execute();
  await db.schema.alterTable('capi_outbox_0019').renameTo('capi_outbox').execute();
  await db.schema.createIndex('capi_outbox_due').on('capi_outbox').columns(['status', 'next_attempt_at']).execute();
  await db.schema
    .createIndex('capi_outbox_store_due')
    .on('capi_outbox')
    .columns(['store_id', 'status', 'next_attempt_at'])
    .execute();
}
