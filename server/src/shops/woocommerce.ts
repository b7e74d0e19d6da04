import type { CustomerData } from '../capi/pii.js';
import type { ProductInput } from '../tracking/conversions.js';
import type { RefundInput } from '../tracking/refunds.js';
import {
  amountAt,
  clickIdsInUrl,
  idAt,
  isObject,
  itemsAt,
  type Json,
  objectAt,
  quantityAt,
  requireAmount,
  requireCurrency,
  requireId,
  textAt,
  timeAt,
  unmappable,
} from './payload.js';
import type { MappedConversion } from './shopify.js';

/**
 * WooCommerce's order webhooks (REST API v3 order JSON, topics `order.created` and
 * `order.updated`) → the inputs of a Purchase and of refunds (api.md §9). Pure: no HTTP, no
 * database. WooCommerce has no test orders: every order is live.
 */

export const WOOCOMMERCE_TOPICS = ['order.created', 'order.updated', 'order.restored'] as const;
/** Statuses of a paid order: it becomes a Purchase. */
const PAID = new Set(['processing', 'completed']);

/** `meta_data` as a map; the keys of docs/integrations.md's plugin (`_waytrack_fbc`, …) and WooCommerce's order attribution. */
function metaOf(order: Json): Record<string, string> {
  const meta: Record<string, string> = {};
  for (const entry of itemsAt(order, 'meta_data')) {
    const key = textAt(entry, 'key', 128);
    const value = textAt(entry, 'value', 4096);
    if (key && value) meta[key] = value;
  }
  return meta;
}

function customerDataOf(order: Json): CustomerData | undefined {
  const billing = objectAt(order, 'billing');
  const shipping = objectAt(order, 'shipping');
  const data: CustomerData = {
    email: textAt(billing, 'email'),
    phone: textAt(billing, 'phone') ?? textAt(shipping, 'phone'),
    firstName: textAt(billing, 'first_name') ?? textAt(shipping, 'first_name'),
    lastName: textAt(billing, 'last_name') ?? textAt(shipping, 'last_name'),
    city: textAt(billing, 'city') ?? textAt(shipping, 'city'),
    state: textAt(billing, 'state') ?? textAt(shipping, 'state'),
    zipCode: textAt(billing, 'postcode') ?? textAt(shipping, 'postcode'),
    country: textAt(billing, 'country') ?? textAt(shipping, 'country'),
  };
  const present = Object.fromEntries(Object.entries(data).filter(([, v]) => v !== undefined)) as CustomerData;
  return Object.keys(present).length > 0 ? present : undefined;
}

function productsOf(order: Json): ProductInput[] {
  return itemsAt(order, 'line_items')
    .slice(0, 1000)
    .flatMap((item) => {
      const variation = idAt(item, 'variation_id');
      const productId = (variation !== '0' ? variation : undefined) ?? idAt(item, 'product_id') ?? idAt(item, 'id');
      if (!productId) return [];
      const price = amountAt(item, 'price');
      const name = textAt(item, 'name', 500);
      const sku = textAt(item, 'sku', 200);
      return [
        {
          productId: sku ?? productId,
          ...(name !== undefined && { name }),
          ...(price !== undefined && price >= 0 && { price }),
          quantity: quantityAt(item, 'quantity'),
        },
      ];
    });
}

export interface MappedOrder {
  orderId: string;
  /** When the order is paid (status processing or completed). */
  purchase?: MappedConversion;
  /** Its refunds, oldest first; and when the order is `refunded`, the rest of it. */
  refunds: Array<Omit<RefundInput, 'storeId'>>;
}

/** An order webhook → its Purchase (when paid) and its refunds. Orders neither paid nor refunded map to nothing. */
export function mapWooOrder(order: unknown): MappedOrder {
  if (!isObject(order)) throw unmappable('id', 'The payload is not a WooCommerce order object');
  const orderId = requireId(order, 'id');
  const status = textAt(order, 'status', 64);
  if (status === undefined) throw unmappable('status', 'status is missing');
  const paid = PAID.has(status);
  const refunds = itemsAt(order, 'refunds');
  if (!paid && status !== 'refunded' && refunds.length === 0) return { orderId, refunds: [] };
  const currency = requireCurrency(order, 'currency');
  const mapped: MappedOrder = { orderId, refunds: [] };
  if (paid) {
    const meta = metaOf(order);
    const saved = (name: string) => meta[`_waytrack_${name}`] ?? meta[`waytrack_${name}`];
    const timestamp = timeAt(order, 'date_paid_gmt', true) ?? timeAt(order, 'date_created_gmt', true);
    const ipAddress = textAt(order, 'customer_ip_address', 64);
    const userAgent = textAt(order, 'customer_user_agent', 1024);
    const customerData = customerDataOf(order);
    const products = productsOf(order);
    mapped.purchase = {
      livemode: true,
      conversion: {
        eventType: 'Purchase',
        orderId,
        eventValue: requireAmount(order, 'total'),
        currency,
        ...(timestamp !== undefined && { timestamp }),
        ...clickIdsInUrl(meta._wc_order_attribution_session_entry),
        ...(saved('fbc') && { fbc: saved('fbc') }),
        ...(saved('fbp') && { fbp: saved('fbp') }),
        ...(saved('fingerprint') && { fingerprint: saved('fingerprint') }),
        ...(ipAddress !== undefined && { ipAddress }),
        ...(userAgent !== undefined && { userAgent }),
        ...(customerData && { customerData }),
        ...(products.length > 0 && { products }),
      },
    };
  }
  const time = timeAt(order, 'date_modified_gmt', true);
  // Newest first in the payload: recorded oldest first, so that each sees what the earlier left.
  for (const [i, refund] of [...refunds.entries()].reverse()) {
    const refundId = requireId(refund, 'id', `refunds[${i}].id`);
    const amount = amountAt(refund, 'total');
    if (amount === undefined) throw unmappable(`refunds[${i}].total`, `refunds[${i}].total is missing or not a decimal amount`);
    if (amount === 0) continue;
    const reason = textAt(refund, 'reason', 500);
    mapped.refunds.push({
      orderId,
      refundId,
      // WooCommerce lists refunds with negative totals.
      amount: Math.abs(amount),
      currency,
      ...(time !== undefined && { timestamp: time }),
      ...(reason !== undefined && { reason }),
    });
  }
  if (status === 'refunded') {
    // Whatever the listed refunds left: the order is refunded in full.
    mapped.refunds.push({ orderId, refundId: `${orderId}-refunded`, currency, ...(time !== undefined && { timestamp: time }) });
  }
  return mapped;
}
