// The shop webhooks' tables (part of `DB`, db/schema.ts).

/** A shop webhook delivery already answered (migration 0012): its answer, to give again to a redelivery. */
export interface ShopWebhookDeliveriesTable {
  store_id: string;
  platform: 'shopify' | 'woocommerce';
  delivery_id: string;
  topic: string;
  received_at: number;
  result: string; // JSON of the answer's data
}

/** A Shopify order paid in another currency than the shop's: both totals as Shopify sent them (migration 0022). */
export interface ShopOrdersTable {
  store_id: string;
  livemode: number;
  order_id: string;
  currency: string;
  value_minor: number;
  presentment_currency: string;
  presentment_value_minor: number;
  recorded_at: number;
}
