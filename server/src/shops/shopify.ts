import type { CustomerData } from '../customer-data.js';
import { type Decimal, decimalToMinor, fromMinorUnits, normalizeCurrency } from '../money.js';
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
import type { MappedConversion, MappedRefund, ShopMoney } from './record.js';

/**
 * Shopify's webhook payloads → the inputs POST /v1/track/conversion and /v1/track/refund take
 * (api.md §9). Pure: no HTTP, no database. The payloads are those of Shopify's Admin REST API
 * (`orders/create`, `orders/paid`: the order; `refunds/create`: the refund), read with ids exact.
 */

export const SHOPIFY_TOPICS = ['orders/create', 'orders/paid', 'refunds/create'] as const;

/** `orders/create` is a Purchase only when the order is paid at creation; `orders/paid` always is. */
export function isPaidShopifyOrder(order: unknown): boolean {
  return textAt(order, 'financial_status', 64) === 'paid';
}

/** Cart attributes the storefront snippet of docs/integrations.md saves: they become `note_attributes`. */
function noteAttributes(order: Json): Record<string, string> {
  const saved: Record<string, string> = {};
  for (const attribute of itemsAt(order, 'note_attributes')) {
    const name = textAt(attribute, 'name', 64);
    const value = textAt(attribute, 'value', 4096);
    if (name && value) saved[name] = value;
  }
  return saved;
}

function customerDataOf(order: Json, warnings: Warnings): CustomerData | undefined {
  const customer = objectAt(order, 'customer');
  const [addressKey, address] = (['billing_address', 'shipping_address'] as const)
    .map((key) => [key, objectAt(order, key)] as const)
    .find(([, found]) => found !== undefined) ?? ['customer.default_address', objectAt(customer, 'default_address')];
  const at = (value: unknown, key: string, path: string) => textAt(value, key, 256, { warnings, path });
  const data: CustomerData = {
    email: at(order, 'email', 'email') ?? at(order, 'contact_email', 'contact_email') ?? at(customer, 'email', 'customer.email'),
    phone: at(order, 'phone', 'phone') ?? at(address, 'phone', `${addressKey}.phone`) ?? at(customer, 'phone', 'customer.phone'),
    firstName: at(address, 'first_name', `${addressKey}.first_name`) ?? at(customer, 'first_name', 'customer.first_name'),
    lastName: at(address, 'last_name', `${addressKey}.last_name`) ?? at(customer, 'last_name', 'customer.last_name'),
    city: at(address, 'city', `${addressKey}.city`),
    state: at(address, 'province_code', `${addressKey}.province_code`),
    zipCode: at(address, 'zip', `${addressKey}.zip`),
    country: at(address, 'country_code', `${addressKey}.country_code`),
  };
  const present = Object.fromEntries(Object.entries(data).filter(([, v]) => v !== undefined)) as CustomerData;
  return Object.keys(present).length > 0 ? present : undefined;
}

function productsOf(order: Json, currency: string, warnings: Warnings): ProductInput[] {
  return itemsAt(order, 'line_items')
    .slice(0, 1000)
    .flatMap((item, i) => {
      const productId = idAt(item, 'product_id') ?? idAt(item, 'variant_id') ?? idAt(item, 'id');
      if (!productId) return [];
      const price = priceAt(item, 'price', currency, warnings, `line_items[${i}].price`);
      const name = textAt(item, 'title', 500) ?? textAt(item, 'name', 500);
      return [
        {
          productId,
          ...(name !== undefined && { name }),
          ...(price !== undefined && { price }),
          quantity: quantityAt(item, 'quantity'),
        },
      ];
    });
}

/** The order's total in the buyer's currency (`total_price_set.presentment_money`) when it is not the shop's. */
function presentmentOf(order: Json, currency: string, warnings: Warnings): MappedConversion['presentment'] {
  const money = objectAt(objectAt(order, 'total_price_set'), 'presentment_money');
  const code = textAt(money, 'currency_code', 16);
  if (!money || code === undefined || code.toUpperCase() === currency) return undefined;
  const presentment = normalizeCurrency(code);
  const amount = decimalAt(money, 'amount');
  if (!presentment || !amount || amount.negative) {
    return warnings.add(
      'total_price_set.presentment_money',
      'invalid_format',
      'The buyer’s currency and total are not usable: not recorded',
    );
  }
  return { amount: exactAmount(amount, presentment), currency: presentment };
}

/** `orders/paid` (or a paid `orders/create`) → a Purchase. `test: true` orders (Shopify's test gateway) are test mode. */
export function mapShopifyOrder(order: unknown, warnings: Warnings, now: number): MappedConversion {
  if (!isObject(order)) throw unmappable('id', 'The payload is not a Shopify order object');
  const orderId = requireId(order, 'id');
  const currency = requireCurrency(order, 'currency');
  const eventValue = requireAmount(order, 'total_price', currency);
  const timestamp = timeAt(order, 'processed_at', warnings, now) ?? timeAt(order, 'created_at', warnings, now);
  const client = objectAt(order, 'client_details');
  const saved = noteAttributes(order);
  const ipAddress = ipAt(order, 'browser_ip', warnings) ?? ipAt(client, 'browser_ip', warnings, 'client_details.browser_ip');
  const userAgent = textAt(client, 'user_agent', 1024, { warnings, path: 'client_details.user_agent' });
  const attribute = (name: string, max: number) => textAt(saved, name, max, { warnings, path: `note_attributes.${name}` });
  const [fbc, fbp, fingerprint] = [
    attribute('waytrack_fbc', 600),
    attribute('waytrack_fbp', 256),
    attribute('waytrack_fingerprint', 256),
  ];
  const customerData = customerDataOf(order, warnings);
  const products = productsOf(order, currency, warnings);
  const presentment = presentmentOf(order, currency, warnings);
  return {
    livemode: order.test !== true,
    conversion: {
      eventType: 'Purchase',
      orderId,
      eventValue,
      currency,
      ...(timestamp !== undefined && { timestamp }),
      ...clickIdsInUrl(textAt(order, 'landing_site', 4096), warnings, 'landing_site'),
      ...(fbc !== undefined && { fbc }),
      ...(fbp !== undefined && { fbp }),
      ...(fingerprint !== undefined && { fingerprint }),
      ...(ipAddress !== undefined && { ipAddress }),
      ...(userAgent !== undefined && { userAgent }),
      ...(customerData && { customerData }),
      ...(products.length > 0 && { products }),
    },
    ...(presentment && { presentment }),
  };
}

/**
 * Shopify's own prices of what a refund returned, in the shop's money and the buyer's
 * (`*_set.shop_money` / `presentment_money`): the transactions' own when each has one, else
 * the refunded lines', shipping's and adjustments'. Absolute values: only their ratio, or their
 * sum when it is the money returned, is used.
 */
function shopMoneyOf(refund: Json, transactions: Json[], currency: string): ShopMoney | undefined {
  const pairs = (owners: Json[], keys: string[]) =>
    owners.flatMap((owner) => keys.map((key) => objectAt(owner, key)).filter((set): set is Json => set !== undefined));
  const own = pairs(transactions, ['amount_set']);
  const sets =
    own.length === transactions.length
      ? own
      : [
          ...pairs(itemsAt(refund, 'refund_line_items'), ['subtotal_set', 'total_tax_set']),
          ...pairs(itemsAt(refund, 'refund_shipping_lines'), ['subtotal_amount_set']),
          ...pairs(itemsAt(refund, 'order_adjustments'), ['amount_set', 'tax_amount_set']),
        ];
  let shopCurrency: string | undefined;
  let shopMinor = 0n;
  let presentmentMinor = 0n;
  for (const set of sets) {
    const shop = objectAt(set, 'shop_money');
    const buyer = objectAt(set, 'presentment_money');
    const shopCode = normalizeCurrency(textAt(shop, 'currency_code', 16) ?? '');
    const shopAmount = decimalAt(shop, 'amount');
    const buyerAmount = decimalAt(buyer, 'amount');
    if (!shopCode || !shopAmount || !buyerAmount || normalizeCurrency(textAt(buyer, 'currency_code', 16) ?? '') !== currency)
      continue;
    if (shopCurrency !== undefined && shopCode !== shopCurrency) return undefined;
    shopCurrency = shopCode;
    shopMinor += decimalToMinor(shopAmount, shopCode);
    presentmentMinor += decimalToMinor(buyerAmount, currency);
  }
  return shopCurrency && shopCurrency !== currency && presentmentMinor > 0n
    ? { currency: shopCurrency, shopMinor, presentmentMinor }
    : undefined;
}

/**
 * `refunds/create` → a refund of the money returned: the sum of its successful `refund`
 * transactions, in their currency (the buyer's), with Shopify's own prices of it in the shop's
 * money when they differ (applied in the conversion's currency: shops/record.ts). A refund that
 * only restocks items returns none: nothing to record, undefined. The mode is the
 * transactions' (`test: true` from Shopify's test gateway).
 */
export function mapShopifyRefund(payload: unknown, warnings: Warnings, now: number): MappedRefund | undefined {
  if (!isObject(payload)) throw unmappable('id', 'The payload is not a Shopify refund object');
  const refundId = requireId(payload, 'id');
  const orderId = requireId(payload, 'order_id');
  const transactions = itemsAt(payload, 'transactions').filter(
    (t) => textAt(t, 'kind') === 'refund' && (textAt(t, 'status') ?? 'success') === 'success',
  );
  if (transactions.length === 0) return undefined;
  let currency: string | undefined;
  const amounts: Decimal[] = [];
  for (const [i, transaction] of transactions.entries()) {
    const path = `transactions[${i}]`;
    const own = requireCurrency(transaction, 'currency', `${path}.currency`);
    if (currency !== undefined && own !== currency) {
      throw unmappable(`${path}.currency`, 'The refund’s transactions are in several currencies', 'invalid_format');
    }
    currency = own;
    requireAmount(transaction, 'amount', own, `${path}.amount`);
    amounts.push(decimalAt(transaction, 'amount') as Decimal);
  }
  if (currency === undefined) return undefined;
  // Exact: a sum of the decimals as written, in minor units.
  const totalMinor = amounts.reduce((sum, amount) => sum + decimalToMinor(amount, currency), 0n);
  if (totalMinor === 0n) return undefined;
  const timestamp = timeAt(payload, 'processed_at', warnings, now) ?? timeAt(payload, 'created_at', warnings, now);
  const note = textAt(payload, 'note', 500);
  const shopMoney = shopMoneyOf(payload, transactions, currency);
  return {
    livemode: !transactions.some((t) => t.test === true),
    refund: {
      orderId,
      refundId,
      amount: fromMinorUnits(Number(totalMinor), currency),
      currency,
      ...(timestamp !== undefined && { timestamp }),
      ...(note !== undefined && { reason: note }),
    },
    ...(shopMoney && { shopMoney }),
  };
}
