import { describe, expect, it } from 'vitest';
import { call, clickBody, conversionBody, expectError, makeStore, newAccountsEachTest } from '../helpers.js';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();
const date = (ms: number) => iso(ms).slice(0, 10);
/** The first instant (UTC) of the month `months` after the one containing `ms`. */
function monthStart(ms: number, months = 0): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + months, 1);
}
/** The d-buckets a cohort ending at `end` shows at `now`: dN once N + 1 days have passed since its end. */
function matureBuckets(end: number, now: number): string[] {
  return [0, 30, 60, 90, 180, 365].filter((n) => end + (n + 1) * DAY_MS <= now).map((n) => `d${n}`);
}

/** api.md §11 "Customers": GET /v1/analytics/cohorts. */
describe('GET /v1/analytics/cohorts', () => {
  const ctx = newAccountsEachTest();

  async function track(storeId: string, overrides: Record<string, unknown>, key = ctx.a.live) {
    const res = await call(ctx.app, 'POST', '/v1/track/conversion', { key, body: conversionBody(storeId, overrides) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data;
  }
  async function refund(storeId: string, orderId: string, amount: number, time: number) {
    const body = { storeId, orderId, refundId: `r-${orderId}-${amount}`, amount, currency: 'USD', timestamp: iso(time) };
    const res = await call(ctx.app, 'POST', '/v1/track/refund', { key: ctx.a.live, body });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }
  async function spend(storeId: string, entries: unknown[]) {
    const res = await call(ctx.app, 'POST', `/v1/stores/${storeId}/ad-spend`, { key: ctx.a.live, body: { entries } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }
  async function cohorts(query: string, key = ctx.a.live) {
    const res = await call(ctx.app, 'GET', `/v1/analytics/cohorts?${query}`, { key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data;
  }

  it('computes a hand-built month exactly: net of refunds, per customer, cac and payback; young cohorts without d-buckets', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live, { currency: 'USD', timezone: 'UTC' });
    const now = Date.now();
    const m1 = monthStart(now, -14); // old enough for every bucket
    const t0 = m1 + 12 * HOUR_MS;
    // A: 100 on day 0, 50 on day 10, 20 of the first refunded on day 40.
    await track(storeId, { orderId: 'a1', eventValue: 100, customerData: { email: 'a@example.com' }, timestamp: iso(t0) });
    await track(storeId, {
      orderId: 'a2',
      eventValue: 50,
      customerData: { email: 'a@example.com' },
      timestamp: iso(t0 + 10 * DAY_MS),
    });
    await refund(storeId, 'a1', 20, t0 + 40 * DAY_MS);
    // B (a phone): 30 on its day 0, 70 on its day 100.
    const b0 = t0 + 2 * DAY_MS;
    await track(storeId, { orderId: 'b1', eventValue: 30, customerData: { phone: '+14155550100' }, timestamp: iso(b0) });
    await track(storeId, {
      orderId: 'b2',
      eventValue: 70,
      customerData: { phone: '+14155550100' },
      timestamp: iso(b0 + 100 * DAY_MS),
    });
    // C: a Lead first (no revenue), a Purchase of 40 five hours later (its day 0); a Purchase 400 days later is past d365.
    const c0 = t0 + 3 * DAY_MS;
    await track(storeId, {
      orderId: 'c0',
      eventType: 'Lead',
      eventValue: 0,
      customerData: { email: 'c@example.com' },
      timestamp: iso(c0),
    });
    await track(storeId, {
      orderId: 'c1',
      eventValue: 40.01,
      customerData: { email: 'c@example.com' },
      timestamp: iso(c0 + 5 * HOUR_MS),
    });
    // Neither email nor phone: no customer. Test mode: not in live figures.
    await track(storeId, { orderId: 'anon', eventValue: 999, timestamp: iso(t0) });
    await track(
      storeId,
      { orderId: 't1', eventValue: 500, customerData: { email: 'z@example.com' }, timestamp: iso(t0) },
      ctx.a.test,
    );
    await spend(storeId, [
      { date: date(m1 + 5 * DAY_MS), amount: 150, currency: 'USD', platform: 'meta' },
      { date: date(m1 + 6 * DAY_MS), amount: 60.03, currency: 'USD', platform: 'google_ads' },
      { date: date(m1 + 7 * DAY_MS), amount: 10, currency: 'EUR', platform: 'meta' },
    ]);
    // A young customer: this month's cohort has no bucket yet.
    await track(storeId, {
      orderId: 'd1',
      eventValue: 10,
      customerData: { email: 'd@example.com' },
      timestamp: iso(now - HOUR_MS),
    });

    const data = await cohorts(`storeId=${storeId}&startDate=${date(m1)}&endDate=${date(now)}`);
    expect(data).toMatchObject({ by: 'month', currency: 'USD', timezone: 'UTC', livemode: true, startDate: date(m1) });
    expect(data.cohorts).toHaveLength(15); // every month of the range
    const first = data.cohorts[0];
    // Cumulative net totals 170.01 (d0), 220.01 (d30), 200.01 (d60, d90), 270.01 (d180, d365) over 3 customers.
    expect(first).toEqual({
      cohort: date(m1).slice(0, 7),
      customers: 3,
      spend: 210.03,
      cac: 70.01,
      netRevenuePerCustomer: { d0: 56.67, d30: 73.34, d60: 66.67, d90: 66.67, d180: 90, d365: 90 },
      paybackDays: 10, // day 10: 220.01 ≥ 210.03
    });
    expect(data.cohorts[1]).toEqual({ cohort: date(monthStart(now, -13)).slice(0, 7), customers: 0, netRevenuePerCustomer: {} });
    const last = data.cohorts[14];
    expect(last).toEqual({ cohort: date(now).slice(0, 7), customers: 1, netRevenuePerCustomer: {} });
    expect(data.warnings).toEqual([expect.objectContaining({ code: 'spend_not_converted', currency: 'EUR' })]);

    // Test mode sees its own customer only.
    const test = await cohorts(`storeId=${storeId}&startDate=${date(m1)}&endDate=${date(m1 + 20 * DAY_MS)}`, ctx.a.test);
    expect(test.cohorts).toEqual([
      {
        cohort: date(m1).slice(0, 7),
        customers: 1,
        netRevenuePerCustomer: { d0: 500, d30: 500, d60: 500, d90: 500, d180: 500, d365: 500 },
      },
    ]);
    expect(test.livemode).toBe(false);
  });

  it('by=channel: the first purchase’s channel, its platform’s spend; an earlier purchase recorded later moves the customer', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live, { currency: 'USD', timezone: 'UTC' });
    const now = Date.now();
    const t = now - 60 * DAY_MS;
    const m = monthStart(t);
    const end = monthStart(t, 1);
    const clickAt = async (ms: number) => {
      const res = await call(ctx.app, 'POST', '/v1/track/click', {
        key: ctx.a.live,
        body: clickBody(storeId, { timestamp: iso(ms) }),
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.data.fbclid as string;
    };
    const x = await track(storeId, {
      eventValue: 80,
      fbclid: await clickAt(t - HOUR_MS),
      customerData: { email: 'x@example.com' },
      timestamp: iso(t),
    });
    expect(x.attributed).toBe(true);
    await track(storeId, { eventValue: 10, customerData: { email: 'x@example.com' }, timestamp: iso(t + DAY_MS) });
    await track(storeId, {
      eventValue: 40,
      fbclid: await clickAt(t - 2 * HOUR_MS),
      customerData: { email: 'z@example.com' },
      timestamp: iso(t),
    });
    await track(storeId, { eventValue: 20, customerData: { email: 'y@example.com' }, timestamp: iso(t) });
    await spend(storeId, [
      { date: date(t), amount: 100, currency: 'USD', platform: 'meta' },
      { date: date(t), amount: 30, currency: 'USD', platform: 'tiktok' },
    ]);
    const query = `storeId=${storeId}&startDate=${date(m)}&endDate=${date(end - DAY_MS)}&by=channel`;
    const buckets = matureBuckets(end, now);
    expect(buckets).toContain('d0');
    const perCustomer = (values: Record<string, number>) => Object.fromEntries(buckets.map((b) => [b, values[b] ?? values.d0]));
    const month = date(m).slice(0, 7);
    let data = await cohorts(query);
    expect(data.by).toBe('channel');
    expect(data.cohorts).toEqual([
      {
        cohort: month,
        channel: 'meta',
        customers: 2,
        spend: 100,
        cac: 50,
        netRevenuePerCustomer: perCustomer({ d0: 60, d30: 65 }),
        paybackDays: 0,
      },
      { cohort: month, channel: 'tiktok', customers: 0, spend: 30, netRevenuePerCustomer: {} },
      { cohort: month, channel: 'unattributed', customers: 1, netRevenuePerCustomer: perCustomer({ d0: 20 }) },
    ]);
    // y's earlier purchase, a month before, arrives now: y leaves this cohort for that one.
    await track(storeId, {
      eventValue: 5,
      customerData: { email: 'y@example.com' },
      timestamp: iso(monthStart(t, -1) + HOUR_MS),
    });
    data = await cohorts(query);
    expect(data.cohorts.map((c: { channel: string; customers: number }) => [c.channel, c.customers])).toEqual([
      ['meta', 2],
      ['tiktok', 0],
    ]);
    const before = await cohorts(
      `storeId=${storeId}&startDate=${date(monthStart(t, -1))}&endDate=${date(m - DAY_MS)}&by=channel`,
    );
    expect(before.cohorts).toEqual([expect.objectContaining({ channel: 'unattributed', customers: 1 })]);
  });

  it('by=channel: a first purchase re-attributed to a click that arrived late moves the customer and its revenue', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live, { currency: 'USD', timezone: 'UTC' });
    const now = Date.now();
    const t = now - 40 * DAY_MS;
    const query = `storeId=${storeId}&startDate=${date(monthStart(t))}&endDate=${date(monthStart(t, 1) - DAY_MS)}&by=channel`;
    const fbclid = `late_${now}`;
    const first = await track(storeId, { eventValue: 50, fbclid, customerData: { email: 'w@example.com' }, timestamp: iso(t) });
    expect(first.attributed).toBe(false);
    const rows = async () =>
      (await cohorts(query)).cohorts.map((c: { channel: string; customers: number; netRevenuePerCustomer: { d0?: number } }) => [
        c.channel,
        c.customers,
        c.netRevenuePerCustomer.d0,
      ]);
    expect(await rows()).toEqual([['unattributed', 1, 50]]);
    // The click arrives; the conversion is re-attributed to it: the customer is Meta's now, with its revenue.
    const click = await call(ctx.app, 'POST', '/v1/track/click', {
      key: ctx.a.live,
      body: clickBody(storeId, { fbclid, timestamp: iso(t - HOUR_MS) }),
    });
    expect(click.status, JSON.stringify(click.body)).toBe(200);
    const moved = await call(ctx.app, 'POST', `/v1/conversions/${first.conversionId}/reattribute`, { key: ctx.a.live });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body.data.attributed).toBe(true);
    expect(await rows()).toEqual([['meta', 1, 50]]);
  });

  it('validates its query and keeps to the key’s account', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const get = (query: string, key = ctx.a.live) => call(ctx.app, 'GET', `/v1/analytics/cohorts?${query}`, { key });
    expect(expectError(await get(''), 400, 'missing_required_field').details).toMatchObject({ field: 'storeId' });
    expect(expectError(await get(`storeId=${storeId}&by=week`), 400, 'invalid_request').details).toMatchObject({ field: 'by' });
    expect(expectError(await get(`storeId=${storeId}&startDate=2026-02-30`), 400, 'invalid_request').details).toMatchObject({
      field: 'startDate',
    });
    expect(
      expectError(await get(`storeId=${storeId}&startDate=2026-05-01&endDate=2026-04-01`), 400, 'invalid_request').details,
    ).toMatchObject({ field: 'startDate', reason: 'out_of_range' });
    expect(
      expectError(await get(`storeId=${storeId}&startDate=2020-01-01&endDate=2026-01-01`), 400, 'invalid_request').details,
    ).toMatchObject({ field: 'endDate', reason: 'out_of_range' });
    expect(expectError(await get(`storeId=${storeId}&extra=1`), 400, 'invalid_request').details).toMatchObject({
      field: 'extra',
    });
    expectError(await get(`storeId=${storeId}`, ctx.b.live), 404, 'store_not_found');
    expectError(await get(`storeId=${storeId}`, await ctx.keyWithScopes(['conversions:read'])), 403, 'forbidden');
    // Defaults: the twelve months ending with today's.
    const data = (await get(`storeId=${storeId}`)).body.data;
    expect(data.cohorts).toHaveLength(12);
    expect(data.endDate).toBe(date(Date.now()));
    expect(data.startDate.endsWith('-01')).toBe(true);
  });
});
