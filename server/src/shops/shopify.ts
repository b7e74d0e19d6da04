import type { CustomerData } from '../capi/pii.js';
import type { ConversionInput, ProductInput } from '../tracking/conversions.js';
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

/**
 * Shopify's webhook payloads → the inputs POST /v1/track/conversion and /v1/track/refund take
 * (api.md §9). Pure: no HTTP, no database. The payloads are those of Shopify's Admin REST API
 * (`orders/paid`: the order; `refunds/create`: the refund), parsed with ids kept exact.
 */

export const SHOPIFY_TOPICS = ['orders/paid', 'refunds/create'] as const;

/** Cart attributes the storefront snippet of docs/integrations.md saves: they become `note_attributes`. */
function noteAttributes(order: Json): Record<string, string> {
  const saved: Record<string, string> = {};
  for (const attribute of itemsAt(order, 'note_attributes')) {
    const name = textAt(attribute, 'name', 64);
    const value = textAt(attribute, 'value', 600);
    if (name && value) saved[name] = value;
  }
  return saved;
}

function customerDataOf(order: Json): CustomerData | undefined {
  const customer = objectAt(order, 'customer');
  const address =
    objectAt(order, 'billing_address') ?? objectAt(order, 'shipping_address') ?? objectAt(customer, 'default_address');
  const data: CustomerData = {
    email: textAt(order, 'email') ?? textAt(order, 'contact_email') ?? textAt(customer, 'email'),
    phone: textAt(order, 'phone') ?? textAt(address, 'phone') ?? textAt(customer, 'phone'),
    firstName: textAt(address, 'first_name') ?? textAt(customer, 'first_name'),
    lastName: textAt(address, 'last_name') ?? textAt(customer, 'last_name'),
    city: textAt(address, 'city'),
    state: textAt(address, 'province_code'),
    zipCode: textAt(address, 'zip'),
    country: textAt(address, 'country_code'),
  };
  const present = Object.fromEntries(Object.entries(data).filter(([, v]) => v !== undefined)) as CustomerData;
  return Object.keys(present).length > 0 ? present : undefined;
}

function productsOf(order: Json): ProductInput[] {
  return itemsAt(order, 'line_items')
    .slice(0, 1000)
    .flatMap((item) => {
      const productId = idAt(item, 'product_id') ?? idAt(item, 'variant_id') ?? idAt(item, 'id');
      if (!productId) return [];
      const price = amountAt(item, 'price');
      const name = textAt(item, 'title', 500) ?? textAt(item, 'name', 500);
      return [
        {
          productId,
          ...(name !== undefined && { name }),
          ...(price !== undefined && price >= 0 && { price }),
          quantity: quantityAt(item, 'quantity'),
        },
      ];
    });
}

export interface MappedConversion {
  livemode: boolean;
  conversion: Omit<ConversionInput, 'storeId'>;
}

/** `orders/paid` → a Purchase. `test: true` orders (Shopify's test gateway) are test mode. */
export function mapShopifyOrder(order: unknown): MappedConversion {
  if (!isObject(order)) throw unmappable('id', 'The payload is not a Shopify order object');
  const orderId = requireId(order, 'id');
  const eventValue = requireAmount(order, 'total_price');
  const currency = requireCurrency(order, 'currency');
  const timestamp = timeAt(order, 'processed_at') ?? timeAt(order, 'created_at');
  const client = objectAt(order, 'client_details');
  const saved = noteAttributes(order);
  const ipAddress = textAt(order, 'browser_ip', 64) ?? textAt(client, 'browser_ip', 64);
  const userAgent = textAt(client, 'user_agent', 1024);
  const customerData = customerDataOf(order);
  const products = productsOf(order);
  const conversion: Omit<ConversionInput, 'storeId'> = {
    eventType: 'Purchase',
    orderId,
    eventValue,
    currency,
    ...(timestamp !== undefined && { timestamp }),
    ...clickIdsInUrl(textAt(order, 'landing_site', 4096)),
    ...(saved.waytrack_fbc && { fbc: saved.waytrack_fbc }),
    ...(saved.waytrack_fbp && { fbp: saved.waytrack_fbp }),
    ...(saved.waytrack_fingerprint && { fingerprint: saved.waytrack_fingerprint }),
    ...(ipAddress !== undefined && { ipAddress }),
    ...(userAgent !== undefined && { userAgent }),
    ...(customerData && { customerData }),
    ...(products.length > 0 && { products }),
  };
  return { livemode: order.test !== true, conversion };
}

export interface MappedRefund {
  livemode: boolean;
  refund: Omit<RefundInput, 'storeId'>;
}

/**
 * `refunds/create` → a refund of the money returned: the sum of its successful `refund`
 * transactions (a refund that only restocks items returns none: nothing to record, undefined).
 * The mode is the transactions' (`test: true` from Shopify's test gateway).
 */
export function mapShopifyRefund(payload: unknown): MappedRefund | undefined {
  if (!isObject(payload)) throw unmappable('id', 'The payload is not a Shopify refund object');
  const refundId = requireId(payload, 'id');
  const orderId = requireId(payload, 'order_id');
  const transactions = itemsAt(payload, 'transactions').filter(
    (t) => textAt(t, 'kind') === 'refund' && (textAt(t, 'status') ?? 'success') === 'success',
  );
  if (transactions.length === 0) return undefined;
  let total = 0;
  let currency: string | undefined;
  for (const [i, transaction] of transactions.entries()) {
    const path = `transactions[${i}]`;
    const amount = requireAmount(transaction, 'amount', `${path}.amount`);
    const own = requireCurrency(transaction, 'currency', `${path}.currency`);
    if (currency !== undefined && own.toUpperCase() !== currency.toUpperCase()) {
      throw unmappable(`${path}.currency`, 'The refund’s transactions are in several currencies', 'invalid_format');
    }
    currency = own;
    // Exact to the cent and below: sums of decimal texts, not of binary fractions.
    total = Math.round((total + amount) * 1e6) / 1e6;
  }
  if (total === 0 || currency === undefined) return undefined;
  const timestamp = timeAt(payload, 'processed_at') ?? timeAt(payload, 'created_at');
  const note = textAt(payload, 'note', 500);
  return {
    livemode: !transactions.some((t) => t.test === true),
    refund: {
      orderId,
      refundId,
      amount: total,
      currency,
      ...(timestamp !== undefined && { timestamp }),
      ...(note !== undefined && { reason: note }),
    },
  };
}
