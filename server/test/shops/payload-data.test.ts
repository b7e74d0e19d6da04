// api.md §9 shop webhooks, §1 bodies and §2 amounts (docs/api.md "Shop webhooks in"): what a
// shop's payload may lack or get wrong without losing the order (optional data dropped with a
// warning), Shopify's two currencies, exact amounts within the API's range, and one JSON reader
// for the API and the webhooks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTestContext, expectError, makeStore, type TestContext } from '../helpers.js';
import { nextOrderId, SHOPIFY_SECRET, shopDeliveries, WOO_SECRET } from './harness.js';
import { shopifyOrderJson, shopifyRefundJson, wooOrder } from './payloads.js';

let ctx: TestContext;
let storeId: string;
let shop: ReturnType<typeof shopDeliveries>;

beforeAll(async () => {
  ctx = await createTestContext();
  storeId = await makeStore(ctx.app, ctx.a.live, { shopifyWebhookSecret: SHOPIFY_SECRET, woocommerceWebhookSecret: WOO_SECRET });
  shop = shopDeliveries(ctx, storeId);
});
afterAll(() => ctx.close());

const rowOf = (conversionId: string) =>
  ctx.database.read.selectFrom('conversions').selectAll().where('id', '=', conversionId).executeTakeFirstOrThrow();

describe('optional data that cannot be used is dropped with a warning, the order is recorded', () => {
  it('customer_ip_address "unknown" → the Purchase without an IP address, and a warning', async () => {
    const id = nextOrderId();
    const res = await shop.woo(wooOrder({ id, customer_ip_address: 'unknown' }));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.warnings).toEqual([
      expect.objectContaining({ field: 'customer_ip_address', reason: 'invalid_format', message: expect.any(String) }),
    ]);
    expect((await rowOf(res.body.data.conversion.conversionId)).ip_address).toBeNull();
  });

  it('a list of addresses → the first (the buyer’s, as proxies list them), with a warning', async () => {
    const id = nextOrderId();
    const res = await shop.woo(wooOrder({ id, customer_ip_address: '198.51.100.23, 10.0.0.1' }));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.warnings).toEqual([expect.objectContaining({ field: 'customer_ip_address' })]);
    expect((await rowOf(res.body.data.conversion.conversionId)).ip_address).toBe('198.51.100.23');
  });

  it('a malformed click id in the landing page is left out and said so', async () => {
    const orderId = String(7_100_000_000_000 + nextOrderId());
    const res = await shop.shopify(shopifyOrderJson({ id: orderId, fbclid: 'bad%20id%21' }), 'orders/paid');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.warnings).toEqual([expect.objectContaining({ field: 'landing_site', reason: 'invalid_format' })]);
  });

  it('a clean order has no warnings', async () => {
    const res = await shop.woo(wooOrder({ id: nextOrderId() }));
    expect(res.body.data.warnings).toBeUndefined();
  });
});

describe('Shopify orders in two currencies', () => {
  const order = (orderId: string) =>
    shopifyOrderJson({ id: orderId, currency: 'USD', total: '100.00', presentment: { currency: 'EUR', total: '92.00' } });

  it('a refund in the buyer’s currency is applied in the order’s, at Shopify’s own amounts', async () => {
    const orderId = String(7_200_000_000_000 + nextOrderId());
    const paid = await shop.shopify(order(orderId), 'orders/paid');
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    // One line: 50.00 USD in the shop's money, 46.00 EUR in the buyer's; the money returned is EUR.
    const refund = await shop.shopify(
      shopifyRefundJson({
        id: `${orderId}7`,
        orderId,
        amount: '46.00',
        currency: 'EUR',
        shopCurrency: 'USD',
        lines: [{ shop: '50.00', presentment: '46.00' }],
      }),
      'refunds/create',
    );
    expect(refund.status, JSON.stringify(refund.body)).toBe(200);
    expect(refund.body.data.refunds).toEqual([
      expect.objectContaining({
        refundId: `${orderId}7`,
        amount: 50,
        currency: 'USD',
        presentment: { amount: 46, currency: 'EUR' },
      }),
    ]);
    const [item] = await shop.conversionsOf(orderId);
    expect(item).toMatchObject({ eventValue: 100, currency: 'USD', refundedTotal: 50 });
  });

  it('a refund of money alone (no lines) is converted at the order’s own two totals', async () => {
    const orderId = String(7_300_000_000_000 + nextOrderId());
    expect((await shop.shopify(order(orderId), 'orders/paid')).status).toBe(200);
    const refund = await shop.shopify(
      shopifyRefundJson({ id: `${orderId}8`, orderId, amount: '23.00', currency: 'EUR', shopCurrency: 'USD', lines: [] }),
      'refunds/create',
    );
    expect(refund.status, JSON.stringify(refund.body)).toBe(200);
    // 23.00 EUR × 100.00 USD / 92.00 EUR
    expect(refund.body.data.refunds).toEqual([expect.objectContaining({ amount: 25, currency: 'USD' })]);
  });
});

describe('amounts: exact decimals within the API’s range', () => {
  it('a total over 1e12 → 422 naming the payload’s field; nothing stored', async () => {
    const orderId = String(7_400_000_000_000 + nextOrderId());
    const shopify = await shop.shopify(
      shopifyOrderJson({ id: orderId, currency: 'KWD', total: '9999999999999.999' }),
      'orders/paid',
    );
    expect(expectError(shopify, 422, 'unprocessable_payload').details).toMatchObject({
      field: 'total_price',
      reason: 'out_of_range',
    });
    expect(await shop.conversionsOf(orderId)).toHaveLength(0);
    const id = nextOrderId();
    const woo = await shop.woo(wooOrder({ id, total: '1000000000000.01' }));
    expect(expectError(woo, 422, 'unprocessable_payload').details).toMatchObject({ field: 'total', reason: 'out_of_range' });
    expect(await shop.conversionsOf(String(id))).toHaveLength(0);
  });

  it('a total is read as the decimal written, never through a binary double', async () => {
    const id = nextOrderId();
    // A double reads it as 999999999.9995 and rounds that up to …000.000; exactly it is …999.999.
    const res = await shop.woo(wooOrder({ id, currency: 'KWD', total: '999999999.99949999' }));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await rowOf(res.body.data.conversion.conversionId)).value_minor).toBe(999_999_999_999);
  });

  it('the API reads eventValue by the same parser: a number literal is exact too', async () => {
    const orderId = `exact-${nextOrderId()}`;
    const raw = `{"storeId":"${storeId}","eventType":"Purchase","orderId":"${orderId}","eventValue":1.00049999999999999999,"currency":"KWD"}`;
    const res = await call(ctx.app, 'POST', '/v1/track/conversion', {
      key: ctx.a.live,
      rawBody: raw,
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await rowOf(res.body.data.conversionId)).value_minor).toBe(1000);
  });
});

describe('one JSON reader for the API and the shop webhooks', () => {
  const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

  it('a signed body with a byte order mark is read like the API reads one', async () => {
    const id = nextOrderId();
    const res = await shop.woo(Buffer.concat([BOM, Buffer.from(JSON.stringify(wooOrder({ id })))]));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.conversion).toMatchObject({ duplicate: false });
    const api = await ctx.app.inject({
      method: 'POST',
      url: '/v1/track/conversion',
      headers: { authorization: `Bearer ${ctx.a.live}`, 'content-type': 'application/json' },
      payload: Buffer.concat([
        BOM,
        Buffer.from(JSON.stringify({ storeId, eventType: 'Lead', orderId: `bom-${id}`, eventValue: 1, currency: 'EUR' })),
      ]),
    });
    expect(api.statusCode).toBe(200);
  });

  it('a signed body that is not UTF-8 → 400 invalid_unicode, nothing stored; unsigned → 401 first', async () => {
    const id = nextOrderId();
    const text = JSON.stringify(wooOrder({ id, billing: { first_name: 'J\u00f6rg', email: 'j@example.com' } }));
    // Latin-1 bytes (ö is F6 alone): not UTF-8.
    const latin1 = Buffer.from(text, 'latin1');
    const refused = await shop.woo(latin1);
    expect(expectError(refused, 400, 'invalid_request').details).toMatchObject({ reason: 'invalid_unicode' });
    expect(await shop.conversionsOf(String(id))).toHaveLength(0);
    const api = await ctx.app.inject({
      method: 'POST',
      url: '/v1/track/conversion',
      headers: { authorization: `Bearer ${ctx.a.live}`, 'content-type': 'application/json' },
      payload: Buffer.from(
        JSON.stringify({ storeId, eventType: 'Lead', orderId: 'J\u00f6rg', eventValue: 1, currency: 'EUR' }),
        'latin1',
      ),
    });
    expect(api.statusCode).toBe(400);
    expect(api.json().error.details.reason).toBe('invalid_unicode');
    const unsigned = await shop.shopify(latin1, 'orders/paid', { signature: `${'A'.repeat(43)}=` });
    expectError(unsigned, 401, 'unauthorized');
  });

  it('ids above 2^53 keep every digit through both readers', async () => {
    const orderId = '9007199254740993';
    const res = await shop.shopify(shopifyOrderJson({ id: orderId }), 'orders/paid');
    expect(res.status).toBe(200);
    const [item] = await shop.conversionsOf(orderId);
    expect(item?.orderId).toBe(orderId);
  });
});
