import { describe, expect, it } from 'vitest';
import { expectError, makeStore, newAccountsEachTest } from '../helpers.js';
import { addDays, analyticsApi, HOUR_MS, utcDaysAgo } from './fixtures.js';

interface Bucket {
  start: string;
  label: string;
  clicks: number;
  conversions: number;
  revenue: number;
  attributedConversions: number;
  attributedRevenue: number;
  conversionRate: number;
  averageOrderValue: number;
}

const ZERO = {
  clicks: 0,
  conversions: 0,
  revenue: 0,
  attributedConversions: 0,
  attributedRevenue: 0,
  refunds: 0,
  conversionRate: 0,
  averageOrderValue: 0,
};
/** A day bucket also has the day's ad spend. */
const ZERO_DAY = { ...ZERO, adSpend: 0 };

describe('GET /v1/analytics/timeseries', () => {
  const ctx = newAccountsEachTest();
  const api = analyticsApi(() => ctx);

  const series = (query: string, key?: string) => api.getOk(`/v1/analytics/timeseries?${query}`, key);

  /** New York, around the end of DST (Sunday 2026-11-01 has 25 hours). */
  async function newYorkFallBack() {
    const storeId = await makeStore(ctx.app, ctx.a.live, { timezone: 'America/New_York' });
    await api.click(storeId, 'e', '2026-11-01T03:59:00Z'); // Oct 31 23:59 EDT
    await api.click(storeId, 'a', '2026-11-01T04:30:00Z'); // Nov 1 00:30 EDT
    await api.click(storeId, 'b', '2026-11-01T05:30:00Z'); // 01:30 EDT (the first 01:00 hour)
    await api.click(storeId, 'c', '2026-11-01T06:30:00Z'); // 01:30 EST (the second 01:00 hour)
    await api.click(storeId, 'd', '2026-11-02T04:30:00Z'); // Nov 1 23:30 EST
    expect((await api.convert(storeId, { fbclid: 'b', eventValue: 10, timestamp: '2026-11-01T06:10:00Z' })).attributed).toBe(
      true,
    );
    await api.convert(storeId, { eventValue: 20.01, timestamp: '2026-11-01T05:10:00Z' }); // 01:10 EDT
    await api.convert(storeId, { eventValue: 7, currency: 'EUR', timestamp: '2026-11-01T12:00:00Z' }); // 07:00 EST
    // Nov 2 00:00 EST: a Lead, attributed, on a day without clicks
    await api.convert(storeId, { eventType: 'Lead', fbclid: 'c', eventValue: 0, timestamp: '2026-11-02T05:00:00Z' });
    return storeId;
  }

  it('gives one bucket per local day, across the end of DST (America/New_York)', async () => {
    const storeId = await newYorkFallBack();
    const data = await series(`storeId=${storeId}&startDate=2026-10-31&endDate=2026-11-02`);
    expect(data).toMatchObject({
      storeId,
      interval: 'day',
      startDate: '2026-10-31',
      endDate: '2026-11-02',
      timezone: 'America/New_York',
      currency: 'USD',
      livemode: true,
    });
    expect(data.buckets).toEqual([
      { ...ZERO_DAY, start: '2026-10-31T04:00:00.000Z', label: '2026-10-31', clicks: 1 },
      {
        start: '2026-11-01T04:00:00.000Z',
        label: '2026-11-01',
        clicks: 4,
        conversions: 3,
        revenue: 30.01,
        attributedConversions: 1,
        attributedRevenue: 10,
        refunds: 0,
        conversionRate: 25,
        averageOrderValue: 15.01,
        adSpend: 0,
      },
      // midnight EST: the 25-hour day made this one start 25 hours after the previous one
      { ...ZERO_DAY, start: '2026-11-02T05:00:00.000Z', label: '2026-11-02', conversions: 1, attributedConversions: 1 },
    ]);
  });

  it('gives 25 hourly buckets on the day DST ends, each hour once per offset', async () => {
    const storeId = await newYorkFallBack();
    const data = await series(`storeId=${storeId}&startDate=2026-11-01&endDate=2026-11-01&interval=hour`);
    expect(data.interval).toBe('hour');
    const buckets = data.buckets as Bucket[];
    expect(buckets).toHaveLength(25);
    const expected: Bucket[] = [];
    for (let i = 0; i < 25; i++) {
      const start = Date.parse('2026-11-01T04:00:00Z') + i * HOUR_MS;
      const [hour, offset] = i <= 1 ? [i, '-04:00'] : [i - 1, '-05:00'];
      expected.push({
        ...ZERO,
        start: new Date(start).toISOString(),
        label: `2026-11-01T${String(hour).padStart(2, '0')}:00${offset}`,
      });
    }
    Object.assign(expected[0] as Bucket, { clicks: 1 });
    Object.assign(expected[1] as Bucket, { clicks: 1, conversions: 1, revenue: 20.01, averageOrderValue: 20.01 });
    Object.assign(expected[2] as Bucket, {
      clicks: 1,
      conversions: 1,
      revenue: 10,
      attributedConversions: 1,
      attributedRevenue: 10,
      conversionRate: 100,
      averageOrderValue: 10,
    });
    Object.assign(expected[8] as Bucket, { conversions: 1 }); // 07:00 EST, EUR: counted, not revenue
    Object.assign(expected[24] as Bucket, { clicks: 1 });
    expect(buckets).toEqual(expected);
  });

  it('gives 23 hourly buckets on the day DST starts', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live, { timezone: 'America/New_York' });
    await api.convert(storeId, { eventValue: 1, timestamp: '2026-03-08T06:59:59Z' }); // 01:59:59 EST
    await api.convert(storeId, { eventValue: 2, timestamp: '2026-03-08T07:00:00Z' }); // 03:00 EDT
    const buckets = (await series(`storeId=${storeId}&startDate=2026-03-08&endDate=2026-03-08&interval=hour`))
      .buckets as Bucket[];
    expect(buckets).toHaveLength(23);
    expect(buckets.slice(0, 4).map((b) => [b.start, b.label, b.revenue])).toEqual([
      ['2026-03-08T05:00:00.000Z', '2026-03-08T00:00-05:00', 0],
      ['2026-03-08T06:00:00.000Z', '2026-03-08T01:00-05:00', 1],
      ['2026-03-08T07:00:00.000Z', '2026-03-08T03:00-04:00', 2],
      ['2026-03-08T08:00:00.000Z', '2026-03-08T04:00-04:00', 0],
    ]);
    expect(buckets.at(-1)?.label).toBe('2026-03-08T23:00-04:00');
    const day = await series(`storeId=${storeId}&startDate=2026-03-08&endDate=2026-03-09`);
    expect(day.buckets.map((b: Bucket) => [b.start, b.revenue, b.conversions])).toEqual([
      ['2026-03-08T05:00:00.000Z', 3, 2],
      ['2026-03-09T04:00:00.000Z', 0, 0],
    ]);
  });

  it('follows a :30 zone (Asia/Kolkata): days and hours start at :30 UTC', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live, { timezone: 'Asia/Kolkata' });
    const day = utcDaysAgo(10);
    const next = addDays(day, 1);
    await api.click(storeId, 'k_prev', `${day}T18:29:59.999Z`); // 23:59:59.999 IST on `day`
    await api.click(storeId, 'k_first', `${day}T18:30:00.000Z`); // 00:00 IST on `next`
    await api.click(storeId, 'k_mid', `${next}T05:29:00Z`); // 10:59 IST
    await api.convert(storeId, { fbclid: 'k_mid', eventValue: 12.34, timestamp: `${next}T05:45:00Z` }); // 11:15 IST
    await api.convert(storeId, { eventValue: 0.01, timestamp: `${next}T18:29:59Z` }); // 23:59:59 IST

    const days = await series(`storeId=${storeId}&startDate=${day}&endDate=${next}`);
    expect(days.buckets).toEqual([
      { ...ZERO_DAY, start: `${addDays(day, -1)}T18:30:00.000Z`, label: day, clicks: 1 },
      {
        start: `${day}T18:30:00.000Z`,
        label: next,
        clicks: 2,
        conversions: 2,
        revenue: 12.35,
        attributedConversions: 1,
        attributedRevenue: 12.34,
        refunds: 0,
        conversionRate: 50,
        averageOrderValue: 6.18, // 12.35 / 2 = 6.175, half up
        adSpend: 0,
      },
    ]);

    const hours = (await series(`storeId=${storeId}&startDate=${next}&endDate=${next}&interval=hour`)).buckets as Bucket[];
    expect(hours).toHaveLength(24);
    expect(hours[0]).toEqual({ ...ZERO, start: `${day}T18:30:00.000Z`, label: `${next}T00:00+05:30`, clicks: 1 });
    expect(hours[10]).toEqual({ ...ZERO, start: `${next}T04:30:00.000Z`, label: `${next}T10:00+05:30`, clicks: 1 });
    expect(hours[11]).toEqual({
      start: `${next}T05:30:00.000Z`,
      label: `${next}T11:00+05:30`,
      clicks: 0,
      conversions: 1,
      revenue: 12.34,
      attributedConversions: 1,
      attributedRevenue: 12.34,
      refunds: 0,
      conversionRate: 0,
      averageOrderValue: 12.34,
    });
    expect(hours[23]).toMatchObject({ label: `${next}T23:00+05:30`, conversions: 1, revenue: 0.01 });
    const others = hours.filter((_, i) => ![0, 10, 11, 23].includes(i));
    expect(others.every((b) => b.clicks === 0 && b.conversions === 0)).toBe(true);
  });

  it('lists every bucket with zeros, by day and by hour', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const start = utcDaysAgo(20);
    const end = addDays(start, 6);
    const days = await series(`storeId=${storeId}&startDate=${start}&endDate=${end}`);
    expect(days.buckets).toHaveLength(7);
    expect(days.buckets.map((b: Bucket) => b.label)).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => addDays(start, i)));
    for (const b of days.buckets) expect(b).toEqual({ ...ZERO_DAY, start: `${b.label}T00:00:00.000Z`, label: b.label });

    const hours = await series(`storeId=${storeId}&startDate=${start}&endDate=${end}&interval=hour`);
    expect(hours.buckets).toHaveLength(7 * 24);
    expect(hours.buckets[25]).toEqual({
      ...ZERO,
      start: `${addDays(start, 1)}T01:00:00.000Z`,
      label: `${addDays(start, 1)}T01:00+00:00`,
    });
  });

  it('adds up to the metrics of the same range', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live, { timezone: 'Europe/Berlin' });
    const day = utcDaysAgo(6);
    for (let i = 0; i < 6; i++) await api.click(storeId, `m${i}`, `${day}T0${i}:15:00Z`);
    await api.convert(storeId, { fbclid: 'm1', eventValue: 19.99, timestamp: `${day}T06:00:00Z` });
    await api.convert(storeId, { fbclid: 'm2', eventValue: 0.02, timestamp: `${day}T23:30:00Z` });
    await api.convert(storeId, { eventValue: 5, currency: 'JPY', timestamp: `${day}T07:00:00Z` });
    const range = `storeId=${storeId}&startDate=${addDays(day, -1)}&endDate=${addDays(day, 1)}`;
    const metrics = await api.getOk(`/v1/analytics/metrics?${range}`);
    for (const interval of ['day', 'hour']) {
      const buckets = (await series(`${range}&interval=${interval}`)).buckets as Bucket[];
      const cents = (f: (b: Bucket) => number) => buckets.reduce((sum, b) => sum + Math.round(f(b) * 100), 0);
      expect(buckets.reduce((s, b) => s + b.clicks, 0)).toBe(metrics.totalClicks);
      expect(buckets.reduce((s, b) => s + b.conversions, 0)).toBe(metrics.totalConversions);
      expect(buckets.reduce((s, b) => s + b.attributedConversions, 0)).toBe(metrics.attributedConversions);
      expect(cents((b) => b.revenue)).toBe(Math.round(metrics.totalRevenue * 100));
      expect(cents((b) => b.attributedRevenue)).toBe(Math.round(metrics.attributedRevenue * 100));
    }
    expect(metrics).toMatchObject({ totalClicks: 6, totalConversions: 3, totalRevenue: 20.01, attributedConversions: 2 });
  });

  it('gives each day its ad spend in the store currency, adding up to the metrics’ adSpend (the Channels chart)', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live, { timezone: 'Europe/Berlin', currency: 'EUR' });
    const day = utcDaysAgo(5);
    const entries = [
      { date: day, amount: 10.1, currency: 'EUR', platform: 'meta', campaignId: 'c1' },
      { date: day, amount: 0.2, currency: 'EUR', platform: 'google_ads', campaignId: 'g1' },
      { date: addDays(day, 2), amount: 7, currency: 'EUR', platform: 'meta', campaignId: 'c1' },
      { date: addDays(day, 2), amount: 99, currency: 'USD', platform: 'tiktok', campaignId: 't1' },
    ];
    await api.spend(storeId, entries);
    const range = `storeId=${storeId}&startDate=${addDays(day, -1)}&endDate=${addDays(day, 3)}`;
    const buckets = (await series(`${range}&interval=day`)).buckets as Array<Bucket & { adSpend: number }>;
    expect(buckets.map((b) => b.adSpend)).toEqual([0, 10.3, 0, 7, 0]);
    const metrics = await api.getOk(`/v1/analytics/metrics?${range}`);
    expect(metrics.adSpend).toBe(17.3);
    // Hourly buckets have no spend: it is recorded per day.
    const hours = (await series(`${range}&interval=hour`)).buckets as Array<Record<string, unknown>>;
    expect(hours.some((b) => 'adSpend' in b)).toBe(false);
  });

  it('defaults to the 30 days ending today, and caps an open hourly range at 31 days', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    await api.click(storeId, 'now', new Date(Date.now() - 60_000).toISOString());
    const before = utcDaysAgo(0);
    const days = await series(`storeId=${storeId}`);
    const after = utcDaysAgo(0);
    expect([before, after]).toContain(days.endDate);
    expect(days.startDate).toBe(addDays(days.endDate, -29));
    expect(days.buckets).toHaveLength(30);
    expect(days.buckets.reduce((s: number, b: Bucket) => s + b.clicks, 0)).toBe(1);

    expect((await series(`storeId=${storeId}&interval=hour`)).buckets).toHaveLength(30 * 24);
    const open = await series(`storeId=${storeId}&interval=hour&startDate=2026-01-01`);
    expect(open).toMatchObject({ startDate: '2026-01-01', endDate: '2026-01-31' });
    expect(open.buckets).toHaveLength(31 * 24);
    // 31 days is the longest hourly range
    const longest = await series(`storeId=${storeId}&interval=hour&startDate=2026-01-01&endDate=2026-01-31`);
    expect(longest.buckets).toHaveLength(744);
    // a day range may cover 731 days
    expect((await series(`storeId=${storeId}&startDate=2024-01-01&endDate=2025-12-31`)).buckets).toHaveLength(731);
  });

  it('refuses bad input with details.field, before looking the store up', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const foreign = await makeStore(ctx.app, ctx.b.live);
    const cases: Array<[string, string, string]> = [
      ['interval=week', 'interval', 'unknown_value'],
      ['interval=HOUR', 'interval', 'unknown_value'],
      ['interval=hour&startDate=2026-01-01&endDate=2026-02-01', 'interval', 'out_of_range'],
      ['startDate=2026-02-30', 'startDate', 'invalid_format'],
      ['endDate=2026-1-1', 'endDate', 'invalid_format'],
      ['startDate=2026-05-02&endDate=2026-05-01', 'startDate', 'out_of_range'],
      ['startDate=2024-01-01&endDate=2026-01-01', 'endDate', 'out_of_range'],
      ['bucket=day', 'bucket', 'unknown_field'],
      ['limit=10', 'limit', 'unknown_field'],
    ];
    for (const [query, field, reason] of cases) {
      for (const id of [storeId, foreign]) {
        const res = await api.get(`/v1/analytics/timeseries?storeId=${id}&${query}`);
        const error = expectError(res, 400, 'invalid_request');
        expect(error.details, query).toMatchObject({ field, reason });
      }
    }
    const missing = expectError(await api.get('/v1/analytics/timeseries?interval=day'), 400, 'missing_required_field');
    expect(missing.details).toEqual({ field: 'storeId', reason: 'required_field_missing' });
  });

  it("answers store_not_found for another account's store", async () => {
    const foreign = await makeStore(ctx.app, ctx.b.live);
    await api.click(foreign, 'theirs', new Date().toISOString(), {}, ctx.b.live);
    expectError(await api.get(`/v1/analytics/timeseries?storeId=${foreign}`), 404, 'store_not_found');
    expectError(await api.get('/v1/analytics/timeseries?storeId=st_unknown'), 404, 'store_not_found');
  });

  it('separates live and test data', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const day = utcDaysAgo(3);
    await api.click(storeId, 'live', `${day}T10:00:00Z`);
    await api.convert(storeId, { fbclid: 'live', eventValue: 40, timestamp: `${day}T11:00:00Z` });
    await api.click(storeId, 'test1', `${day}T10:00:00Z`, {}, ctx.a.test);
    await api.click(storeId, 'test2', `${day}T12:00:00Z`, {}, ctx.a.test);
    await api.convert(storeId, { fbclid: 'test1', eventValue: 1000, timestamp: `${day}T11:00:00Z` }, ctx.a.test);
    const q = `storeId=${storeId}&startDate=${day}&endDate=${day}`;
    const live = await series(q);
    expect(live.livemode).toBe(true);
    expect(live.buckets[0]).toMatchObject({ clicks: 1, conversions: 1, revenue: 40, attributedRevenue: 40, conversionRate: 100 });
    const test = await series(q, ctx.a.test);
    expect(test.livemode).toBe(false);
    expect(test.buckets[0]).toMatchObject({ clicks: 2, conversions: 1, revenue: 1000, conversionRate: 50 });
  });

  it('excludes bot clicks', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const day = utcDaysAgo(2);
    await api.click(storeId, 'human', `${day}T10:00:00Z`);
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/v1/track/click',
      headers: { authorization: `Bearer ${ctx.a.live}`, 'content-type': 'application/json' },
      payload: {
        fbclid: 'bot',
        storeId,
        landingPage: 'https://shop.acme.test/?campaign_id=1',
        userAgent: 'Googlebot/2.1 (+http://www.google.com/bot.html)',
        timestamp: `${day}T10:00:00Z`,
      },
    });
    expect(res.statusCode).toBe(200);
    expect((await series(`storeId=${storeId}&startDate=${day}&endDate=${day}`)).buckets[0].clicks).toBe(1);
  });
});
