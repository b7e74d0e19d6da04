import { describe, expect, it } from 'vitest';
import { call, clickBody, conversionBody, expectError, makeStore, newAccountsEachTest } from '../helpers.js';

const DAY_MS = 86_400_000;
const BOT_UA = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';

/** The UTC calendar date `days` days before now. Clicks must be within the last 90 days. */
const utcDaysAgo = (days: number) => new Date(Date.now() - days * DAY_MS).toISOString().slice(0, 10);
const addDays = (date: string, days: number) =>
  new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
/** The calendar date of an instant in a time zone. */
const localDate = (ms: number, timeZone: string) =>
  new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(ms);

describe('GET /v1/analytics/metrics', () => {
  const ctx = newAccountsEachTest();

  async function click(
    storeId: string,
    fbclid: string,
    timestamp: string,
    extra: Record<string, unknown> = {},
    key = ctx.a.live,
  ) {
    const res = await call(ctx.app, 'POST', '/v1/track/click', {
      key,
      body: clickBody(storeId, { fbclid, timestamp, ...extra }),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data;
  }

  async function convert(storeId: string, fields: Record<string, unknown>, key = ctx.a.live) {
    const res = await call(ctx.app, 'POST', '/v1/track/conversion', { key, body: conversionBody(storeId, fields) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data;
  }

  async function spend(storeId: string, entries: unknown[], key = ctx.a.live) {
    const res = await call(ctx.app, 'POST', `/v1/stores/${storeId}/ad-spend`, { key, body: { entries } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }

  const metrics = (query: string, key = ctx.a.live) => call(ctx.app, 'GET', `/v1/analytics/metrics?${query}`, { key });

  async function metricsOk(query: string, key = ctx.a.live) {
    const res = await metrics(query, key);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data;
  }

  it('computes every field of the table', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const day = utcDaysAgo(10);
    const before = addDays(day, -5);
    await click(storeId, 'fb_1', `${day}T09:00:00Z`);
    await click(storeId, 'fb_2', `${day}T09:10:00Z`);
    await click(storeId, 'fb_3', `${day}T09:20:00Z`);
    await click(storeId, 'fb_3', `${day}T09:20:00Z`); // the same fbclid again: counted once
    await click(storeId, 'fb_bot', `${day}T09:30:00Z`, { userAgent: BOT_UA });
    await click(storeId, 'fb_old', `${before}T09:00:00Z`);

    const attributed = await convert(storeId, { fbclid: 'fb_1', eventValue: 100.1, timestamp: `${day}T10:00:00Z` });
    expect(attributed.attributed).toBe(true);
    await convert(storeId, { eventValue: 20.2, timestamp: `${day}T11:00:00Z` });
    const lead = await convert(storeId, { eventType: 'Lead', fbclid: 'fb_2', eventValue: 5, timestamp: `${day}T12:00:00Z` });
    expect(lead.attributed).toBe(true);
    const euro = await convert(storeId, { fbclid: 'fb_3', eventValue: 50, currency: 'EUR', timestamp: `${day}T13:00:00Z` });
    expect(euro.attributed).toBe(true);
    const botConv = await convert(storeId, {
      eventType: 'signup',
      fbclid: 'fb_bot',
      eventValue: 0,
      timestamp: `${day}T14:00:00Z`,
    });
    expect(botConv.attributed).toBe(false);
    await convert(storeId, { eventValue: 999, fbclid: 'fb_old', timestamp: `${before}T10:00:00Z` });

    const data = await metricsOk(`storeId=${storeId}&startDate=${day}&endDate=${day}`);
    expect(data).toEqual({
      storeId,
      totalClicks: 3,
      totalConversions: 5,
      totalRevenue: 120.3,
      attributedConversions: 3,
      attributedRevenue: 100.1,
      refunds: 0,
      netRevenue: 120.3,
      conversionRate: 100,
      averageOrderValue: 60.15,
      roas: null,
      adSpend: 0,
      currency: 'USD',
      startDate: day,
      endDate: day,
      timezone: 'UTC',
      revenueByCurrency: { EUR: 50 },
      adSpendByCurrency: {},
      spendByCurrency: {},
      warnings: [],
      // No exchange rates loaded: the EUR purchase stays apart.
      converted: { totalRevenue: 120.3, attributedRevenue: 100.1, unconvertedByCurrency: { EUR: 50 } },
      livemode: true,
    });

    // widening the range to the earlier day picks its click and purchase up
    const wide = await metricsOk(`storeId=${storeId}&startDate=${before}&endDate=${day}`);
    expect(wide).toMatchObject({
      totalClicks: 4,
      totalConversions: 6,
      totalRevenue: 1119.3,
      attributedConversions: 4,
      attributedRevenue: 1099.1,
      conversionRate: 100,
      averageOrderValue: 373.1,
    });
  });

  it('conversionRate is attributed / clicks × 100 with 2 decimals, and 0 without clicks', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const day = utcDaysAgo(3);
    const range = `storeId=${storeId}&startDate=${day}&endDate=${day}`;

    // conversions but no clicks
    await convert(storeId, { eventValue: 10, timestamp: `${day}T08:00:00Z` });
    expect(await metricsOk(range)).toMatchObject({ totalClicks: 0, attributedConversions: 0, conversionRate: 0 });

    await click(storeId, 'a1', `${day}T09:00:00Z`);
    await click(storeId, 'a2', `${day}T09:01:00Z`);
    await click(storeId, 'a3', `${day}T09:02:00Z`);
    await convert(storeId, { fbclid: 'a2', eventValue: 10, timestamp: `${day}T10:00:00Z` });
    expect(await metricsOk(range)).toMatchObject({ totalClicks: 3, attributedConversions: 1, conversionRate: 33.33 });

    await convert(storeId, { fbclid: 'a3', eventType: 'Lead', eventValue: 0, timestamp: `${day}T10:00:00Z` });
    expect(await metricsOk(range)).toMatchObject({ totalClicks: 3, attributedConversions: 2, conversionRate: 66.67 });
  });

  it('averageOrderValue is rounded to 2 decimals, 0 without purchases, and only over store-currency purchases', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const day = utcDaysAgo(4);
    const range = `storeId=${storeId}&startDate=${day}&endDate=${day}`;
    await convert(storeId, { eventType: 'Lead', eventValue: 500, timestamp: `${day}T08:00:00Z` });
    expect(await metricsOk(range)).toMatchObject({ totalConversions: 1, totalRevenue: 0, averageOrderValue: 0 });

    await convert(storeId, { eventValue: 10, timestamp: `${day}T09:00:00Z` });
    await convert(storeId, { eventValue: 20, timestamp: `${day}T09:00:00Z` });
    await convert(storeId, { eventValue: 5.01, timestamp: `${day}T09:00:00Z` });
    await convert(storeId, { eventValue: 1000, currency: 'JPY', timestamp: `${day}T09:00:00Z` });
    expect(await metricsOk(range)).toMatchObject({
      totalConversions: 5,
      totalRevenue: 35.01,
      averageOrderValue: 11.67,
      revenueByCurrency: { JPY: 1000 },
    });
  });

  it('sums money exactly', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const day = utcDaysAgo(2);
    await click(storeId, 'x1', `${day}T08:00:00Z`);
    await click(storeId, 'x2', `${day}T08:00:00Z`);
    await convert(storeId, { fbclid: 'x1', eventValue: 0.1, timestamp: `${day}T09:00:00Z` });
    await convert(storeId, { fbclid: 'x2', eventValue: 0.2, timestamp: `${day}T09:00:00Z` });
    const data = await metricsOk(`storeId=${storeId}&startDate=${day}&endDate=${day}`);
    expect(data.totalRevenue).toBe(0.3);
    expect(data.attributedRevenue).toBe(0.3);
    expect(data.averageOrderValue).toBe(0.15);
  });

  it('keeps other currencies out of totalRevenue in a non-USD store', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live, { currency: 'EUR' });
    const day = utcDaysAgo(6);
    await click(storeId, 'e1', `${day}T08:00:00Z`);
    await convert(storeId, { fbclid: 'e1', eventValue: 80, currency: 'eur', timestamp: `${day}T09:00:00Z` });
    await convert(storeId, { eventValue: 30, currency: 'USD', timestamp: `${day}T09:00:00Z` });
    await convert(storeId, { eventValue: 12.5, currency: 'USD', timestamp: `${day}T09:30:00Z` });
    await convert(storeId, { eventValue: 7, currency: 'GBP', timestamp: `${day}T09:30:00Z` });
    // non-Purchase events in another currency are not revenue anywhere
    await convert(storeId, { eventType: 'AddToCart', eventValue: 99, currency: 'CHF', timestamp: `${day}T09:30:00Z` });
    expect(await metricsOk(`storeId=${storeId}&startDate=${day}&endDate=${day}`)).toMatchObject({
      currency: 'EUR',
      totalConversions: 5,
      totalRevenue: 80,
      attributedRevenue: 80,
      averageOrderValue: 80,
      revenueByCurrency: { GBP: 7, USD: 42.5 },
    });
  });

  it('roas is null without spend and attributedRevenue / adSpend with spend in range', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const day = utcDaysAgo(5);
    const range = `storeId=${storeId}&startDate=${day}&endDate=${day}`;
    await click(storeId, 'r1', `${day}T08:00:00Z`);
    await convert(storeId, { fbclid: 'r1', eventValue: 100.1, timestamp: `${day}T09:00:00Z` });
    await convert(storeId, { eventValue: 50, timestamp: `${day}T09:00:00Z` }); // not attributed: not in ROAS
    expect(await metricsOk(range)).toMatchObject({ roas: null, adSpend: 0, attributedRevenue: 100.1 });

    // spend outside the range does not count
    await spend(storeId, [{ date: addDays(day, -1), amount: 1000, currency: 'USD' }]);
    expect(await metricsOk(range)).toMatchObject({ roas: null, adSpend: 0 });

    await spend(storeId, [
      { date: day, amount: 20, currency: 'USD' },
      { date: day, amount: 10, currency: 'USD', campaignId: 'c2' },
    ]);
    expect(await metricsOk(range)).toMatchObject({ roas: 3.34, adSpend: 30, adSpendByCurrency: {} });

    // spend in another currency without an exchange rate for its day is not added into adSpend: it is listed apart, with a warning
    await spend(storeId, [{ date: day, amount: 500, currency: 'EUR', campaignId: 'eu' }]);
    expect(await metricsOk(range)).toMatchObject({
      roas: 3.34,
      adSpend: 30,
      adSpendByCurrency: { EUR: 500 },
      spendByCurrency: { EUR: 500 },
      warnings: [{ code: 'spend_not_converted', currency: 'EUR', days: [day], amount: 500 }],
    });

    const wide = await metricsOk(`storeId=${storeId}&startDate=${addDays(day, -1)}&endDate=${day}`);
    expect(wide).toMatchObject({ adSpend: 1030, roas: 0.1 });
  });

  it('roas is null when the spend recorded in range sums to 0', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const day = utcDaysAgo(5);
    await click(storeId, 'z1', `${day}T08:00:00Z`);
    await convert(storeId, { fbclid: 'z1', eventValue: 25, timestamp: `${day}T09:00:00Z` });
    await spend(storeId, [{ date: day, amount: 0, currency: 'USD' }]);
    expect(await metricsOk(`storeId=${storeId}&startDate=${day}&endDate=${day}`)).toMatchObject({
      roas: null,
      adSpend: 0,
      attributedRevenue: 25,
    });
  });

  it('roas is 0 when spend is recorded but nothing is attributed', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const day = utcDaysAgo(5);
    await convert(storeId, { eventValue: 50, timestamp: `${day}T09:00:00Z` });
    await spend(storeId, [{ date: day, amount: 12.34, currency: 'USD' }]);
    expect(await metricsOk(`storeId=${storeId}&startDate=${day}&endDate=${day}`)).toMatchObject({
      roas: 0,
      adSpend: 12.34,
      totalRevenue: 50,
      attributedRevenue: 0,
    });
  });

  it("assigns a conversion to the store time zone's calendar day (America/New_York)", async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live, { timezone: 'America/New_York' });
    // 03:30 UTC on Nov 1 is 23:30 EDT on Oct 31
    await convert(storeId, { eventValue: 10, timestamp: '2026-11-01T03:30:00Z' });
    // Nov 1 is the 25-hour day when DST ends: 04:30 UTC on Nov 2 is still 23:30 EST on Nov 1
    await convert(storeId, { eventValue: 7, timestamp: '2026-11-02T04:30:00Z' });

    expect(await metricsOk(`storeId=${storeId}&startDate=2026-10-31&endDate=2026-10-31`)).toMatchObject({
      totalConversions: 1,
      totalRevenue: 10,
      startDate: '2026-10-31',
      endDate: '2026-10-31',
      timezone: 'America/New_York',
    });
    expect(await metricsOk(`storeId=${storeId}&startDate=2026-11-01&endDate=2026-11-01`)).toMatchObject({
      totalConversions: 1,
      totalRevenue: 7,
    });
    expect(await metricsOk(`storeId=${storeId}&startDate=2026-11-02&endDate=2026-11-02`)).toMatchObject({
      totalConversions: 0,
      totalRevenue: 0,
    });

    // the same instants in a UTC store fall on the next day each
    const utcStore = await makeStore(ctx.app, ctx.a.live);
    await convert(utcStore, { eventValue: 10, timestamp: '2026-11-01T03:30:00Z' });
    expect(await metricsOk(`storeId=${utcStore}&startDate=2026-10-31&endDate=2026-10-31`)).toMatchObject({ totalConversions: 0 });
    expect(await metricsOk(`storeId=${utcStore}&startDate=2026-11-01&endDate=2026-11-01`)).toMatchObject({ totalConversions: 1 });
  });

  it("assigns a click to the store time zone's calendar day", async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live, { timezone: 'Asia/Tokyo' });
    const day = utcDaysAgo(8);
    // 20:00 UTC is 05:00 the next day in Tokyo (UTC+9, no DST)
    await click(storeId, 'tokyo_late', `${day}T20:00:00Z`);
    // 14:59 UTC is 23:59 the same day in Tokyo
    await click(storeId, 'tokyo_early', `${day}T14:59:00Z`);
    expect(await metricsOk(`storeId=${storeId}&startDate=${day}&endDate=${day}`)).toMatchObject({ totalClicks: 1 });
    expect(await metricsOk(`storeId=${storeId}&startDate=${addDays(day, 1)}&endDate=${addDays(day, 1)}`)).toMatchObject({
      totalClicks: 1,
    });
    expect(await metricsOk(`storeId=${storeId}&startDate=${addDays(day, -1)}&endDate=${addDays(day, -1)}`)).toMatchObject({
      totalClicks: 0,
    });
  });

  it('treats both dates as inclusive', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const first = utcDaysAgo(12);
    const last = addDays(first, 2);
    await convert(storeId, { eventValue: 1, timestamp: `${addDays(first, -1)}T23:59:59.999Z` });
    await convert(storeId, { eventValue: 2, timestamp: `${first}T00:00:00.000Z` });
    await convert(storeId, { eventValue: 4, timestamp: `${addDays(first, 1)}T12:00:00Z` });
    await convert(storeId, { eventValue: 8, timestamp: `${last}T23:59:59.999Z` });
    await convert(storeId, { eventValue: 16, timestamp: `${addDays(last, 1)}T00:00:00.000Z` });
    await click(storeId, 'edge_start', `${first}T00:00:00.000Z`);
    await click(storeId, 'edge_end', `${last}T23:59:59.999Z`);
    await click(storeId, 'edge_after', `${addDays(last, 1)}T00:00:00.000Z`);
    expect(await metricsOk(`storeId=${storeId}&startDate=${first}&endDate=${last}`)).toMatchObject({
      totalConversions: 3,
      totalRevenue: 14,
      totalClicks: 2,
    });
    expect(await metricsOk(`storeId=${storeId}&startDate=${last}&endDate=${last}`)).toMatchObject({
      totalConversions: 1,
      totalRevenue: 8,
      totalClicks: 1,
    });
  });

  it('defaults to the 30 days ending today in the store time zone', async () => {
    // UTC+14: "today" there is a day ahead of UTC for most of the UTC day
    const timezone = 'Pacific/Kiritimati';
    const storeId = await makeStore(ctx.app, ctx.a.live, { timezone });
    const now = Date.now();
    await convert(storeId, { eventValue: 1, timestamp: new Date(now - 60_000).toISOString() });
    await convert(storeId, { eventValue: 2, timestamp: new Date(now - 28 * DAY_MS).toISOString() });
    await convert(storeId, { eventValue: 4, timestamp: new Date(now - 31 * DAY_MS).toISOString() });

    const todayBefore = localDate(Date.now(), timezone);
    const data = await metricsOk(`storeId=${storeId}`);
    const todayAfter = localDate(Date.now(), timezone);
    expect([todayBefore, todayAfter]).toContain(data.endDate);
    expect(data.startDate).toBe(addDays(data.endDate, -29));
    expect(data.timezone).toBe(timezone);
    expect(data.totalConversions).toBe(2);
    expect(data.totalRevenue).toBe(3);

    // only a start: the range runs to today
    const fromStart = await metricsOk(`storeId=${storeId}&startDate=${addDays(todayBefore, -40)}`);
    expect([todayBefore, todayAfter]).toContain(fromStart.endDate);
    expect(fromStart.startDate).toBe(addDays(todayBefore, -40));
    expect(fromStart.totalConversions).toBe(3);

    // only a start long ago: the range runs for the longest range allowed, 731 days
    const capped = await metricsOk(`storeId=${storeId}&startDate=2020-01-01`);
    expect(capped).toMatchObject({ startDate: '2020-01-01', endDate: '2021-12-31', totalConversions: 0 });

    // only an end: the 30 days ending there
    const toEnd = await metricsOk(`storeId=${storeId}&endDate=2026-03-31`);
    expect(toEnd).toMatchObject({ startDate: '2026-03-02', endDate: '2026-03-31' });
  });

  it('rejects a start after the end, and a range over 731 days', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const error = expectError(
      await metrics(`storeId=${storeId}&startDate=2026-05-02&endDate=2026-05-01`),
      400,
      'invalid_request',
    );
    expect(error.details?.field).toBe('startDate');
    expectError(await metrics(`storeId=${storeId}&startDate=2024-01-01&endDate=2026-01-01`), 400, 'invalid_request');
    // 731 days inclusive is the longest range allowed
    const longest = await metricsOk(`storeId=${storeId}&startDate=2024-01-01&endDate=2025-12-31`);
    expect(longest).toMatchObject({ startDate: '2024-01-01', endDate: '2025-12-31' });
    // one day is fine
    expect(await metricsOk(`storeId=${storeId}&startDate=2026-05-01&endDate=2026-05-01`)).toMatchObject({
      startDate: '2026-05-01',
      endDate: '2026-05-01',
    });
  });

  it('rejects malformed and impossible dates with details.field', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const cases: Array<[string, string]> = [
      ['startDate=2026-02-30&endDate=2026-03-01', 'startDate'],
      ['startDate=2026-02-01&endDate=2026-13-01', 'endDate'],
      ['startDate=2026-2-1', 'startDate'],
      ['endDate=yesterday', 'endDate'],
      ['startDate=2026-02-01T00:00:00Z', 'startDate'],
    ];
    for (const [query, field] of cases) {
      const error = expectError(await metrics(`storeId=${storeId}&${query}`), 400, 'invalid_request');
      expect(error.details?.field).toBe(field);
    }
  });

  it('requires storeId', async () => {
    const missing = expectError(await metrics('startDate=2026-05-01&endDate=2026-05-02'), 400, 'missing_required_field');
    expect(missing.details).toEqual({ field: 'storeId', reason: 'required_field_missing' });
    const empty = expectError(await metrics('storeId='), 400, 'missing_required_field');
    expect(empty.details?.field).toBe('storeId');
  });

  it("answers store_not_found for another account's store", async () => {
    const foreign = await makeStore(ctx.app, ctx.b.live);
    expectError(await metrics(`storeId=${foreign}`), 404, 'store_not_found');
    expectError(await metrics('storeId=st_unknown'), 404, 'store_not_found');
  });

  it('validates the dates before looking the store up', async () => {
    const foreign = await makeStore(ctx.app, ctx.b.live);
    const error = expectError(await metrics(`storeId=${foreign}&startDate=2026-02-30`), 400, 'invalid_request');
    expect(error.details?.field).toBe('startDate');
  });

  it('never moves live metrics with test-mode data, and the test key sees only test data', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const day = utcDaysAgo(7);
    const range = `storeId=${storeId}&startDate=${day}&endDate=${day}`;
    await click(storeId, 'live_click', `${day}T08:00:00Z`);
    await convert(storeId, { fbclid: 'live_click', eventValue: 40, timestamp: `${day}T09:00:00Z` });
    await spend(storeId, [{ date: day, amount: 10, currency: 'USD' }]);
    const live = await metricsOk(range);

    await click(storeId, 'test_click', `${day}T08:00:00Z`, {}, ctx.a.test);
    await click(storeId, 'test_click_2', `${day}T08:00:00Z`, {}, ctx.a.test);
    const testConv = await convert(
      storeId,
      { fbclid: 'test_click', eventValue: 1000, timestamp: `${day}T09:00:00Z` },
      ctx.a.test,
    );
    expect(testConv.attributed).toBe(true);
    await convert(storeId, { eventValue: 3, currency: 'EUR', timestamp: `${day}T09:00:00Z` }, ctx.a.test);
    await spend(storeId, [{ date: day, amount: 500, currency: 'USD' }], ctx.a.test);
    // a test click never attributes a live conversion
    const crossed = await convert(storeId, {
      fbclid: 'test_click_2',
      eventType: 'Lead',
      eventValue: 0,
      timestamp: `${day}T10:00:00Z`,
    });
    expect(crossed.attributed).toBe(false);

    const liveAfter = await metricsOk(range);
    expect(liveAfter).toEqual({ ...live, totalConversions: 2 });
    expect(liveAfter).toMatchObject({
      totalClicks: 1,
      totalRevenue: 40,
      attributedConversions: 1,
      attributedRevenue: 40,
      adSpend: 10,
      roas: 4,
      revenueByCurrency: {},
      livemode: true,
    });

    expect(await metricsOk(range, ctx.a.test)).toMatchObject({
      totalClicks: 2,
      totalConversions: 2,
      totalRevenue: 1000,
      attributedConversions: 1,
      attributedRevenue: 1000,
      conversionRate: 50,
      adSpend: 500,
      roas: 2,
      revenueByCurrency: { EUR: 3 },
      livemode: false,
    });
  });
});
