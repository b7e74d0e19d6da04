import type { Kysely } from 'kysely';

/**
 * Shop webhooks in (api.md §9).
 * - `stores.shopify_webhook_secret`, `stores.woocommerce_webhook_secret`: the shared secrets
 *   that sign the shop's webhooks, sealed at rest like the Conversions API token (secrets.ts).
 * - `shop_webhook_deliveries`: one row per delivery answered, keyed by the shop's own delivery
 *   id (`X-Shopify-Webhook-Id`, `X-WC-Webhook-Delivery-ID`) per store and platform, with the
 *   answer given, so that a redelivery is answered the same without doing anything again. The
 *   conversions and refunds it records are idempotent by themselves (orderId, refundId): this
 *   table saves the work and makes the answer the same, it is not what prevents double counting.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('stores').addColumn('shopify_webhook_secret', 'text').execute();
  await db.schema.alterTable('stores').addColumn('woocommerce_webhook_secret', 'text').execute();
  await db.schema
    .createTable('shop_webhook_deliveries')
    .addColumn('store_id', 'text', (c) => c.notNull())
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('delivery_id', 'text', (c) => c.notNull())
    .addColumn('topic', 'text', (c) => c.notNull())
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .addColumn('result', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('shop_webhook_deliveries_pk', ['store_id', 'platform', 'delivery_id'])
    .execute();
}
