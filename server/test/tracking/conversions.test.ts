import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINE } from '../engine.js';
import { call, clickBody, conversionBody, createTestContext, expectError, makeStore, type TestContext } from '../helpers.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const iso = (ms: number) => new Date(ms).toISOString();
const sha256 = (value: string) => createHash('sha256').update(value, 'utf8').digest('hex');

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => ctx.close());

const trackConversion = (body: unknown, key = ctx.a.live) => call(ctx.app, 'POST', '/v1/track/conversion', { key, body });

async function trackClick(storeId: string, overrides: Record<string, unknown> = {}, key = ctx.a.live) {
  const res = await call(ctx.app, 'POST', '/v1/track/click', { key, body: clickBody(storeId, overrides) });
  if (res.status !== 200) throw new Error(`click failed: ${JSON.stringify(res.body)}`);
  return res.body.data as { clickId: string; fbclid: string };
}

const getConversion = (id: string, key = ctx.a.live) => call(ctx.app, 'GET', `/v1/conversions/${id}`, { key });
const metrics = (storeId: string, key = ctx.a.live) => call(ctx.app, 'GET', `/v1/analytics/metrics?storeId=${storeId}`, { key });

async function conversionRows(storeId: string) {
  return ctx.database.read.selectFrom('conversions').selectAll().where('store_id', '=', storeId).execute();
}

function expectNotAttributed(res: { status: number; body: { data: Record<string, unknown> } }) {
  expect(res.status).toBe(200);
  expect(res.body.data.attributed).toBe(false);
  expect('attributedTo' in res.body.data).toBe(false);
}

describe('POST /v1/track/conversion — recording', () => {
  it('records a conversion and answers with its id', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const eventTime = Date.now() - 10 * MINUTE;
    const res = await trackConversion(conversionBody(storeId, { orderId: 'order-1001', timestamp: iso(eventTime) }));
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.headers['request-id']).toBe(res.body.meta.requestId);
    const data = res.body.data;
    expect(Object.keys(data).sort()).toEqual(['attributed', 'capiSent', 'conversionId', 'duplicate', 'eventType', 'timestamp']);
    expect(data.conversionId).toMatch(/^conv_[A-Za-z0-9_-]+$/);
    expect(data).toMatchObject({ eventType: 'Purchase', attributed: false, capiSent: false, duplicate: false });
    expect(data.timestamp).toBe(iso(eventTime));

    const got = await getConversion(data.conversionId);
    expect(got.status).toBe(200);
    expect(got.body.data).toMatchObject({
      conversionId: data.conversionId,
      storeId,
      eventType: 'Purchase',
      orderId: 'order-1001',
      eventId: 'order-1001',
      eventValue: 49.99,
      currency: 'USD',
      attributed: false,
      capiSent: false,
      capi: { status: 'skipped', attempts: 0 },
      livemode: true,
      timestamp: iso(eventTime),
      products: [],
    });
    expect('attributedTo' in got.body.data).toBe(false);
    expect('lastError' in got.body.data.capi).toBe(false);
    expect('sentAt' in got.body.data.capi).toBe(false);

    const rows = await conversionRows(storeId);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.value_minor).toBe(4999);
  });

  it('defaults the event time to now', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const before = Date.now();
    const res = await trackConversion(conversionBody(storeId));
    const after = Date.now();
    expect(res.body.data.timestamp).toMatch(ISO_MS);
    expect(Date.parse(res.body.data.timestamp)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(res.body.data.timestamp)).toBeLessThanOrEqual(after);
  });

  it('keeps an explicit eventId', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const res = await trackConversion(conversionBody(storeId, { eventId: 'pixel-evt-77' }));
    const got = await getConversion(res.body.data.conversionId);
    expect(got.body.data.eventId).toBe('pixel-evt-77');
  });

  it('reports capiSent false and capi.status skipped while forwarding is not configured', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const res = await trackConversion(conversionBody(storeId, { customerData: { email: 'capi@example.com' } }));
    expect(res.body.data.capiSent).toBe(false);
    const got = await getConversion(res.body.data.conversionId);
    expect(got.body.data.capiSent).toBe(false);
    expect(got.body.data.capi).toEqual({
      status: 'skipped',
      attempts: 0,
      reason: 'not_configured',
      message: expect.stringContaining('pixelId'),
    });
  });

  it('round-trips products with exact prices and a default quantity of 1', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const products = [
      { productId: 'sku-tent', name: 'Tent', price: 19.99, quantity: 2, category: 'outdoor' },
      { productId: 'sku-peg', price: 0.1 },
      { productId: 'sku-odd', price: 1.005, quantity: 3 },
      { productId: 'sku-free', price: 0 },
    ];
    const res = await trackConversion(conversionBody(storeId, { eventValue: 43.4, products }));
    expect(res.status).toBe(200);
    const got = await getConversion(res.body.data.conversionId);
    expect(got.body.data.products).toEqual([
      { productId: 'sku-tent', name: 'Tent', price: 19.99, quantity: 2, category: 'outdoor' },
      { productId: 'sku-peg', price: 0.1, quantity: 1 },
      { productId: 'sku-odd', price: 1.01, quantity: 3 },
      { productId: 'sku-free', price: 0, quantity: 1 },
    ]);
    const [row] = await conversionRows(storeId);
    expect(JSON.parse(row?.products ?? '[]').map((p: { priceMinor: number }) => p.priceMinor)).toEqual([1999, 10, 101, 0]);
  });

  it('accepts every Meta standard event name and a custom name', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const names = [
      'Purchase',
      'Lead',
      'CompleteRegistration',
      'AddToCart',
      'InitiateCheckout',
      'AddPaymentInfo',
      'Subscribe',
      'StartTrial',
      'ViewContent',
      'Search',
      'Contact',
      'SubmitApplication',
      'Schedule',
      'AddToWishlist',
      'Donate',
      'CustomizeProduct',
      'FindLocation',
      'signup',
      `a${'b_1'.repeat(16)}Z`, // 50 characters
    ];
    for (const eventType of names) {
      const res = await trackConversion(conversionBody(storeId, { eventType }));
      expect(res.status, eventType).toBe(200);
      expect(res.body.data.eventType).toBe(eventType);
    }
  });

  it('accepts eventValue 0 and 1e12, and an orderId of 255 characters', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    expect((await trackConversion(conversionBody(storeId, { eventValue: 0 }))).status).toBe(200);
    const big = await trackConversion(conversionBody(storeId, { eventValue: 1e12 }));
    expect(big.status).toBe(200);
    expect((await getConversion(big.body.data.conversionId)).body.data.eventValue).toBe(1e12);
    const longOrder = await trackConversion(conversionBody(storeId, { orderId: 'o'.repeat(255) }));
    expect(longOrder.status).toBe(200);
  });
});

describe('POST /v1/track/conversion — validation', () => {
  let storeId: string;
  beforeAll(async () => {
    storeId = await makeStore(ctx.app, ctx.a.live);
  });

  async function expectRejected(overrides: Record<string, unknown>, status: number, code: string, field: string, reason: string) {
    const body: Record<string, unknown> = conversionBody(storeId, overrides);
    for (const [k, v] of Object.entries(overrides)) if (v === undefined) delete body[k];
    const before = (await conversionRows(storeId)).length;
    const res = await trackConversion(body);
    const error = expectError(res, status, code);
    expect(error.details).toMatchObject({ field, reason });
    expect((await conversionRows(storeId)).length).toBe(before);
    return error;
  }

  it('reports each missing required field', async () => {
    for (const field of ['storeId', 'eventType', 'orderId', 'eventValue', 'currency']) {
      await expectRejected({ [field]: undefined }, 400, 'missing_required_field', field, 'required_field_missing');
    }
    await expectRejected({ orderId: '' }, 400, 'missing_required_field', 'orderId', 'required_field_missing');
    await expectRejected({ eventValue: null }, 400, 'missing_required_field', 'eventValue', 'required_field_missing');
  });

  it('rejects an eventType that is neither standard nor a valid custom name', async () => {
    for (const eventType of ['1bad', '_signup', 'sign-up', 'sign up', `a${'b'.repeat(50)}`]) {
      await expectRejected({ eventType }, 400, 'invalid_request', 'eventType', 'invalid_format');
    }
  });

  it('rejects an orderId of 256 characters', async () => {
    await expectRejected({ orderId: 'o'.repeat(256) }, 400, 'invalid_request', 'orderId', 'out_of_range');
  });

  it('rejects a negative or too large eventValue', async () => {
    await expectRejected({ eventValue: -0.01 }, 400, 'invalid_request', 'eventValue', 'out_of_range');
    await expectRejected({ eventValue: 1e12 + 1 }, 400, 'invalid_request', 'eventValue', 'out_of_range');
    await expectRejected({ eventValue: 1e13 }, 400, 'invalid_request', 'eventValue', 'out_of_range');
  });

  it('does not coerce an eventValue sent as a string', async () => {
    await expectRejected({ eventValue: '10' }, 400, 'invalid_request', 'eventValue', 'invalid_type');
  });

  it('accepts a lower-case currency and stores it upper-case', async () => {
    const res = await trackConversion(conversionBody(storeId, { currency: 'usd', eventValue: 5 }));
    expect(res.status).toBe(200);
    const got = await getConversion(res.body.data.conversionId);
    expect(got.body.data.currency).toBe('USD');
    const row = await ctx.database.read
      .selectFrom('conversions')
      .select('currency')
      .where('id', '=', res.body.data.conversionId)
      .executeTakeFirstOrThrow();
    expect(row.currency).toBe('USD');
  });

  it('rejects a currency that is not ISO 4217', async () => {
    for (const currency of ['ABC', 'XYZ', 'US', 'dollars', '$']) {
      await expectRejected({ currency }, 400, 'invalid_currency', 'currency', 'invalid_format');
    }
  });

  it('rejects a customerData field over 256 characters', async () => {
    const ok = await trackConversion(conversionBody(storeId, { customerData: { city: 'c'.repeat(256) } }));
    expect(ok.status).toBe(200);
    await expectRejected(
      { customerData: { email: `${'e'.repeat(245)}@example.com` } },
      400,
      'invalid_request',
      'customerData.email',
      'out_of_range',
    );
    await expectRejected(
      { customerData: { zipCode: '1'.repeat(257) } },
      400,
      'invalid_request',
      'customerData.zipCode',
      'out_of_range',
    );
  });

  it('rejects customerData that is not an object or has non-string fields', async () => {
    await expectRejected({ customerData: 'jane@example.com' }, 400, 'invalid_request', 'customerData', 'invalid_type');
    await expectRejected({ customerData: { phone: 6505551212 } }, 400, 'invalid_request', 'customerData.phone', 'invalid_type');
  });

  it('rejects a fingerprint over 256 characters', async () => {
    await expectRejected({ fingerprint: 'f'.repeat(257) }, 400, 'invalid_request', 'fingerprint', 'out_of_range');
  });

  it('accepts 1000 products and rejects 1001', async () => {
    const many = (n: number) => Array.from({ length: n }, (_, i) => ({ productId: `p${i}` }));
    const ok = await trackConversion(conversionBody(storeId, { products: many(1000) }));
    expect(ok.status).toBe(200);
    await expectRejected({ products: many(1001) }, 400, 'invalid_request', 'products', 'out_of_range');
  });

  it('names the offending product field by its JSON path', async () => {
    await expectRejected(
      { products: [{ productId: 'a' }, { productId: 'b', quantity: 0 }] },
      400,
      'invalid_request',
      'products[1].quantity',
      'out_of_range',
    );
    await expectRejected(
      { products: [{ productId: 'a', quantity: 1.5 }] },
      400,
      'invalid_request',
      'products[0].quantity',
      'invalid_type',
    );
    await expectRejected(
      { products: [{ productId: 'a' }, { productId: 'b' }, { productId: 'c', price: -1 }] },
      400,
      'invalid_request',
      'products[2].price',
      'out_of_range',
    );
    await expectRejected(
      { products: [{ name: 'no id', price: 1 }] },
      400,
      'missing_required_field',
      'products[0].productId',
      'required_field_missing',
    );
    await expectRejected({ products: { productId: 'a' } }, 400, 'invalid_request', 'products', 'invalid_type');
  });

  it('rejects a timestamp more than 5 minutes in the future', async () => {
    await expectRejected({ timestamp: iso(Date.now() + 6 * MINUTE) }, 400, 'invalid_request', 'timestamp', 'out_of_range');
    await expectRejected({ timestamp: 'last tuesday' }, 400, 'invalid_request', 'timestamp', 'invalid_format');
    // An impossible day is refused, not rolled over into the next month.
    const lastYear = new Date().getUTCFullYear() - 1;
    await expectRejected({ timestamp: `${lastYear}-02-30T10:00:00Z` }, 400, 'invalid_request', 'timestamp', 'invalid_format');
    const ok = await trackConversion(conversionBody(storeId, { timestamp: iso(Date.now() + 4 * MINUTE) }));
    expect(ok.status).toBe(200);
  });

  it('validates the extension fields', async () => {
    await expectRejected({ fbclid: 'bad fbclid' }, 400, 'invalid_fbclid', 'fbclid', 'invalid_format');
    await expectRejected({ ipAddress: '300.1.1.1' }, 400, 'invalid_request', 'ipAddress', 'invalid_format');
    await expectRejected({ eventSourceUrl: 'not a url' }, 400, 'invalid_request', 'eventSourceUrl', 'invalid_url');
    await expectRejected({ userAgent: 'u'.repeat(1025) }, 400, 'invalid_request', 'userAgent', 'out_of_range');
  });

  it('answers store_not_found for an unknown, foreign or inactive store', async () => {
    expectError(await trackConversion(conversionBody('st_01unknownstore0000000000000')), 404, 'store_not_found');
    const storeOfB = await makeStore(ctx.app, ctx.b.live);
    expectError(await trackConversion(conversionBody(storeOfB)), 404, 'store_not_found');
    const inactive = await makeStore(ctx.app, ctx.a.live);
    await call(ctx.app, 'PATCH', `/v1/stores/${inactive}`, { key: ctx.a.live, body: { status: 'inactive' } });
    expectError(await trackConversion(conversionBody(inactive)), 404, 'store_not_found');
    expect(await conversionRows(inactive)).toHaveLength(0);
    expect(await conversionRows(storeOfB)).toHaveLength(0);
  });
});

describe('POST /v1/track/conversion — idempotency', () => {
  it('returns the original conversion and attribution for the same (store, eventType, orderId)', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const click = await trackClick(storeId, { fbclid: 'dedup_click' });
    const first = await trackConversion(conversionBody(storeId, { orderId: 'dup-1', fbclid: 'dedup_click', eventValue: 49.99 }));
    // The re-send carries no click reference and another value: the stored result still wins.
    const second = await trackConversion(conversionBody(storeId, { orderId: 'dup-1', eventValue: 100 }));
    expect(first.body.data.duplicate).toBe(false);
    expect(first.body.data.attributedTo).toEqual({
      clickId: click.clickId,
      fbclid: 'dedup_click',
      clickIds: { fbclid: 'dedup_click' },
      channel: 'meta',
      confidenceScore: 100,
    });
    expect(second.status).toBe(200);
    expect(second.body.data.duplicate).toBe(true);
    const { duplicate: _a, ...firstRest } = first.body.data;
    const { duplicate: _b, ...secondRest } = second.body.data;
    // The original stays; the answer names what the re-send changed (its value).
    expect(secondRest).toEqual({ ...firstRest, differences: ['eventValue'] });

    expect(await conversionRows(storeId)).toHaveLength(1);
    const m = await metrics(storeId);
    expect(m.body.data).toMatchObject({
      totalConversions: 1,
      attributedConversions: 1,
      totalRevenue: 49.99,
      attributedRevenue: 49.99,
      averageOrderValue: 49.99,
    });
  });

  it('treats the same orderId with another eventType as a different conversion', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const purchase = await trackConversion(conversionBody(storeId, { orderId: 'multi-1', eventType: 'Purchase' }));
    const lead = await trackConversion(conversionBody(storeId, { orderId: 'multi-1', eventType: 'Lead' }));
    expect(lead.status).toBe(200);
    expect(lead.body.data.duplicate).toBe(false);
    expect(lead.body.data.conversionId).not.toBe(purchase.body.data.conversionId);
    expect(await conversionRows(storeId)).toHaveLength(2);
  });

  it('keeps the same orderId separate per store and per mode', async () => {
    const storeA = await makeStore(ctx.app, ctx.a.live);
    const storeB = await makeStore(ctx.app, ctx.a.live);
    const live = await trackConversion(conversionBody(storeA, { orderId: 'shared-order' }));
    const otherStore = await trackConversion(conversionBody(storeB, { orderId: 'shared-order' }));
    const testMode = await trackConversion(conversionBody(storeA, { orderId: 'shared-order' }), ctx.a.test);
    expect(otherStore.body.data.duplicate).toBe(false);
    expect(testMode.body.data.duplicate).toBe(false);
    expect(new Set([live, otherStore, testMode].map((r) => r.body.data.conversionId)).size).toBe(3);
    expect((await getConversion(testMode.body.data.conversionId, ctx.a.test)).body.data.livemode).toBe(false);
    // Test data never moves a live metric.
    expect((await metrics(storeA)).body.data.totalConversions).toBe(1);
  });

  it('stores one row for 50 identical concurrent requests', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    await trackClick(storeId, { fbclid: 'concurrent_conv_click' });
    const body = conversionBody(storeId, { orderId: 'concurrent-1', fbclid: 'concurrent_conv_click', eventValue: 10 });
    const responses = await Promise.all(Array.from({ length: 50 }, () => trackConversion(body)));
    for (const res of responses) expect(res.status).toBe(200);
    expect(new Set(responses.map((r) => r.body.data.conversionId)).size).toBe(1);
    expect(responses.filter((r) => r.body.data.duplicate === false)).toHaveLength(1);
    for (const res of responses) expect(res.body.data.attributed).toBe(true);
    const rows = await conversionRows(storeId);
    expect(rows).toHaveLength(1);
    const touchpoints = await ctx.database.read
      .selectFrom('touchpoints')
      .selectAll()
      .where('conversion_id', '=', rows[0]?.id ?? '')
      .execute();
    expect(touchpoints).toHaveLength(1);
    const m = await metrics(storeId);
    expect(m.body.data.totalRevenue).toBe(10);
    expect(m.body.data.totalConversions).toBe(1);
  });
});

describe('POST /v1/track/conversion — attribution', () => {
  it('attributes by fbclid with confidence 100', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const click = await trackClick(storeId, { fbclid: 'attr_by_fbclid' });
    const res = await trackConversion(conversionBody(storeId, { fbclid: 'attr_by_fbclid' }));
    expect(res.status).toBe(200);
    expect(res.body.data.attributed).toBe(true);
    expect(res.body.data.attributedTo).toEqual({
      clickId: click.clickId,
      fbclid: 'attr_by_fbclid',
      clickIds: { fbclid: 'attr_by_fbclid' },
      channel: 'meta',
      confidenceScore: 100,
    });

    const got = await getConversion(res.body.data.conversionId);
    expect(got.body.data.attributed).toBe(true);
    expect(got.body.data.attributedTo).toEqual({
      clickId: click.clickId,
      fbclid: 'attr_by_fbclid',
      clickIds: { fbclid: 'attr_by_fbclid' },
      channel: 'meta',
      confidenceScore: 100,
    });
    const touchpoints = await ctx.database.read
      .selectFrom('touchpoints')
      .selectAll()
      .where('conversion_id', '=', res.body.data.conversionId)
      .execute();
    expect(touchpoints).toHaveLength(1);
    expect(touchpoints[0]).toMatchObject({ click_id: click.clickId, signal: 'explicit', score: 100 });
  });

  it('attributes by clickId', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const click = await trackClick(storeId, { fbclid: 'attr_by_click_id' });
    const res = await trackConversion(conversionBody(storeId, { clickId: click.clickId }));
    expect(res.body.data.attributed).toBe(true);
    expect(res.body.data.attributedTo).toEqual({
      clickId: click.clickId,
      fbclid: 'attr_by_click_id',
      clickIds: { fbclid: 'attr_by_click_id' },
      channel: 'meta',
      confidenceScore: 100,
    });
  });

  it('attributes by fbc (fb.1.<click ms>.<fbclid>)', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const clickTime = Date.now() - 3 * HOUR;
    const click = await trackClick(storeId, { fbclid: 'Attr_By_FBC.x-1', timestamp: iso(clickTime) });
    const res = await trackConversion(conversionBody(storeId, { fbc: `fb.1.${clickTime}.Attr_By_FBC.x-1` }));
    expect(res.body.data.attributed).toBe(true);
    expect(res.body.data.attributedTo).toEqual({
      clickId: click.clickId,
      fbclid: 'Attr_By_FBC.x-1',
      clickIds: { fbclid: 'Attr_By_FBC.x-1' },
      channel: 'meta',
      confidenceScore: 100,
    });
  });

  it('does not attribute an fbclid or fbc that names no recorded click', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    await trackClick(storeId, { fbclid: 'CaseSensitive' });
    expectNotAttributed(await trackConversion(conversionBody(storeId, { fbclid: 'never_seen' })));
    expectNotAttributed(await trackConversion(conversionBody(storeId, { fbclid: 'casesensitive' })));
    expectNotAttributed(await trackConversion(conversionBody(storeId, { fbc: `fb.1.${Date.now()}.never_seen` })));
    expectNotAttributed(await trackConversion(conversionBody(storeId, { fbc: 'garbage' })));
    expectNotAttributed(await trackConversion(conversionBody(storeId, { clickId: 'clk_01doesnotexist00000000000' })));
  });

  it('does not attribute without any click reference', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    await trackClick(storeId);
    expectNotAttributed(await trackConversion(conversionBody(storeId)));
  });

  it('does not attribute a click older than the default 7-day window', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    await trackClick(storeId, { fbclid: 'eight_days_old', timestamp: iso(Date.now() - 8 * DAY) });
    const res = await trackConversion(conversionBody(storeId, { fbclid: 'eight_days_old' }));
    expectNotAttributed(res);
    const got = await getConversion(res.body.data.conversionId);
    expect(got.body.data.attributed).toBe(false);
    expect('attributedTo' in got.body.data).toBe(false);
  });

  it('attributes a click exactly 7 days before the conversion, not 7 days + 1 ms', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const conversionTime = Date.now() - HOUR;
    const click = await trackClick(storeId, { fbclid: 'window_edge', timestamp: iso(conversionTime - 7 * DAY) });
    const inside = await trackConversion(
      conversionBody(storeId, { orderId: 'edge-in', fbclid: 'window_edge', timestamp: iso(conversionTime) }),
    );
    expect(inside.body.data.attributedTo).toEqual({
      clickId: click.clickId,
      fbclid: 'window_edge',
      clickIds: { fbclid: 'window_edge' },
      channel: 'meta',
      confidenceScore: 100,
    });
    expectNotAttributed(
      await trackConversion(
        conversionBody(storeId, { orderId: 'edge-out', fbclid: 'window_edge', timestamp: iso(conversionTime + 1) }),
      ),
    );
  });

  it("uses the store's attributionWindowDays", async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live, { attributionWindowDays: 30 });
    const click = await trackClick(storeId, { fbclid: 'thirty_day_window', timestamp: iso(Date.now() - 8 * DAY) });
    const res = await trackConversion(conversionBody(storeId, { fbclid: 'thirty_day_window' }));
    expect(res.body.data.attributedTo).toEqual({
      clickId: click.clickId,
      fbclid: 'thirty_day_window',
      clickIds: { fbclid: 'thirty_day_window' },
      channel: 'meta',
      confidenceScore: 100,
    });

    // A window shortened later applies to the next conversion.
    await call(ctx.app, 'PATCH', `/v1/stores/${storeId}`, { key: ctx.a.live, body: { attributionWindowDays: 1 } });
    expectNotAttributed(await trackConversion(conversionBody(storeId, { fbclid: 'thirty_day_window' })));
  });

  it('attributes a click up to 5 minutes after the conversion time, not later', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const conversionTime = Date.now() - HOUR;
    const atTolerance = await trackClick(storeId, { fbclid: 'late_ok', timestamp: iso(conversionTime + 5 * MINUTE) });
    await trackClick(storeId, { fbclid: 'late_too_much', timestamp: iso(conversionTime + 5 * MINUTE + 1000) });
    const ok = await trackConversion(conversionBody(storeId, { fbclid: 'late_ok', timestamp: iso(conversionTime) }));
    expect(ok.body.data.attributedTo?.clickId).toBe(atTolerance.clickId);
    expectNotAttributed(
      await trackConversion(conversionBody(storeId, { fbclid: 'late_too_much', timestamp: iso(conversionTime) })),
    );
  });

  it('never attributes a bot click', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const bot = await trackClick(storeId, { fbclid: 'bot_fbclid', userAgent: GOOGLEBOT });
    expectNotAttributed(await trackConversion(conversionBody(storeId, { fbclid: 'bot_fbclid' })));
    expectNotAttributed(await trackConversion(conversionBody(storeId, { clickId: bot.clickId })));
  });

  it('never lets a test-mode click attribute a live conversion, or the reverse', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const testClick = await trackClick(storeId, { fbclid: 'mode_fbclid' }, ctx.a.test);
    expectNotAttributed(await trackConversion(conversionBody(storeId, { fbclid: 'mode_fbclid' })));
    expectNotAttributed(await trackConversion(conversionBody(storeId, { clickId: testClick.clickId })));

    const liveClick = await trackClick(storeId, { fbclid: 'live_only_fbclid' });
    expectNotAttributed(await trackConversion(conversionBody(storeId, { fbclid: 'live_only_fbclid' }), ctx.a.test));
    expectNotAttributed(await trackConversion(conversionBody(storeId, { clickId: liveClick.clickId }), ctx.a.test));

    // In its own mode the test click does attribute.
    const inTest = await trackConversion(conversionBody(storeId, { fbclid: 'mode_fbclid' }), ctx.a.test);
    expect(inTest.body.data.attributedTo?.clickId).toBe(testClick.clickId);
  });

  it('does not attribute a click of another store of the same account, or of another account', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const otherStore = await makeStore(ctx.app, ctx.a.live);
    const otherClick = await trackClick(otherStore, { fbclid: 'other_store_fbclid' });
    expectNotAttributed(await trackConversion(conversionBody(storeId, { clickId: otherClick.clickId })));
    expectNotAttributed(await trackConversion(conversionBody(storeId, { fbclid: 'other_store_fbclid' })));

    const storeOfB = await makeStore(ctx.app, ctx.b.live);
    const clickOfB = await trackClick(storeOfB, { fbclid: 'account_b_fbclid' }, ctx.b.live);
    expectNotAttributed(await trackConversion(conversionBody(storeId, { clickId: clickOfB.clickId })));
  });

  it('still attributes explicit references when the store requires minConfidence 100', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live, { minConfidence: 100 });
    const click = await trackClick(storeId, { fbclid: 'strict_store' });
    const res = await trackConversion(conversionBody(storeId, { fbclid: 'strict_store' }));
    expect(res.body.data.attributedTo).toEqual({
      clickId: click.clickId,
      fbclid: 'strict_store',
      clickIds: { fbclid: 'strict_store' },
      channel: 'meta',
      confidenceScore: 100,
    });
  });

  it('keeps a click referenced several ways as one touchpoint', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const clickTime = Date.now() - HOUR;
    const click = await trackClick(storeId, { fbclid: 'referenced_thrice', timestamp: iso(clickTime) });
    const res = await trackConversion(
      conversionBody(storeId, {
        clickId: click.clickId,
        fbclid: 'referenced_thrice',
        fbc: `fb.1.${clickTime}.referenced_thrice`,
      }),
    );
    expect(res.body.data.attributedTo).toEqual({
      clickId: click.clickId,
      fbclid: 'referenced_thrice',
      clickIds: { fbclid: 'referenced_thrice' },
      channel: 'meta',
      confidenceScore: 100,
    });
    const touchpoints = await ctx.database.read
      .selectFrom('touchpoints')
      .selectAll()
      .where('conversion_id', '=', res.body.data.conversionId)
      .execute();
    expect(touchpoints).toHaveLength(1);
    expect(touchpoints[0]).toMatchObject({ click_id: click.clickId, signal: 'explicit', score: 100, click_time: clickTime });
  });

  it('credits the most recent of two explicitly referenced clicks', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const older = await trackClick(storeId, { fbclid: 'older_ref', timestamp: iso(Date.now() - 2 * DAY) });
    const newer = await trackClick(storeId, { fbclid: 'newer_ref', timestamp: iso(Date.now() - HOUR) });
    const res = await trackConversion(conversionBody(storeId, { clickId: older.clickId, fbclid: 'newer_ref' }));
    expect(res.body.data.attributedTo).toEqual({
      clickId: newer.clickId,
      fbclid: 'newer_ref',
      clickIds: { fbclid: 'newer_ref' },
      channel: 'meta',
      confidenceScore: 100,
    });
    const touchpoints = await ctx.database.read
      .selectFrom('touchpoints')
      .select('click_id')
      .where('conversion_id', '=', res.body.data.conversionId)
      .execute();
    expect(touchpoints.map((t) => t.click_id).sort()).toEqual([newer.clickId, older.clickId].sort());
  });

  it('counts attributed conversions and revenue in metrics', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    await trackClick(storeId, { fbclid: 'metrics_click' });
    await trackConversion(conversionBody(storeId, { fbclid: 'metrics_click', eventValue: 30 }));
    await trackConversion(conversionBody(storeId, { eventValue: 20 }));
    const m = await metrics(storeId);
    expect(m.body.data).toMatchObject({
      totalClicks: 1,
      totalConversions: 2,
      attributedConversions: 1,
      totalRevenue: 50,
      attributedRevenue: 30,
      conversionRate: 100,
      averageOrderValue: 25,
    });
  });
});

describe('POST /v1/track/conversion — money', () => {
  it('sums 0.1 and 0.2 USD to exactly 0.3', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    await trackConversion(conversionBody(storeId, { eventValue: 0.1 }));
    await trackConversion(conversionBody(storeId, { eventValue: 0.2 }));
    const m = await metrics(storeId);
    expect(m.status).toBe(200);
    expect(m.body.data.totalRevenue).toBe(0.3);
    expect(m.body.data.averageOrderValue).toBe(0.15);
    expect(m.body.data.currency).toBe('USD');
    expect((await conversionRows(storeId)).map((r) => r.value_minor).sort((a, b) => a - b)).toEqual([10, 20]);
  });

  it('stores 19.99 as 1999 cents and 1.005 as 101', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const a = await trackConversion(conversionBody(storeId, { eventValue: 19.99 }));
    const b = await trackConversion(conversionBody(storeId, { eventValue: 1.005 }));
    expect((await getConversion(a.body.data.conversionId)).body.data.eventValue).toBe(19.99);
    expect((await getConversion(b.body.data.conversionId)).body.data.eventValue).toBe(1.01);
    const m = await metrics(storeId);
    expect(m.body.data.totalRevenue).toBe(21);
  });

  it('keeps JPY 1234 as 1234', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live, { currency: 'JPY' });
    const res = await trackConversion(conversionBody(storeId, { eventValue: 1234, currency: 'JPY' }));
    const got = await getConversion(res.body.data.conversionId);
    expect(got.body.data.eventValue).toBe(1234);
    expect(got.body.data.currency).toBe('JPY');
    expect((await conversionRows(storeId))[0]?.value_minor).toBe(1234);
    const m = await metrics(storeId);
    expect(m.body.data).toMatchObject({ currency: 'JPY', totalRevenue: 1234, averageOrderValue: 1234 });
  });

  it('keeps other currencies out of totalRevenue', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    await trackConversion(conversionBody(storeId, { eventValue: 10, currency: 'USD' }));
    await trackConversion(conversionBody(storeId, { eventValue: 1234, currency: 'JPY' }));
    await trackConversion(conversionBody(storeId, { eventValue: 1.234, currency: 'kwd' }));
    const m = await metrics(storeId);
    expect(m.body.data.totalRevenue).toBe(10);
    expect(m.body.data.revenueByCurrency).toEqual({ JPY: 1234, KWD: 1.234 });
    expect(m.body.data.totalConversions).toBe(3);
  });

  it('counts only Purchase values as revenue', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    await trackConversion(conversionBody(storeId, { eventValue: 10 }));
    await trackConversion(conversionBody(storeId, { eventType: 'Lead', eventValue: 99 }));
    const m = await metrics(storeId);
    expect(m.body.data).toMatchObject({ totalConversions: 2, totalRevenue: 10, averageOrderValue: 10 });
  });
});

describe('POST /v1/track/conversion — customer data', () => {
  it('stores only hashes: no raw PII in any row, in the database files, or in responses', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const raw = {
      email: 'Zebediah.Quill+Order@Example-Mail.COM',
      phone: '+1 (415) 555-0142',
      firstName: 'Zebediah',
      lastName: 'Quillfeather',
      city: 'Xanthorrhoea Falls',
      state: 'California',
      country: 'United States',
      zipCode: '94110-3321',
    };
    const res = await trackConversion(conversionBody(storeId, { customerData: raw }));
    expect(res.status).toBe(200);

    const forbidden = [
      raw.email,
      'zebediah.quill+order@example-mail.com',
      raw.phone,
      '14155550142',
      '4155550142',
      raw.firstName,
      'zebediah',
      raw.lastName,
      'quillfeather',
      raw.city,
      'xanthorrhoeafalls',
      '94110-3321',
    ];

    const rows = await ctx.database.read.selectFrom('conversions').selectAll().execute();
    const rowsJson = JSON.stringify(rows);
    for (const value of forbidden) expect(rowsJson.includes(value), value).toBe(false);

    const [row] = await conversionRows(storeId);
    expect(row?.email_hash).toBe(sha256('zebediah.quill+order@example-mail.com'));
    expect(row?.phone_hash).toBe(sha256('14155550142'));
    expect(JSON.parse(row?.user_data ?? '{}')).toEqual({
      em: sha256('zebediah.quill+order@example-mail.com'),
      ph: sha256('14155550142'),
      fn: sha256('zebediah'),
      ln: sha256('quillfeather'),
      ct: sha256('xanthorrhoeafalls'),
      st: sha256('ca'),
      zp: sha256('94110'),
      country: sha256('us'),
    });

    // SQLite: the raw bytes of every database file (main file and write-ahead log) after the
    // commit. PostgreSQL: every row of every table of the test's schema, as text.
    let bytes: Buffer;
    if (ENGINE === 'sqlite') {
      const files = readdirSync(ctx.dataDir).filter((f) => f.startsWith('waytrack.db'));
      expect(files).toContain('waytrack.db');
      bytes = Buffer.concat(files.map((f) => readFileSync(path.join(ctx.dataDir, f))));
    } else {
      const db = ctx.database.read as unknown as Kysely<unknown>;
      const tables = await sql<{ name: string }>`select table_name as name from information_schema.tables
        where table_schema = current_schema()`.execute(db);
      expect(tables.rows.map((t) => t.name)).toContain('conversions');
      const texts: string[] = [];
      for (const { name } of tables.rows) {
        const rows = await sql<{ row: string }>`select t::text as row from ${sql.table(name)} t`.execute(db);
        texts.push(...rows.rows.map((r) => r.row));
      }
      bytes = Buffer.from(texts.join('\n'), 'utf8');
    }
    expect(bytes.includes(Buffer.from(sha256('zebediah.quill+order@example-mail.com')))).toBe(true);
    for (const value of forbidden) {
      expect(bytes.includes(Buffer.from(value, 'utf8')), value).toBe(false);
      expect(bytes.includes(Buffer.from(value, 'utf16le')), value).toBe(false);
    }

    const got = await getConversion(res.body.data.conversionId);
    const list = await call(ctx.app, 'GET', `/v1/conversions?storeId=${storeId}`, { key: ctx.a.live });
    for (const body of [res.raw.body, got.raw.body, list.raw.body]) {
      for (const value of forbidden) expect(body.includes(value), value).toBe(false);
    }
    expect('customerData' in got.body.data).toBe(false);
  });
});
