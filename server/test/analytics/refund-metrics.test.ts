import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, clickBody, conversionBody, createTestContext, makeStore, type TestContext } from '../helpers.js';

const DAY_MS = 86_400_000;
const utcDaysAgo = (days: number) => new Date(Date.now() - days * DAY_MS).toISOString().slice(0, 10);

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => ctx.close());

async function post(url: string, body: unknown, key = ctx.a.live) {
  const res = await call(ctx.app, 'POST', url, { key, body });
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  return res.body.data;
}

async function metrics(storeId: string, startDate: string, endDate: string, key = ctx.a.live) {
  const res = await call(ctx.app, 'GET', `/v1/analytics/metrics?storeId=${storeId}&startDate=${startDate}&endDate=${endDate}`, {
    key,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
}

describe('metrics net of refunds', () => {
  it('counts refunds by refund time, nets revenue and ROAS of attributed conversions, exactly', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const d10 = utcDaysAgo(10);
    const d9 = utcDaysAgo(9);
    const d3 = utcDaysAgo(3);
    await post('/v1/track/click', clickBody(storeId, { fbclid: 'fb_refund_a', timestamp: `${d10}T08:00:00Z` }));
    // Attributed purchase of 100.30 on day -10, unattributed one of 50.10 the same day, and a Lead (not revenue).
    await post(
      '/v1/track/conversion',
      conversionBody(storeId, { orderId: 'A', eventValue: 100.3, fbclid: 'fb_refund_a', timestamp: `${d10}T09:00:00Z` }),
    );
    await post(
      '/v1/track/conversion',
      conversionBody(storeId, { orderId: 'B', eventValue: 50.1, timestamp: `${d10}T09:30:00Z` }),
    );
    await post(
      '/v1/track/conversion',
      conversionBody(storeId, { orderId: 'L', eventType: 'Lead', eventValue: 7, timestamp: `${d10}T10:00:00Z` }),
    );
    await post(`/v1/stores/${storeId}/ad-spend`, { entries: [{ date: d10, amount: 20, currency: 'USD' }] });

    // Refunds: 0.10 of A on day -10, 0.20 of A on day -9, 10 of B on day -3; the Lead's refund is not revenue.
    await post('/v1/track/refund', {
      storeId,
      orderId: 'A',
      refundId: 'a1',
      amount: 0.1,
      currency: 'USD',
      timestamp: `${d10}T12:00:00Z`,
    });
    await post('/v1/track/refund', {
      storeId,
      orderId: 'A',
      refundId: 'a2',
      amount: 0.2,
      currency: 'USD',
      timestamp: `${d9}T12:00:00Z`,
    });
    await post('/v1/track/refund', {
      storeId,
      orderId: 'B',
      refundId: 'b1',
      amount: 10,
      currency: 'USD',
      timestamp: `${d3}T12:00:00Z`,
    });
    await post('/v1/track/refund', {
      storeId,
      orderId: 'L',
      refundId: 'l1',
      amount: 7,
      currency: 'USD',
      timestamp: `${d10}T12:00:00Z`,
    });

    const day10 = await metrics(storeId, d10, d10);
    expect(day10).toMatchObject({
      totalRevenue: 150.4,
      attributedRevenue: 100.3,
      refunds: 0.1,
      netRevenue: 150.3,
      adSpend: 20,
      roas: 5.01, // (100.30 − 0.10) / 20
    });
    // The refund on day -9 counts on its own day, where no revenue is: net revenue is negative.
    expect(await metrics(storeId, d9, d9)).toMatchObject({ totalRevenue: 0, refunds: 0.2, netRevenue: -0.2, roas: null });
    const all = await metrics(storeId, d10, d3);
    // 0.1 + 0.2 + 10 exactly; the attributed conversion's 0.30 comes off ROAS, B's 10 does not.
    expect(all).toMatchObject({ totalRevenue: 150.4, refunds: 10.3, netRevenue: 140.1, attributedRevenue: 100.3, roas: 5 });
    // Timeseries: each refund in the bucket of its own day.
    const series = await call(ctx.app, 'GET', `/v1/analytics/timeseries?storeId=${storeId}&startDate=${d10}&endDate=${d3}`, {
      key: ctx.a.live,
    });
    expect(series.status).toBe(200);
    const byDay = Object.fromEntries(
      series.body.data.buckets.map((b: { label: string; refunds: number }) => [b.label, b.refunds]),
    );
    expect(byDay[d10]).toBe(0.1);
    expect(byDay[d9]).toBe(0.2);
    expect(byDay[d3]).toBe(10);
    expect(Object.values(byDay).reduce((a: number, b) => a + (b as number), 0)).toBeCloseTo(10.3, 10);
    // Test mode sees none of it.
    expect(await metrics(storeId, d10, d3, ctx.a.test)).toMatchObject({ refunds: 0, netRevenue: 0 });
  });

  it('refunds in another currency than the store’s stay out of refunds and netRevenue', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const day = utcDaysAgo(2);
    await post(
      '/v1/track/conversion',
      conversionBody(storeId, { orderId: 'E', eventValue: 30, currency: 'EUR', timestamp: `${day}T09:00:00Z` }),
    );
    await post('/v1/track/refund', { storeId, orderId: 'E', refundId: 'e1', currency: 'EUR', timestamp: `${day}T10:00:00Z` });
    expect(await metrics(storeId, day, day)).toMatchObject({
      totalRevenue: 0,
      refunds: 0,
      netRevenue: 0,
      revenueByCurrency: { EUR: 30 },
    });
  });
});
