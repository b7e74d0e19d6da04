import type { Reader, Writer } from '../database.js';
import type { ShopOrdersTable, ShopWebhookDeliveriesTable, StoresTable } from '../schema.js';

/**
 * A store by id alone, whichever its account: a shop webhook carries no API key, only the
 * store id in its URL and a signature made with the store's secret (shops/webhooks.ts).
 */
export async function findStoreForWebhook(db: Reader, storeId: string): Promise<StoresTable | undefined> {
  return db.selectFrom('stores').selectAll().where('id', '=', storeId).executeTakeFirst();
}

type DeliveryKey = Pick<ShopWebhookDeliveriesTable, 'store_id' | 'platform' | 'delivery_id'>;

export async function findDelivery(db: Reader, key: DeliveryKey): Promise<ShopWebhookDeliveriesTable | undefined> {
  return db
    .selectFrom('shop_webhook_deliveries')
    .selectAll()
    .where('store_id', '=', key.store_id)
    .where('platform', '=', key.platform)
    .where('delivery_id', '=', key.delivery_id)
    .executeTakeFirst();
}

/** Records a delivery's answer; a concurrent twin that committed first keeps its own (same effects). */
export async function recordDelivery(db: Writer, row: ShopWebhookDeliveriesTable): Promise<void> {
  await db
    .insertInto('shop_webhook_deliveries')
    .values(row)
    .onConflict((oc) => oc.columns(['store_id', 'platform', 'delivery_id']).doNothing())
    .execute();
}

/** Both totals of an order paid in the buyer's currency (migration 0022); the first recording stays. */
export async function recordShopOrder(db: Writer, row: ShopOrdersTable): Promise<void> {
  await db
    .insertInto('shop_orders')
    .values(row)
    .onConflict((oc) => oc.columns(['store_id', 'livemode', 'order_id']).doNothing())
    .execute();
}

export async function findShopOrder(
  db: Reader,
  key: Pick<ShopOrdersTable, 'store_id' | 'livemode' | 'order_id'>,
): Promise<ShopOrdersTable | undefined> {
  return db
    .selectFrom('shop_orders')
    .selectAll()
    .where('store_id', '=', key.store_id)
    .where('livemode', '=', key.livemode)
    .where('order_id', '=', key.order_id)
    .executeTakeFirst();
}
