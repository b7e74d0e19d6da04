// api.md §9 shop webhooks (docs/api.md "Shop webhooks in"): what identifies a delivery (never the
// shop's delivery-id header alone), a delivery recorded whole (a refund that cannot apply is
// skipped with its reason, never a 422 after the order was written), and Shopify's orders/create.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { LOG_REDACT } from '../../src/observability.js';
import { createTestContext, makeStore, type TestContext } from '../helpers.js';
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

describe('deduplication: by the event, never by the delivery-id header alone', () => {
  it('WooCommerce: a paid order after a pending one under the same X-WC-Webhook-Delivery-ID becomes a Purchase', async () => {
    // WooCommerce builds the header from the webhook id and the current second: two updates of
    // one order within a second share it.
    const id = nextOrderId();
    const delivery = `12-${Math.floor(Date.now() / 1000)}`;
    const pending = await shop.woo(wooOrder({ id, status: 'pending' }), { delivery });
    expect(pending.body.data).toMatchObject({ duplicate: false, ignored: 'not_paid' });
    const paid = await shop.woo(wooOrder({ id, status: 'processing' }), { delivery });
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    expect(paid.body.data).toMatchObject({ duplicate: false, conversion: { duplicate: false } });
    expect(await shop.conversionsOf(String(id))).toHaveLength(1);
  });

  it('WooCommerce: another order under the same delivery id is recorded too', async () => {
    const [first, second] = [nextOrderId(), nextOrderId()];
    const delivery = `12-${Math.floor(Date.now() / 1000)}-b`;
    expect((await shop.woo(wooOrder({ id: first }), { delivery })).body.data.conversion).toBeDefined();
    const other = await shop.woo(wooOrder({ id: second }), { delivery });
    expect(other.body.data).toMatchObject({ duplicate: false, conversion: { duplicate: false } });
    expect(await shop.conversionsOf(String(second))).toHaveLength(1);
  });

  it('the same event delivered again (any delivery id) is answered as the first time, duplicate: true', async () => {
    const body = wooOrder({ id: nextOrderId() });
    const first = await shop.woo(body);
    const again = await shop.woo(body);
    expect(again.body.data).toEqual({ ...first.body.data, duplicate: true });
  });

  it('Shopify: a webhook id seen under another topic does not answer for this one', async () => {
    const orderId = String(6_100_000_000_000 + nextOrderId());
    const id = 'b54557e4-reused';
    const paid = await shop.shopify(shopifyOrderJson({ id: orderId }), 'orders/paid', { id });
    expect(paid.body.data.conversion).toBeDefined();
    const refund = await shop.shopify(shopifyRefundJson({ id: `${orderId}1`, orderId, amount: '10.00' }), 'refunds/create', {
      id,
    });
    expect(refund.body.data).toMatchObject({ duplicate: false, topic: 'refunds/create' });
    expect(refund.body.data.refunds).toEqual([
      expect.objectContaining({ refundId: `${orderId}1`, amount: 10, duplicate: false }),
    ]);
  });
});

describe('a delivery is recorded whole: refunds that cannot apply are skipped with a reason', () => {
  it('an over-refund in a WooCommerce order: the order and the refunds that fit are recorded, 200', async () => {
    const id = nextOrderId();
    const refunds = [
      { id: 902, reason: 'Too much', total: '-25.00' },
      { id: 901, reason: 'Too big', total: '-10.00' },
    ];
    const res = await shop.woo(wooOrder({ id, status: 'completed', refunds }));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [item] = await shop.conversionsOf(String(id));
    expect(res.body.data.conversion).toMatchObject({ duplicate: false });
    expect(res.body.data.refunds).toEqual([
      expect.objectContaining({ refundId: '901', amount: 10, duplicate: false }),
      { refundId: '902', skipped: 'over_remaining', remaining: 19.35 },
    ]);
    expect(item).toMatchObject({ eventValue: 29.35, refundedTotal: 10 });
    // The order's next update: the over-refund is still skipped, nothing applied twice.
    const again = await shop.woo(wooOrder({ id, status: 'completed', refunds, customer_note: 'later' }));
    expect(again.body.data.refunds).toEqual([
      expect.objectContaining({ refundId: '901', duplicate: true }),
      { refundId: '902', skipped: 'over_remaining', remaining: 19.35 },
    ]);
    expect((await shop.conversionsOf(String(id)))[0]?.refundedTotal).toBe(10);
  });

  it('a refund time the domain would refuse does not fail the delivery after the order was written', async () => {
    const id = nextOrderId();
    const future = new Date(Date.now() + 3_600_000).toISOString().slice(0, 19);
    const res = await shop.woo(wooOrder({ id, date_modified_gmt: future, refunds: [{ id: 911, reason: '', total: '-5.00' }] }));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.refunds).toEqual([expect.objectContaining({ refundId: '911', amount: 5 })]);
    expect(res.body.data.warnings).toEqual(
      expect.arrayContaining([expect.objectContaining({ field: 'date_modified_gmt', reason: 'out_of_range' })]),
    );
  });

  it('each skipped refund is one warn line: store, order, refund, reason — no customer data', async () => {
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
      logger: { level: 'info', redact: LOG_REDACT, stream },
    });
    try {
      const id = nextOrderId();
      const res = await shopDeliveries(ctx, storeId, app).woo(
        wooOrder({ id, status: 'completed', refunds: [{ id: 921, reason: 'x', total: '-99.00' }] }),
      );
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const warned = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.level === 40);
      expect(warned).toEqual([
        expect.objectContaining({ storeId, orderId: String(id), refundId: '921', reason: 'over_remaining' }),
      ]);
      // The phone as sent, formatted or as digits: a bare `555` also matched a random request id (req_…5551…).
      expect(lines.join('')).not.toMatch(/john\.doe|Doe|555-5555|\(555\)|5555555|198\.51\.100\.23|San Francisco/i);
    } finally {
      await app.close();
    }
  });
});

describe('Shopify orders/create', () => {
  it('an unpaid order → 200 ignored: not_paid, nothing recorded', async () => {
    const orderId = String(6_200_000_000_000 + nextOrderId());
    const res = await shop.shopify(shopifyOrderJson({ id: orderId, financialStatus: 'pending' }), 'orders/create');
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ topic: 'orders/create', ignored: 'not_paid' });
    expect(await shop.conversionsOf(orderId)).toHaveLength(0);
  });

  it('a paid order is the Purchase; orders/paid of it is the same one, whichever comes first', async () => {
    const orderId = String(6_300_000_000_000 + nextOrderId());
    const created = await shop.shopify(shopifyOrderJson({ id: orderId }), 'orders/create');
    expect(created.body.data.conversion).toMatchObject({ duplicate: false });
    const paid = await shop.shopify(shopifyOrderJson({ id: orderId }), 'orders/paid');
    expect(paid.body.data.conversion).toEqual({ ...created.body.data.conversion, duplicate: true });
    const later = String(6_400_000_000_000 + nextOrderId());
    expect((await shop.shopify(shopifyOrderJson({ id: later }), 'orders/paid')).body.data.conversion.duplicate).toBe(false);
    expect((await shop.shopify(shopifyOrderJson({ id: later }), 'orders/create')).body.data.conversion.duplicate).toBe(true);
    expect(await shop.conversionsOf(orderId)).toHaveLength(1);
    expect(await shop.conversionsOf(later)).toHaveLength(1);
  });
});
