import type { Kysely } from 'kysely';

/**
 * Shop orders in two currencies (api.md §9, docs/api.md "Shop webhooks in"): a Shopify order
 * whose buyer paid in another currency than the shop's (Shopify Markets) is recorded as a
 * conversion in the shop's currency, and here with both totals as Shopify sent them
 * (`total_price_set.shop_money` / `presentment_money`). Shopify refunds that order in the buyer's
 * currency; when the refund's own payload carries no shop-money prices, these two totals are
 * Shopify's own rate for converting it (shops/record.ts). One row per order, store and mode;
 * orders in one currency have none.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('shop_orders')
    .addColumn('store_id', 'text', (c) => c.notNull())
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('order_id', 'text', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('value_minor', 'bigint', (c) => c.notNull())
    .addColumn('presentment_currency', 'text', (c) => c.notNull())
    .addColumn('presentment_value_minor', 'bigint', (c) => c.notNull())
    .addColumn('recorded_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('shop_orders_pk', ['store_id', 'livemode', 'order_id'])
    .execute();
}
