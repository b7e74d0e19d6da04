import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import type { FuzzCase } from './requests.js';

/**
 * The shop webhook operations (api.md §9) take no key: a signature over the raw body with the
 * store's secret authenticates them, and what they accept depends on the topic header and the
 * shop's payload, which no JSON Schema of the document states. So their generated requests are
 * judged on the contract's answers (a declared status, the envelope, a code of the enum, never
 * a 5xx), not on acceptance; and most are signed with the fixture store's secret, half of those
 * with a realistic order or refund whose fields are replaced by fuzz values, so that fuzzing
 * reaches the mappers behind the signature.
 */
export const WEBHOOK_SECRET = 'fuzz-webhook-secret';

export const isWebhook = (path: string) => /^\/v1\/webhooks\/(?:shopify|woocommerce)\//.test(path);

const SHOPIFY_TOPICS = ['orders/paid', 'refunds/create', 'orders/create', '', 'ORDERS/PAID'];
const WOO_TOPICS = ['order.created', 'order.updated', 'product.updated', ''];

function realistic(shopify: boolean, topic: string): Record<string, unknown> {
  if (shopify && topic === 'refunds/create') {
    return {
      id: 890088186047892319n,
      order_id: 820982911946154508n,
      transactions: [{ kind: 'refund', status: 'success', amount: '1.00', currency: 'USD', test: false }],
    };
  }
  if (shopify) {
    return {
      id: 820982911946154508n,
      total_price: '19.99',
      currency: 'USD',
      processed_at: new Date().toISOString(),
      landing_site: '/?fbclid=IwAR_fuzz',
      client_details: { browser_ip: '203.0.113.9', user_agent: 'Mozilla/5.0' },
      line_items: [{ product_id: 632910392, price: '19.99', quantity: 1, title: 'Tent' }],
      billing_address: { first_name: 'Jon', country_code: 'CA', zip: 'K2P 1L4' },
      test: false,
    };
  }
  return {
    id: 727,
    status: 'processing',
    currency: 'EUR',
    total: '29.35',
    date_paid_gmt: new Date().toISOString().slice(0, 19),
    billing: { email: 'john.doe@example.com', phone: '(555) 555-5555', country: 'US' },
    line_items: [{ product_id: 93, variation_id: 0, quantity: 2, price: 3, name: 'Woo' }],
    refunds: [{ id: 731, total: '-1.00' }],
    meta_data: [{ key: '_wc_order_attribution_session_entry', value: 'https://shop.example.com/?gclid=abc' }],
  };
}

/** JSON text with bigint ids written as their digits (as the shops send them). */
const toJson = (value: unknown) =>
  JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? `__big${v}__` : v)).replace(/"__big(\d+)__"/g, '$1');

/** How a generated webhook request is changed: signed or not, which topic, a realistic body or not. */
export const webhookPlan = fc.record({
  signed: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  topic: fc.nat(),
  realistic: fc.boolean(),
  field: fc.nat(),
  value: fc.jsonValue({ maxDepth: 2 }),
});

export function asWebhook(c: FuzzCase, plan: typeof webhookPlan extends fc.Arbitrary<infer P> ? P : never): FuzzCase {
  const shopify = c.url.includes('/webhooks/shopify/');
  const topics = shopify ? SHOPIFY_TOPICS : WOO_TOPICS;
  const topic = topics[plan.topic % topics.length] as string;
  const headers = { ...c.headers, [shopify ? 'x-shopify-topic' : 'x-wc-webhook-topic']: topic };
  let payload = c.payload;
  if (plan.realistic && c.mutations.includes('none')) {
    const body = realistic(shopify, topic);
    const keys = Object.keys(body);
    body[keys[plan.field % keys.length] as string] = plan.value;
    payload = toJson(body);
  }
  if (plan.signed && payload !== undefined) {
    headers[shopify ? 'x-shopify-hmac-sha256' : 'x-wc-webhook-signature'] = createHmac('sha256', WEBHOOK_SECRET)
      .update(payload)
      .digest('base64');
  }
  // The key is not what authenticates a webhook: another account's key on this store is no tenancy breach.
  const signed: FuzzCase = { ...c, headers, payload, expectAccepted: false, expectNotFound: false, foreignId: false };
  Object.defineProperty(signed, fc.toStringMethod, {
    value: () =>
      `\n  ${c.method} ${c.url} (webhook, ${plan.signed ? 'signed' : 'unsigned'}, topic "${topic}")\n  payload: ${String(payload).slice(0, 500)}`,
    enumerable: false,
  });
  return signed;
}

/** A delivery of `raw` signed with the fixture secret on the operation's main topic (openapi-agreement.test.ts). */
export function signedWebhook(url: string, raw: string) {
  const shopify = url.includes('/webhooks/shopify/');
  const signature = createHmac('sha256', WEBHOOK_SECRET).update(raw).digest('base64');
  const headers: Record<string, string> = shopify
    ? { 'content-type': 'application/json', 'x-shopify-topic': 'orders/paid', 'x-shopify-hmac-sha256': signature }
    : { 'content-type': 'application/json', 'x-wc-webhook-topic': 'order.updated', 'x-wc-webhook-signature': signature };
  return { rawBody: raw, headers };
}
