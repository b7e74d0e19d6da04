import type { Kysely } from 'kysely';

/** The Conversions API outbox: one delivery job per forwarded conversion, committed with it. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('capi_outbox')
    .addColumn('conversion_id', 'text', (c) => c.primaryKey().references('conversions.id'))
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
  // Finding due jobs (and the backlog count) walks this one; claiming a store's batch the next.
  await db.schema.createIndex('capi_outbox_due').on('capi_outbox').columns(['status', 'next_attempt_at']).execute();
  await db.schema
    .createIndex('capi_outbox_store_due')
    .on('capi_outbox')
    .columns(['store_id', 'status', 'next_attempt_at'])
    .execute();
}
