import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublishableKey } from '../../src/accounts/publishable.js';
import { call, clickBody, createTestContext, expectError, makeStore, type TestContext } from '../helpers.js';
import { SHOPIFY_SECRET, shopDeliveries } from './harness.js';
import { shopifyOrderJson } from './payloads.js';

// The Shopify checkout pixel's event (POST /v1/track/checkout) and the order webhook for one
// order are one conversion whichever arrives first (api.md §13 "Shopify checkout"; docs/api.md
// "Shopify checkout pixel"): the webhook's money, the pixel's browser evidence, the stronger
// evidence's attribution, the rollups counted once.

const SHOP = 'https://shop.acme.test';
const UA =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

let ctx: TestContext;
let seq = 0;

beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

interface Shop {
  storeId: string;
  key: string;
  hooks: ReturnType<typeof shopDeliveries>;
  /** The buyer's click (campaign_a) and a stranger's on the same IP and user agent, later (campaign_b). */
  buyer: { clickId: string; fbclid: string; visitorId: string };
  stranger: { clickId: string };
}

/** A store with its webhook secret, a publishable key, and two clicks an IP-only view cannot tell apart. */
async function shop(): Promise<Shop> {
  const storeId = await makeStore(ctx.app, ctx.a.live, { shopifyWebhookSecret: SHOPIFY_SECRET });
  const { key } = await createPublishableKey(ctx.database, ctx.a.accountId, { storeId, mode: 'live' });
  const now = Date.now();
  const click = async (fbclid: string, campaign: string, visitorId: string, minutesAgo: number) => {
    const res = await call(ctx.app, 'POST', '/v1/track/click', {
      key: ctx.a.live,
      body: clickBody(storeId, {
        fbclid,
        visitorId,
        landingPage: `${SHOP}/products/tent?utm_source=facebook&utm_campaign=${campaign}`,
        timestamp: new Date(now - minutesAgo * 60_000).toISOString(),
      }),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data.clickId as string;
  };
  const n = ++seq;
  const buyer = { fbclid: `IwAR_buyer_${n}`, visitorId: `wt.buyer-${n}-4f9c2a7d1e8b`, clickId: '' };
  buyer.clickId = await click(buyer.fbclid, 'campaign_a', buyer.visitorId, 120);
  const stranger = { clickId: await click(`IwAR_stranger_${n}`, 'campaign_b', `wt.stranger-${n}-9a8b7c6d`, 30) };
  return { storeId, key, hooks: shopDeliveries(ctx, storeId), buyer, stranger };
}

/** What the pixel sends for the order (packages/tag/src/shopify-pixel.ts), with the buyer's browser ids. */
function pixelBody(s: Shop, orderId: string, overrides: Record<string, unknown> = {}) {
  return {
    orderId: `gid://shopify/OrderIdentity/${orderId}`,
    eventValue: 150,
    currency: 'USD',
    eventId: orderId,
    visitorId: s.buyer.visitorId,
    fbc: `fb.1.${Date.now() - 7_200_000}.${s.buyer.fbclid}`,
    userAgent: UA,
    eventSourceUrl: `${SHOP}/checkouts/c/b6f1e2/thank-you`,
    timestamp: new Date(Date.now() - 60_000).toISOString(),
    ...overrides,
  };
}

const pixel = (s: Shop, body: Record<string, unknown>, origin = 'null') =>
  call(ctx.app, 'POST', '/v1/track/checkout', { key: s.key, body, headers: { origin } });

const webhook = (s: Shop, orderId: string) =>
  s.hooks.shopify(
    shopifyOrderJson({ id: orderId, total: '199.65', processedAt: new Date(Date.now() - 60_000).toISOString() }),
    'orders/paid',
  );

async function conversionOf(s: Shop, orderId: string) {
  const all = await s.hooks.conversionsOf(orderId);
  expect(all).toHaveLength(1);
  return all[0] as Record<string, unknown> & { conversionId: string };
}

async function metrics(s: Shop) {
  const res = await call(ctx.app, 'GET', `/v1/analytics/metrics?storeId=${s.storeId}&startDate=${day(-1)}&endDate=${day(0)}`, {
    key: ctx.a.live,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as Record<string, unknown>;
}

/** Attributed revenue per campaign by a model, as the breakdown credits it. */
async function byCampaign(s: Shop, model: string) {
  const res = await call(
    ctx.app,
    'GET',
    `/v1/analytics/breakdown?storeId=${s.storeId}&startDate=${day(-1)}&endDate=${day(0)}&by=utm_campaign&model=${model}`,
    { key: ctx.a.live },
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const groups = res.body.data.groups as Array<{ value: string | null; attributedRevenue: number }>;
  return Object.fromEntries(groups.map((g) => [g.value, g.attributedRevenue]));
}

/** One conversion of 199.65 (the shop's figure), credited once, to the buyer's click. */
async function expectOneConversionToBuyer(s: Shop, orderId: string) {
  const conversion = await conversionOf(s, orderId);
  expect(conversion).toMatchObject({
    eventType: 'Purchase',
    eventValue: 199.65,
    currency: 'USD',
    attributed: true,
    attributedTo: { clickId: s.buyer.clickId, confidenceScore: 100 },
  });
  expect(await metrics(s)).toMatchObject({
    totalConversions: 1,
    totalRevenue: 199.65,
    attributedConversions: 1,
    attributedRevenue: 199.65,
  });
  for (const model of ['last_click', 'linear']) {
    const credit = await byCampaign(s, model);
    expect(credit.campaign_a, model).toBe(199.65);
    expect(credit.campaign_b ?? 0, model).toBe(0);
  }
  const row = await ctx.database.read
    .selectFrom('conversions')
    .select(['source', 'visitor_id', 'ref_fbc', 'email_hash', 'value_minor'])
    .where('id', '=', conversion.conversionId)
    .executeTakeFirstOrThrow();
  expect(row.visitor_id).toBe(s.buyer.visitorId);
  expect(row.ref_fbc).toContain(s.buyer.fbclid);
  expect(row.email_hash).toMatch(/^[0-9a-f]{64}$/);
  expect(Number(row.value_minor)).toBe(19965);
  return { conversion, row };
}

describe('Shopify checkout pixel + order webhook: one conversion per order', () => {
  it('webhook first (IP and user agent only), then the pixel: its browser ids fill in and re-attribute; the money stays', async () => {
    const s = await shop();
    const orderId = String(5_000_000_000_000 + ++seq);
    const first = await webhook(s, orderId);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.data.conversion).toMatchObject({ duplicate: false });
    const before = await conversionOf(s, orderId);
    // The IP and user agent are shared by the buyer's and a stranger's browser: not the buyer's click at 100.
    expect((before.attributedTo as { confidenceScore?: number } | undefined)?.confidenceScore ?? 0).toBeLessThan(100);

    const later = await pixel(s, pixelBody(s, orderId));
    expect(later.status, JSON.stringify(later.body)).toBe(200);
    expect(later.body.data).toMatchObject({
      conversionId: before.conversionId,
      duplicate: true,
      reattributed: true,
      attributed: true,
      attributedTo: { clickId: s.buyer.clickId, confidenceScore: 100 },
    });
    expect(later.body.data.filled).toEqual(expect.arrayContaining(['visitorId', 'fbc']));
    // The pixel's 150 is not the order's money: reported as a difference, not recorded.
    expect(later.body.data.differences).toContain('eventValue');
    const { row } = await expectOneConversionToBuyer(s, orderId);
    expect(row.source).toBeNull();

    // The same event again: nothing to add, nothing moves.
    const again = await pixel(s, pixelBody(s, orderId));
    expect(again.body.data).toMatchObject({ duplicate: true, reattributed: false, filled: [] });
    await expectOneConversionToBuyer(s, orderId);
  });

  it('pixel first (browser value), then the webhook: the shop’s money and customer replace the pixel’s, counted once', async () => {
    const s = await shop();
    const orderId = String(6_000_000_000_000 + ++seq);
    const first = await pixel(s, pixelBody(s, orderId, { orderId }));
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.data).toMatchObject({
      duplicate: false,
      reattributed: false,
      attributedTo: { clickId: s.buyer.clickId, confidenceScore: 100 },
    });
    expect(await conversionOf(s, orderId)).toMatchObject({ eventValue: 150 });
    expect(await metrics(s)).toMatchObject({ totalConversions: 1, totalRevenue: 150, attributedRevenue: 150 });

    const later = await webhook(s, orderId);
    expect(later.status, JSON.stringify(later.body)).toBe(200);
    expect(later.body.data.conversion).toMatchObject({ conversionId: first.body.data.conversionId, duplicate: true });
    expect(later.body.data.conversion.filled).toEqual(expect.arrayContaining(['eventValue', 'customerData', 'products']));
    const { row } = await expectOneConversionToBuyer(s, orderId);
    expect(row.source).toBe('pixel_confirmed');

    // The webhook redelivered with a new id (same bytes are a known delivery): confirmed once, nothing moves.
    const again = await webhook(s, orderId);
    expect(again.status).toBe(200);
    await expectOneConversionToBuyer(s, orderId);
  });

  it('both at once: one conversion, the webhook’s money, the buyer’s click, counted once', async () => {
    const s = await shop();
    const orders = Array.from({ length: 4 }, () => String(7_000_000_000_000 + ++seq));
    for (const orderId of orders) {
      const [fromPixel, fromWebhook] = await Promise.all([pixel(s, pixelBody(s, orderId)), webhook(s, orderId)]);
      expect(fromPixel.status, JSON.stringify(fromPixel.body)).toBe(200);
      expect(fromWebhook.status, JSON.stringify(fromWebhook.body)).toBe(200);
      expect([fromPixel.body.data.duplicate, fromWebhook.body.data.conversion.duplicate].sort()).toEqual([false, true]);
      expect(fromPixel.body.data.conversionId).toBe(fromWebhook.body.data.conversion.conversionId);
      const conversion = await conversionOf(s, orderId);
      expect(conversion).toMatchObject({ eventValue: 199.65, attributedTo: { clickId: s.buyer.clickId, confidenceScore: 100 } });
    }
    expect(await metrics(s)).toMatchObject({
      totalConversions: orders.length,
      totalRevenue: Math.round(199.65 * orders.length * 100) / 100,
      attributedRevenue: Math.round(199.65 * orders.length * 100) / 100,
    });
  });
});

describe('POST /v1/track/checkout: who may send it', () => {
  let s: Shop;
  beforeAll(async () => {
    s = await shop();
  });

  it('answers the sandbox’s preflight (Origin: null) and the store’s own origin', async () => {
    for (const origin of ['null', SHOP]) {
      const res = await ctx.app.inject({
        method: 'OPTIONS',
        url: '/v1/track/checkout',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization,content-type',
        },
      });
      expect(res.statusCode).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBe(origin);
      expect(String(res.headers['access-control-allow-headers'])).toContain('authorization');
    }
  });

  it('from the store’s origin, or from the sandbox with a checkout page on the store’s domain', async () => {
    const fromShop = await pixel(s, pixelBody(s, String(8_000_000_000_000 + ++seq)), SHOP);
    expect(fromShop.status, JSON.stringify(fromShop.body)).toBe(200);
    expect(fromShop.headers['access-control-allow-origin']).toBe(SHOP);
    const fromSandbox = await pixel(s, pixelBody(s, String(8_000_000_000_000 + ++seq)));
    expect(fromSandbox.status, JSON.stringify(fromSandbox.body)).toBe(200);
    expect(fromSandbox.headers['access-control-allow-origin']).toBe('null');
  });

  it('refuses a sandboxed event whose page is elsewhere, another origin, and Origin: null on the click endpoint', async () => {
    const orderId = String(8_100_000_000_000 + ++seq);
    for (const page of ['https://evil.example/checkouts/c/1/thank-you', undefined]) {
      const body = pixelBody(s, orderId, { eventSourceUrl: page });
      const error = expectError(await pixel(s, body), 403, 'forbidden');
      expect(error.details).toMatchObject({ field: 'eventSourceUrl', reason: 'origin_not_allowed' });
    }
    expectError(await pixel(s, pixelBody(s, orderId), 'https://evil.example'), 403, 'forbidden');
    const click = await call(ctx.app, 'POST', '/v1/track/click', {
      key: s.key,
      body: { fbclid: 'IwAR_sandboxed', landingPage: `${SHOP}/` },
      headers: { origin: 'null' },
    });
    expect(expectError(click, 403, 'forbidden').details).toMatchObject({ reason: 'origin_not_allowed' });
    expect(await s.hooks.conversionsOf(orderId)).toHaveLength(0);
  });

  it('refuses what could never meet its order, and other stores', async () => {
    for (const orderId of ['#1001', 'gid://shopify/Checkout/123', 'abc']) {
      const error = expectError(await pixel(s, pixelBody(s, '1', { orderId })), 400, 'invalid_request');
      expect(error.details).toMatchObject({ field: 'orderId', reason: 'invalid_format' });
    }
    const other = await makeStore(ctx.app, ctx.a.live);
    const error = expectError(await pixel(s, pixelBody(s, '12345', { storeId: other })), 403, 'forbidden');
    expect(error.details).toMatchObject({ field: 'storeId' });
    const missing = expectError(await pixel(s, { orderId: '12345', currency: 'USD' }), 400, 'missing_required_field');
    expect(missing.details).toMatchObject({ field: 'eventValue' });
  });

  it('a secret key may send it too (no IP from the connection then)', async () => {
    const orderId = String(8_200_000_000_000 + ++seq);
    const res = await call(ctx.app, 'POST', '/v1/track/checkout', {
      key: ctx.a.live,
      body: { ...pixelBody(s, orderId), storeId: s.storeId },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const row = await ctx.database.read
      .selectFrom('conversions')
      .select(['ip_address', 'source', 'order_id'])
      .where('id', '=', res.body.data.conversionId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ ip_address: null, source: 'pixel', order_id: orderId });
  });
});

describe('pixel first, Meta job still pending: the webhook’s money and customer reach Meta', () => {
  let meta: TestContext;
  beforeAll(async () => {
    // A failed send waits ten minutes before its retry: the job stays pending while the webhook arrives.
    meta = await createTestContext({ forwarding: { backoffBaseMs: 600_000, backoffCapMs: 600_000 } });
  });
  afterAll(() => meta?.close());

  it('re-plans the pending job with the shop’s value and hashes; the conversion is one', async () => {
    const storeId = await makeStore(meta.app, meta.a.live, {
      shopifyWebhookSecret: SHOPIFY_SECRET,
      pixelId: '123456789012345',
      capiAccessToken: 'EAAB-token-pixel',
    });
    const { key } = await createPublishableKey(meta.database, meta.a.accountId, { storeId, mode: 'live' });
    const orderId = String(9_000_000_000_000 + ++seq);
    const first = await call(meta.app, 'POST', '/v1/track/checkout', {
      key,
      headers: { origin: SHOP },
      body: { orderId, eventValue: 150, currency: 'USD', eventSourceUrl: `${SHOP}/checkouts/c/1/thank-you` },
    });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const conversionId = first.body.data.conversionId as string;
    const job = () =>
      meta.database.read
        .selectFrom('destination_jobs')
        .select(['status', 'payload', 'claimed_by', 'attempts'])
        .where('conversion_id', '=', conversionId)
        .where('destination', '=', 'meta')
        .executeTakeFirstOrThrow();
    // The dispatcher's first attempt (to a port nothing listens on) is over: pending, unclaimed, retry far off.
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const j = await job();
      if (j.status === 'pending' && j.claimed_by === null && Number(j.attempts) >= 1) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const before = await job();
    expect(before).toMatchObject({ status: 'pending', claimed_by: null });
    expect(JSON.parse(before.payload).custom_data.value).toBe(150);
    expect(JSON.parse(before.payload).user_data.em).toBeUndefined();

    const hooks = shopDeliveries(meta, storeId);
    const later = await hooks.shopify(
      shopifyOrderJson({ id: orderId, total: '199.65', processedAt: new Date(Date.now() - 60_000).toISOString() }),
      'orders/paid',
    );
    expect(later.status, JSON.stringify(later.body)).toBe(200);
    expect(later.body.data.conversion).toMatchObject({ conversionId, duplicate: true });
    const after = JSON.parse((await job()).payload);
    expect(after.custom_data.value).toBe(199.65);
    expect(after.user_data.em).toEqual([expect.stringMatching(/^[0-9a-f]{64}$/)]);
    const jobs = await meta.database.read
      .selectFrom('destination_jobs')
      .select('destination')
      .where('conversion_id', '=', conversionId)
      .execute();
    expect(jobs).toEqual([{ destination: 'meta' }]);
  });
});
