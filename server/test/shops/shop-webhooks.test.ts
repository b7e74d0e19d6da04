import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { LOG_REDACT } from '../../src/observability.js';
import { call, clickBody, createTestContext, expectError, makeStore, type TestContext } from '../helpers.js';
import { shopifyOrderJson, shopifyRefundJson, sign, wooOrder } from './payloads.js';

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const SHOPIFY_SECRET = 'shpss_0123456789abcdef0123456789abcdef';
const WOO_SECRET = 'woo-secret with spaces & symbols!';

let ctx: TestContext;
let storeId: string;
let seq = 0;

beforeAll(async () => {
  ctx = await createTestContext();
  storeId = await makeStore(ctx.app, ctx.a.live, { shopifyWebhookSecret: SHOPIFY_SECRET, woocommerceWebhookSecret: WOO_SECRET });
});
afterAll(() => ctx.close());

function shopify(
  raw: string,
  topic: string,
  options: { secret?: string; signature?: string | null; id?: string; store?: string } = {},
) {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-shopify-topic': topic,
    'x-shopify-webhook-id': options.id ?? `b54557e4-bdd9-4b37-8a5f-${++seq}`,
    'x-shopify-shop-domain': 'acme.myshopify.com',
    'x-shopify-api-version': '2025-10',
  };
  const signature = options.signature === undefined ? sign(raw, options.secret ?? SHOPIFY_SECRET) : options.signature;
  if (signature !== null) headers['x-shopify-hmac-sha256'] = signature;
  return call(ctx.app, 'POST', `/v1/webhooks/shopify/${options.store ?? storeId}`, { rawBody: raw, headers });
}

function woo(body: unknown, options: { topic?: string; secret?: string; delivery?: string } = {}) {
  const raw = JSON.stringify(body);
  return call(ctx.app, 'POST', `/v1/webhooks/woocommerce/${storeId}`, {
    rawBody: raw,
    headers: {
      'content-type': 'application/json',
      'x-wc-webhook-source': 'https://shop.example.com/',
      'x-wc-webhook-topic': options.topic ?? 'order.updated',
      'x-wc-webhook-resource': 'order',
      'x-wc-webhook-event': 'updated',
      'x-wc-webhook-id': '12',
      'x-wc-webhook-delivery-id': options.delivery ?? `d${++seq}`,
      'x-wc-webhook-signature': sign(raw, options.secret ?? WOO_SECRET),
    },
  });
}

const conversions = async (key = ctx.a.live) =>
  (await call(ctx.app, 'GET', `/v1/conversions?storeId=${storeId}&limit=100`, { key })).body.data.conversions as Array<
    Record<string, unknown>
  >;

describe('stores: webhook secrets are write-only', () => {
  it('shows only that they are configured, and PATCH null clears them', async () => {
    const id = await makeStore(ctx.app, ctx.a.live, { shopifyWebhookSecret: 'a-secret' });
    const shown = (await call(ctx.app, 'GET', `/v1/stores/${id}`, { key: ctx.a.live })).body.data;
    expect(shown).toMatchObject({ shopifyWebhookConfigured: true, woocommerceWebhookConfigured: false });
    expect(JSON.stringify(shown)).not.toContain('a-secret');
    const row = await ctx.database.read.selectFrom('stores').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.shopify_webhook_secret).toMatch(/^wtenc1:/);
    const cleared = await call(ctx.app, 'PATCH', `/v1/stores/${id}`, { key: ctx.a.live, body: { shopifyWebhookSecret: null } });
    expect(cleared.body.data.shopifyWebhookConfigured).toBe(false);
  });
});

describe('POST /v1/webhooks/shopify/:storeId', () => {
  it('orders/paid → an attributed Purchase with the exact order id, hashed customer data, products', async () => {
    const fbclid = `IwAR_shopify_${Date.now()}`;
    expect(
      (await call(ctx.app, 'POST', '/v1/track/click', { key: ctx.a.live, body: clickBody(storeId, { fbclid }) })).status,
    ).toBe(200);
    const orderId = '820982911946154508';
    const res = await shopify(shopifyOrderJson({ id: orderId, fbclid }), 'orders/paid');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({ received: true, duplicate: false, topic: 'orders/paid', livemode: true });
    expect(res.body.data.conversion).toMatchObject({ attributed: true, duplicate: false });
    const item = (await conversions()).find((c) => c.conversionId === res.body.data.conversion.conversionId);
    expect(item).toMatchObject({ orderId, eventType: 'Purchase', eventValue: 199.65, currency: 'USD', attributed: true });
    expect(item?.attributedTo).toMatchObject({ fbclid, confidenceScore: 100 });
    expect(((item?.products ?? []) as Array<{ productId: string }>).map((p) => p.productId)).toEqual([
      '632910392',
      '9007199254740993123',
    ]);
    // Raw PII is never stored: only hashes.
    const row = await ctx.database.read
      .selectFrom('conversions')
      .selectAll()
      .where('id', '=', res.body.data.conversion.conversionId)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toMatch(/jon@example\.com|Jon@Example|Snow|5551234567|Ottawa/i);
    expect(row.email_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.ip_address).toBe('203.0.113.7');
    expect(row.user_agent).toContain('iPhone');
  });

  it('the same order from the merchant’s backend, and a redelivery, are one conversion', async () => {
    const orderId = '9007199254740993001'; // 2^53 + 1001: a double would round it
    const raw = shopifyOrderJson({ id: orderId });
    const first = await shopify(raw, 'orders/paid', { id: 'delivery-one' });
    expect(first.status).toBe(200);
    const replay = await shopify(raw, 'orders/paid', { id: 'delivery-one' });
    expect(replay.body.data).toMatchObject({ duplicate: true, conversion: first.body.data.conversion });
    const other = await shopify(shopifyOrderJson({ id: orderId }), 'orders/paid');
    expect(other.body.data.conversion).toMatchObject({ conversionId: first.body.data.conversion.conversionId, duplicate: true });
    const backend = await call(ctx.app, 'POST', '/v1/track/conversion', {
      key: ctx.a.live,
      body: { storeId, eventType: 'Purchase', orderId, eventValue: 199.65, currency: 'USD' },
    });
    expect(backend.body.data).toMatchObject({ conversionId: first.body.data.conversion.conversionId, duplicate: true });
    expect((await conversions()).filter((c) => c.orderId === orderId)).toHaveLength(1);
  });

  it('test: true orders are test mode, never live', async () => {
    const res = await shopify(shopifyOrderJson({ id: '5000000000001', test: true }), 'orders/paid');
    expect(res.body.data.livemode).toBe(false);
    expect((await conversions(ctx.a.test)).some((c) => c.orderId === '5000000000001')).toBe(true);
    expect((await conversions()).some((c) => c.orderId === '5000000000001')).toBe(false);
  });

  it('refunds/create → a refund of the transactions’ sum; a redelivery and an unknown order record nothing twice', async () => {
    const orderId = '5000000000002';
    const paid = await shopify(shopifyOrderJson({ id: orderId }), 'orders/paid');
    const refund = await shopify(shopifyRefundJson({ id: '890088186047892319', orderId, amount: '59.00' }), 'refunds/create', {
      id: 'refund-delivery',
    });
    expect(refund.status, JSON.stringify(refund.body)).toBe(200);
    expect(refund.body.data.refunds).toEqual([
      {
        refundId: '890088186047892319',
        conversionId: paid.body.data.conversion.conversionId,
        amount: 59,
        currency: 'USD',
        duplicate: false,
      },
    ]);
    // The same event again (another webhook id): the first answer. The same refund in another body: its first result.
    const again = await shopify(shopifyRefundJson({ id: '890088186047892319', orderId, amount: '59.00' }), 'refunds/create');
    expect(again.body.data).toEqual({ ...refund.body.data, duplicate: true });
    const resent = shopifyRefundJson({ id: '890088186047892319', orderId, amount: '59.00' }).replace(
      'Things were damaged',
      'Damaged',
    );
    expect((await shopify(resent, 'refunds/create')).body.data.refunds[0]).toMatchObject({ duplicate: true });
    const item = (await conversions()).find((c) => c.orderId === orderId);
    expect(item?.refundedTotal).toBe(59);
    const unknown = await shopify(shopifyRefundJson({ id: '77', orderId: '123456789' }), 'refunds/create');
    expect(unknown.body.data.refunds).toEqual([{ refundId: '77', skipped: 'order_not_recorded' }]);
    const restockOnly = await shopify(shopifyRefundJson({ id: '78', orderId, kind: 'sale' }), 'refunds/create');
    expect(restockOnly.body.data.ignored).toBe('no_money_refunded');
  });

  it('signature edge cases → 401 and nothing stored', async () => {
    const orderId = '5000000000003';
    const raw = shopifyOrderJson({ id: orderId });
    const good = sign(raw, SHOPIFY_SECRET);
    const bad = [
      { signature: null, reason: 'missing_signature' },
      { signature: '', reason: 'missing_signature' },
      { signature: sign(raw, 'another-secret'), reason: 'invalid_signature' },
      { signature: sign(raw, WOO_SECRET), reason: 'invalid_signature' }, // the other platform's secret
      { signature: `${good[0] === 'A' ? 'B' : 'A'}${good.slice(1)}`, reason: 'invalid_signature' },
      // Same bytes, but the unused low bits of the last character set: not the canonical encoding.
      { signature: `${good.slice(0, 42)}${B64[B64.indexOf(good[42] as string) ^ 1]}=`, reason: 'invalid_signature' },
      { signature: good.slice(0, 20), reason: 'invalid_signature' },
      { signature: Buffer.from(good, 'base64').toString('hex'), reason: 'invalid_signature' },
      { signature: `${good}${good}`, reason: 'invalid_signature' },
    ];
    for (const { signature, reason } of bad) {
      const error = expectError(await shopify(raw, 'orders/paid', { signature }), 401, 'unauthorized');
      expect(error.details).toMatchObject({ field: 'X-Shopify-Hmac-Sha256', reason });
    }
    // The body changed after signing (one byte).
    expectError(await shopify(raw.replace('199.65', '199.66'), 'orders/paid', { signature: good }), 401, 'unauthorized');
    // Unknown store, another store, a store without the secret: the same 401.
    const bare = await makeStore(ctx.app, ctx.a.live);
    for (const store of ['st_unknown', bare]) expectError(await shopify(raw, 'orders/paid', { store }), 401, 'unauthorized');
    expect((await conversions()).some((c) => c.orderId === orderId)).toBe(false);
    const deliveries = await ctx.database.read.selectFrom('shop_webhook_deliveries').selectAll().execute();
    expect(deliveries.some((d) => d.delivery_id.includes(`:${orderId}:`))).toBe(false);
  });

  it('an unknown topic → 200 ignored; an unmappable payload → 422 naming the field; bad JSON → 400; huge → 413', async () => {
    const ignored = await shopify('{"id":1}', 'customers/create');
    expect(ignored.body.data).toMatchObject({ ignored: 'unknown_topic', topic: 'customers/create' });
    const noTotal = shopifyOrderJson({ id: '5000000000004' }).replace(/"total_price": "[^"]*",/, '');
    const error = expectError(await shopify(noTotal, 'orders/paid'), 422, 'unprocessable_payload');
    expect(error.details).toMatchObject({ field: 'total_price', reason: 'required_field_missing' });
    const noId = expectError(
      await shopify('{"total_price":"1.00","currency":"USD"}', 'orders/paid'),
      422,
      'unprocessable_payload',
    );
    expect(noId.details?.field).toBe('id');
    const badCurrency = shopifyOrderJson({ id: '5000000000005' }).replace('"currency": "USD"', '"currency": "XYZ"');
    expect(expectError(await shopify(badCurrency, 'orders/paid'), 422, 'unprocessable_payload').details).toMatchObject({
      field: 'currency',
    });
    const refundNoOrder = expectError(
      await shopify('{"id": 5, "transactions": []}', 'refunds/create'),
      422,
      'unprocessable_payload',
    );
    expect(refundNoOrder.details?.field).toBe('order_id');
    expectError(await shopify('{"id": 5,', 'orders/paid'), 400, 'invalid_request');
    const huge = JSON.stringify({ id: 1, padding: 'x'.repeat(1024 * 1024) });
    expectError(await shopify(huge, 'orders/paid'), 413, 'payload_too_large');
  });
});

describe('POST /v1/webhooks/woocommerce/:storeId', () => {
  it('answers the unsigned ping WooCommerce sends when a webhook is saved', async () => {
    const res = await call(ctx.app, 'POST', `/v1/webhooks/woocommerce/${storeId}`, {
      rawBody: 'webhook_id=12',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ ignored: 'ping' });
  });

  it('pending → ignored; processing → a Purchase; completed → the same one; refunds → refunds; refunded → the rest', async () => {
    const id = 7000 + seq;
    expect((await woo(wooOrder({ id, status: 'pending' }))).body.data.ignored).toBe('not_paid');
    const paid = await woo(wooOrder({ id, status: 'processing' }), { topic: 'order.created' });
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    expect(paid.body.data.conversion).toMatchObject({ duplicate: false });
    const item = (await conversions()).find((c) => c.orderId === String(id));
    expect(item).toMatchObject({ eventValue: 29.35, currency: 'EUR' });
    expect(((item?.products ?? []) as Array<{ productId: string }>).map((p) => p.productId)).toEqual(['93', 'SYI-BLK']);
    const completed = await woo(wooOrder({ id, status: 'completed' }));
    expect(completed.body.data.conversion).toMatchObject({
      conversionId: paid.body.data.conversion.conversionId,
      duplicate: true,
    });
    const refunds = [{ id: 731, reason: 'Too big', total: '-10.00' }];
    const partial = await woo(wooOrder({ id, status: 'completed', refunds }));
    expect(partial.body.data.refunds).toEqual([
      { refundId: '731', conversionId: paid.body.data.conversion.conversionId, amount: 10, currency: 'EUR', duplicate: false },
    ]);
    const full = await woo(wooOrder({ id, status: 'refunded', refunds: [{ id: 732, reason: '', total: '-19.35' }, ...refunds] }));
    expect(full.body.data.refunds).toEqual([
      expect.objectContaining({ refundId: '731', duplicate: true }),
      expect.objectContaining({ refundId: '732', amount: 19.35, duplicate: false }),
      { refundId: `${id}-refunded`, skipped: 'nothing_left' },
    ]);
    expect((await conversions()).find((c) => c.orderId === String(id))?.refundedTotal).toBe(29.35);
  });

  it('dedups a redelivered event; a bad signature is 401; an unknown topic is ignored', async () => {
    const body = wooOrder({ id: 8001 });
    const first = await woo(body, { delivery: 'wc-delivery-1' });
    const again = await woo(body, { delivery: 'wc-delivery-1' });
    expect(again.body.data).toEqual({ ...first.body.data, duplicate: true });
    expectError(await woo(wooOrder({ id: 8002 }), { secret: SHOPIFY_SECRET }), 401, 'unauthorized');
    expect((await conversions()).some((c) => c.orderId === '8002')).toBe(false);
    expect((await woo({ id: 3 }, { topic: 'product.updated' })).body.data.ignored).toBe('unknown_topic');
    const error = expectError(await woo(wooOrder({ id: 8003, total: 'free' })), 422, 'unprocessable_payload');
    expect(error.details).toMatchObject({ field: 'total' });
  });
});

describe('logs', () => {
  it('a refused delivery is one log line, and no delivery logs the payload', async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const app = await buildApp({
      config: ctx.config,
      database: ctx.database,
      logger: { level: 'trace', redact: LOG_REDACT, stream },
    });
    try {
      const raw = shopifyOrderJson({ id: '5000000000099' });
      const headers = { 'content-type': 'application/json', 'x-shopify-topic': 'orders/paid' };
      const refused = await call(app, 'POST', `/v1/webhooks/shopify/${storeId}`, {
        rawBody: raw,
        headers: { ...headers, 'x-shopify-hmac-sha256': sign(raw, 'wrong') },
      });
      expect(refused.status).toBe(401);
      const mine = lines.filter((l) => l.includes(refused.body.meta.requestId));
      expect(mine).toHaveLength(1);
      expect(JSON.parse(mine[0] as string)).toMatchObject({
        status: 401,
        code: 'unauthorized',
        route: '/v1/webhooks/shopify/:storeId',
      });
      const accepted = await call(app, 'POST', `/v1/webhooks/shopify/${storeId}`, {
        rawBody: raw,
        headers: { ...headers, 'x-shopify-hmac-sha256': sign(raw, SHOPIFY_SECRET) },
      });
      expect(accepted.status).toBe(200);
      expect(lines.join('')).not.toMatch(/example\.com|Snow|5551234567|203\.0\.113\.7|5000000000099|hmac/i);
    } finally {
      await app.close();
    }
  });
});
