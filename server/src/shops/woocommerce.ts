import type { CustomerData } from '../customer-data.js';
import type { ProductInput } from '../tracking/conversions.js';
import {
  clickIdsInUrl,
  decimalAt,
  exactAmount,
  idAt,
  ipAt,
  isObject,
  itemsAt,
  type Json,
  objectAt,
  priceAt,
  quantityAt,
  requireAmount,
  requireCurrency,
  requireId,
  textAt,
  timeAt,
  unmappable,
  type Warnings,
} from './payload.js';
import type { MappedConversion, MappedRefund } from './record.js';

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

function customerDataOf(order: Json, warnings: Warnings): CustomerData | undefined {
  const billing = objectAt(order, 'billing');
  const shipping = objectAt(order, 'shipping');
  const at = (key: string) =>
    textAt(billing, key, 256, { warnings, path: `billing.${key}` }) ??
    textAt(shipping, key, 256, { warnings, path: `shipping.${key}` });
  const data: CustomerData = {
    email: textAt(billing, 'email', 256, { warnings, path: 'billing.email' }),
    phone: at('phone'),
    firstName: at('first_name'),
    lastName: at('last_name'),
    city: at('city'),
    state: at('state'),
    zipCode: at('postcode'),
    country: at('country'),
  };
  const present = Object.fromEntries(Object.entries(data).filter(([, v]) => v !== undefined)) as CustomerData;
  return Object.keys(present).length > 0 ? present : undefined;
}

function productsOf(order: Json, currency: string, warnings: Warnings): ProductInput[] {
  return itemsAt(order, 'line_items')
    .slice(0, 1000)
    .flatMap((item, i) => {
      const variation = idAt(item, 'variation_id');
      const productId = (variation !== '0' ? variation : undefined) ?? idAt(item, 'product_id') ?? idAt(item, 'id');
      if (!productId) return [];
      const price = priceAt(item, 'price', currency, warnings, `line_items[${i}].price`);
      const name = textAt(item, 'name', 500);
      const sku = textAt(item, 'sku', 255);
      return [
        {
          productId: sku ?? productId,
          ...(name !== undefined && { name }),
          ...(price !== undefined && { price }),
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
  refunds: MappedRefund[];
}

/** A paid order's Purchase: every field but the id, total and currency is optional (left out with a warning when unusable). */
function purchaseOf(order: Json, orderId: string, currency: string, warnings: Warnings, now: number): MappedConversion {
  const eventValue = requireAmount(order, 'total', currency);
  const meta = metaOf(order);
  const saved = (name: string, max: number) =>
    textAt(meta, `_waytrack_${name}`, max, { warnings, path: `meta_data._waytrack_${name}` }) ??
    textAt(meta, `waytrack_${name}`, max, { warnings, path: `meta_data.waytrack_${name}` });
  const [fbc, fbp, fingerprint] = [saved('fbc', 600), saved('fbp', 256), saved('fingerprint', 256)];
  const timestamp = timeAt(order, 'date_paid_gmt', warnings, now, true) ?? timeAt(order, 'date_created_gmt', warnings, now, true);
  const ipAddress = ipAt(order, 'customer_ip_address', warnings);
  const userAgent = textAt(order, 'customer_user_agent', 1024, { warnings, path: 'customer_user_agent' });
  const customerData = customerDataOf(order, warnings);
  const products = productsOf(order, currency, warnings);
  return {
    livemode: true,
    conversion: {
      eventType: 'Purchase',
      orderId,
      eventValue,
      currency,
      ...(timestamp !== undefined && { timestamp }),
      ...clickIdsInUrl(meta._wc_order_attribution_session_entry, warnings, 'meta_data._wc_order_attribution_session_entry'),
      ...(fbc !== undefined && { fbc }),
      ...(fbp !== undefined && { fbp }),
      ...(fingerprint !== undefined && { fingerprint }),
      ...(ipAddress !== undefined && { ipAddress }),
      ...(userAgent !== undefined && { userAgent }),
      ...(customerData && { customerData }),
      ...(products.length > 0 && { products }),
    },
  };
}

/** An order webhook → its Purchase (when paid) and its refunds. Orders neither paid nor refunded map to nothing. */
export function mapWooOrder(order: unknown, warnings: Warnings, now: number): MappedOrder {
  if (!isObject(order)) throw unmappable('id', 'The payload is not a WooCommerce order object');
  const orderId = requireId(order, 'id');
  const status = textAt(order, 'status', 64);
  if (status === undefined) throw unmappable('status', 'status is missing');
  const paid = PAID.has(status);
  const refunds = itemsAt(order, 'refunds');
  if (!paid && status !== 'refunded' && refunds.length === 0) return { orderId, refunds: [] };
  const currency = requireCurrency(order, 'currency');
  const mapped: MappedOrder = { orderId, refunds: [] };
  if (paid) mapped.purchase = purchaseOf(order, orderId, currency, warnings, now);
  const time = timeAt(order, 'date_modified_gmt', warnings, now, true);
  // Newest first in the payload: recorded oldest first, so that each sees what the earlier left.
  for (const [i, refund] of [...refunds.entries()].reverse()) {
    const refundId = requireId(refund, 'id', `refunds[${i}].id`);
    const amount = decimalAt(refund, 'total');
    if (amount === undefined) throw unmappable(`refunds[${i}].total`, `refunds[${i}].total is missing or not a decimal amount`);
    // WooCommerce lists refunds with negative totals: the money returned is the absolute value.
    const returned = exactAmount({ ...amount, negative: false }, currency);
    if (returned === 0) continue;
    const reason = textAt(refund, 'reason', 500);
    mapped.refunds.push({
      livemode: true,
      refund: {
        orderId,
        refundId,
        amount: returned,
        currency,
        ...(time !== undefined && { timestamp: time }),
        ...(reason !== undefined && { reason }),
      },
    });
  }
  if (status === 'refunded') {
    // Whatever the listed refunds left: the order is refunded in full.
    const rest = { orderId, refundId: `${orderId}-refunded`, currency, ...(time !== undefined && { timestamp: time }) };
    mapped.refunds.push({ livemode: true, refund: rest });
  }
  return mapped;
}
