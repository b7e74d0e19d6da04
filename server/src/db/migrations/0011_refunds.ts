import type { Kysely } from 'kysely';

/**
 * Refunds (api.md §9).
 * - `refunds`: one row per refund, keyed by the client's `refund_id` per store and mode (the
 *   primary key is the idempotency key: of two concurrent writers of one refund id, one inserts
 *   and the other finds it). It names its conversion by id and event time (on PostgreSQL the
 *   conversion is found in its one monthly partition by both). `refunded_after_minor` is the
 *   conversion's refunded total right after this refund, so that a resend answers exactly the
 *   first result. Not partitioned on PostgreSQL: refunds are few next to clicks and
 *   conversions, and the unique key must hold without the time in it (docs/api.md "Refunds").
 * - `conversions.refunded_minor`: the sum of a conversion's refunds in its minor units, kept in
 *   the same transaction as each refund under the conversion row's lock, so that two concurrent
 *   refunds can never together exceed the conversion's value.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('refunds')
    .addColumn('store_id', 'text', (c) => c.notNull())
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('refund_id', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('conversion_id', 'text', (c) => c.notNull())
    .addColumn('conversion_time', 'bigint', (c) => c.notNull())
    .addColumn('order_id', 'text', (c) => c.notNull())
    .addColumn('amount_minor', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('refunded_after_minor', 'bigint', (c) => c.notNull())
    .addColumn('refund_time', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addPrimaryKeyConstraint('refunds_pk', ['store_id', 'livemode', 'refund_id'])
    .execute();
  await db.schema.createIndex('refunds_conversion').on('refunds').columns(['conversion_id']).execute();
  // Metrics: refunds of a store and mode by refund time.
  await db.schema.createIndex('refunds_time').on('refunds').columns(['store_id', 'livemode', 'refund_time']).execute();
  await db.schema
    .alterTable('conversions')
    .addColumn('refunded_minor', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
}
