import { describe, expect, it } from 'vitest';
import { expectError, makeStore, newAccountsEachTest } from '../helpers.js';
import { addDays, analyticsApi, utcDaysAgo } from './fixtures.js';

interface Group {
  value: string | null;
  clicks: number;
  attributedConversions: number;
  attributedRevenue: number;
  refunds: number;
  netRevenue: number;
  conversionRate: number;
  spend: number | null;
  roas: number | null;
}

const MODELS = ['last_click', 'first_click', 'linear', 'time_decay', 'position_based'] as const;

describe('GET /v1/analytics/breakdown', () => {
  const ctx = newAccountsEachTest();
  const api = analyticsApi(() => ctx);

  const breakdown = (query: string, key?: string) => api.getOk(`/v1/analytics/breakdown?${query}`, key);

  /**
   * Three clicks from three campaigns, then a 100.00 purchase naming the last one (the winner)
   * with the two earlier ones as further touchpoints: 3 days, 2 days and 1 hour before it.
   */
  async function threeTouchPurchase(day: string) {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const t1 = `${addDays(day, -3)}T10:00:00Z`;
    const t2 = `${addDays(day, -2)}T10:00:00Z`;
    const t3 = `${day}T09:00:00Z`;
    const k1 = await api.click(storeId, 'k1', t1, { utm_source: 'facebook', campaign_id: 'c1', ad_id: 'a1', page: 'p/one' });
    const k2 = await api.click(storeId, 'k2', t2, { utm_source: 'google', campaign_id: 'c2', ad_id: 'a2', page: 'p/two' });
    await api.click(storeId, 'k3', t3, { utm_source: 'facebook', campaign_id: 'c3', ad_id: 'a3', page: 'p/one' });
    const purchase = await api.convert(storeId, { fbclid: 'k3', eventValue: 100, timestamp: `${day}T10:00:00Z` });
    expect(purchase.attributed).toBe(true);
    await api.addTouchpoints(purchase.conversionId, [
      { clickId: k1.clickId, clickTime: t1 },
      { clickId: k2.clickId, clickTime: t2 },
    ]);
    return { storeId, range: `startDate=${addDays(day, -3)}&endDate=${day}` };
  }

  const group = (value: string | null, clicks: number, conversions: number, revenue: number, extra = {}): Group => ({
    value,
    clicks,
    attributedConversions: conversions,
    attributedRevenue: revenue,
    refunds: 0,
    netRevenue: revenue,
    conversionRate: clicks === 0 ? 0 : Math.round((conversions * 100 * 100) / clicks) / 100,
    spend: null,
    roas: null,
    ...extra,
  });

  it("credits every model's share of a purchase in exact cents that add up to its value", async () => {
    const { storeId, range } = await threeTouchPurchase(utcDaysAgo(5));
    const expected: Record<(typeof MODELS)[number], Array<[string, number, number]>> = {
      // [campaign, credited conversions (2 decimals), credited revenue]
      last_click: [
        ['c3', 1, 100],
        ['c1', 0, 0],
        ['c2', 0, 0],
      ],
      first_click: [
        ['c1', 1, 100],
        ['c2', 0, 0],
        ['c3', 0, 0],
      ],
      // 10000 cents / 3: the odd cent goes to the most recent click
      linear: [
        ['c3', 0.33, 33.34],
        ['c1', 0.33, 33.33],
        ['c2', 0.33, 33.33],
      ],
      // weights 2^(-age / 7 days): 3 days, 2 days, 1 hour
      time_decay: [
        ['c3', 0.39, 38.91],
        ['c2', 0.32, 32.06],
        ['c1', 0.29, 29.03],
      ],
      // 40 % first, 40 % last, 20 % between; equal revenue sorts by value
      position_based: [
        ['c1', 0.4, 40],
        ['c3', 0.4, 40],
        ['c2', 0.2, 20],
      ],
    };
    for (const model of MODELS) {
      const data = await breakdown(`storeId=${storeId}&${range}&by=campaign_id&model=${model}`);
      expect(data).toMatchObject({ storeId, by: 'campaign_id', model, currency: 'USD', hasMore: false, nextCursor: null });
      expect(
        data.groups.map((g: Group) => [g.value, g.attributedConversions, g.attributedRevenue]),
        model,
      ).toEqual(expected[model]);
      const cents = data.groups.reduce((sum: number, g: Group) => sum + Math.round(g.attributedRevenue * 100), 0);
      expect(cents, model).toBe(10000);
      expect(data.groups.every((g: Group) => g.clicks === 1)).toBe(true);
    }

    // Grouped by source, facebook holds the first and the last click.
    const bySource = await breakdown(`storeId=${storeId}&${range}&by=utm_source&model=linear`);
    // the rate is computed from the exact credit: 0.666667 / 2 clicks and 0.333333 / 1 click
    expect(bySource.groups).toEqual([
      group('facebook', 2, 0.67, 66.67, { conversionRate: 33.33 }),
      group('google', 1, 0.33, 33.33, { conversionRate: 33.33 }),
    ]);
    // Landing pages group without their query string (which carries fbclid and utm_*).
    const byPage = await breakdown(`storeId=${storeId}&${range}&by=landing_page&model=position_based`);
    expect(byPage.groups).toEqual([
      group('https://shop.acme.test/p/one', 2, 0.8, 80),
      group('https://shop.acme.test/p/two', 1, 0.2, 20),
    ]);
    // The default model is last_click.
    const byAd = await breakdown(`storeId=${storeId}&${range}&by=ad_id`);
    expect(byAd.model).toBe('last_click');
    expect(byAd.groups).toEqual([group('a3', 1, 1, 100), group('a1', 1, 0, 0), group('a2', 1, 0, 0)]);
  });

  it('counts conversions of every event type and currency, revenue only for store-currency purchases', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const day = utcDaysAgo(4);
    await api.click(storeId, 'x1', `${day}T08:00:00Z`, { utm_campaign: 'spring', utm_medium: 'cpc' });
    await api.click(storeId, 'x2', `${day}T08:00:00Z`, { utm_campaign: 'spring', utm_medium: 'cpc' });
    await api.click(storeId, 'x3', `${day}T08:00:00Z`, { utm_medium: 'email' });
    await api.click(storeId, 'x4', `${day}T08:00:00Z`);
    await api.convert(storeId, { fbclid: 'x1', eventValue: 25.5, timestamp: `${day}T09:00:00Z` });
    await api.convert(storeId, { fbclid: 'x2', eventType: 'Lead', eventValue: 3, timestamp: `${day}T09:00:00Z` });
    await api.convert(storeId, { fbclid: 'x3', eventValue: 80, currency: 'EUR', timestamp: `${day}T09:00:00Z` });
    await api.convert(storeId, { eventValue: 999, timestamp: `${day}T09:00:00Z` }); // not attributed
    const range = `storeId=${storeId}&startDate=${day}&endDate=${day}`;

    // clicks without utm_campaign form one group whose value is null, listed after equal ones
    expect((await breakdown(`${range}&by=utm_campaign`)).groups).toEqual([group('spring', 2, 2, 25.5), group(null, 2, 1, 0)]);
    expect((await breakdown(`${range}&by=utm_medium`)).groups).toEqual([
      group('cpc', 2, 2, 25.5),
      group('email', 1, 1, 0),
      group(null, 1, 0, 0),
    ]);
    // the whole breakdown adds up to the metrics
    const metrics = await api.getOk(`/v1/analytics/metrics?${range}`);
    expect(metrics).toMatchObject({ totalClicks: 4, attributedConversions: 3, attributedRevenue: 25.5 });
  });

  it('reports spend and ROAS per campaign from spend recorded per campaign, null for other dimensions', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const day = utcDaysAgo(6);
    await api.click(storeId, 's1', `${day}T08:00:00Z`, { campaign_id: 'c1', utm_source: 'fb' });
    await api.click(storeId, 's2', `${day}T08:00:00Z`, { campaign_id: 'c2', utm_source: 'fb' });
    await api.click(storeId, 's3', `${day}T08:00:00Z`, { utm_source: 'fb' });
    await api.convert(storeId, { fbclid: 's1', eventValue: 100.1, timestamp: `${day}T09:00:00Z` });
    await api.convert(storeId, { fbclid: 's3', eventValue: 10, timestamp: `${day}T09:00:00Z` });
    await api.spend(storeId, [
      { date: day, amount: 30, currency: 'USD', campaignId: 'c1' },
      { date: day, amount: 10.5, currency: 'USD', campaignId: 'c1', platform: 'google' },
      { date: day, amount: 999, currency: 'EUR', campaignId: 'c1', platform: 'tiktok' }, // other currency: left out
      { date: addDays(day, 1), amount: 500, currency: 'USD', campaignId: 'c1' }, // out of range
      { date: day, amount: 1000, currency: 'USD' }, // not per campaign: in no group
      { date: day, amount: 0, currency: 'USD', campaignId: 'c2' }, // recorded but zero
      { date: day, amount: 12, currency: 'USD', campaignId: 'c9' }, // a campaign without clicks
    ]);
    const range = `storeId=${storeId}&startDate=${day}&endDate=${day}`;
    expect((await breakdown(`${range}&by=campaign_id`)).groups).toEqual([
      group('c1', 1, 1, 100.1, { spend: 40.5, roas: 2.47 }),
      group(null, 1, 1, 10, { spend: 0, roas: null }),
      group('c2', 1, 0, 0, { spend: 0, roas: null }),
      group('c9', 0, 0, 0, { spend: 12, roas: 0 }),
    ]);
    for (const g of (await breakdown(`${range}&by=utm_source`)).groups) expect([g.spend, g.roas]).toEqual([null, null]);
  });

  it('sorts by revenue, then conversions, clicks and value, and pages with signed cursors', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const day = utcDaysAgo(3);
    // campaign → [clicks, attributed purchase values]
    const plan: Record<string, [number, number[]]> = {
      cA: [1, [5]],
      cB: [2, [50]],
      cC: [1, [50]],
      cD: [3, [20, 30]], // 50 in two conversions: before cB and cC
      cE: [2, []],
      cF: [1, []],
      cG: [1, [0]], // a zero-value purchase: one conversion, no revenue
    };
    let n = 0;
    for (const [campaign, [clicks, values]] of Object.entries(plan)) {
      for (let i = 0; i < clicks; i++) {
        const fbclid = `${campaign}_${i}`;
        await api.click(storeId, fbclid, `${day}T08:00:00Z`, { campaign_id: campaign });
        const value = values[i];
        if (value !== undefined) {
          await api.convert(storeId, { fbclid, eventValue: value, orderId: `o${n++}`, timestamp: `${day}T09:00:00Z` });
        }
      }
    }
    await api.click(storeId, 'none', `${day}T08:00:00Z`); // the group without a campaign: 1 click
    const base = `storeId=${storeId}&startDate=${day}&endDate=${day}&by=campaign_id`;
    const all = (await breakdown(`${base}&limit=100`)).groups.map((g: Group) => g.value);
    expect(all).toEqual(['cD', 'cB', 'cC', 'cA', 'cG', 'cE', 'cF', null]);

    const walked: Array<string | null> = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const data: { groups: Group[]; hasMore: boolean; nextCursor: string | null } = await breakdown(
        `${base}&limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      expect(data.groups.length).toBeLessThanOrEqual(3);
      expect(data.hasMore).toBe(data.nextCursor !== null);
      walked.push(...data.groups.map((g) => g.value));
      cursor = data.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(walked).toEqual(all);

    // A cursor belongs to its list: another model, dimension or range, or an altered one, is refused.
    const first = await breakdown(`${base}&limit=2`);
    const c = encodeURIComponent(first.nextCursor);
    expect((await breakdown(`${base}&limit=2&cursor=${c}`)).groups.map((g: Group) => g.value)).toEqual(['cC', 'cA']);
    expect((await breakdown(`${base}&model=last_click&limit=5&cursor=${c}`)).groups[0].value).toBe('cC');
    for (const query of [
      `${base}&model=linear&cursor=${c}`,
      `${base.replace('campaign_id', 'ad_id')}&cursor=${c}`,
      `${base.replace(`endDate=${day}`, `endDate=${addDays(day, 1)}`)}&cursor=${c}`,
      `${base}&cursor=${c}x`,
      `${base}&cursor=abc`,
    ]) {
      const error = expectError(await api.get(`/v1/analytics/breakdown?${query}`), 400, 'invalid_request');
      expect(error.details?.field).toBe('cursor');
    }
    expect((await breakdown(`${base}&cursor=${c}`, ctx.a.live)).groups[0].value).toBe('cC');
    expectError(await api.get(`/v1/analytics/breakdown?${base}&cursor=${c}`, ctx.a.test), 400, 'invalid_request');
    for (const limit of ['0', '101', 'x']) {
      const error = expectError(await api.get(`/v1/analytics/breakdown?${base}&limit=${limit}`), 400, 'invalid_request');
      expect(error.details?.field).toBe('limit');
    }
    expect((await breakdown(base)).groups).toHaveLength(8); // default limit 20
  });

  it('refuses bad input with details.field, before looking the store up', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const foreign = await makeStore(ctx.app, ctx.b.live);
    const cases: Array<[string, string, string]> = [
      ['by=utm_term', 'by', 'unknown_value'],
      ['by=Campaign_Id', 'by', 'unknown_value'],
      ['by=campaign_id&model=data_driven', 'model', 'unknown_value'],
      ['by=campaign_id&startDate=2026-13-01', 'startDate', 'invalid_format'],
      ['by=campaign_id&startDate=2026-05-02&endDate=2026-05-01', 'startDate', 'out_of_range'],
      ['by=campaign_id&startDate=2024-01-01&endDate=2026-01-01', 'endDate', 'out_of_range'],
      ['by=campaign_id&interval=day', 'interval', 'unknown_field'],
    ];
    for (const [query, field, reason] of cases) {
      for (const id of [storeId, foreign]) {
        const error = expectError(await api.get(`/v1/analytics/breakdown?storeId=${id}&${query}`), 400, 'invalid_request');
        expect(error.details, query).toMatchObject({ field, reason });
      }
    }
    const noBy = expectError(await api.get(`/v1/analytics/breakdown?storeId=${storeId}`), 400, 'missing_required_field');
    expect(noBy.details).toEqual({ field: 'by', reason: 'required_field_missing' });
    const noStore = expectError(await api.get('/v1/analytics/breakdown?by=ad_id'), 400, 'missing_required_field');
    expect(noStore.details?.field).toBe('storeId');
  });

  it("answers store_not_found for another account's store", async () => {
    const foreign = await makeStore(ctx.app, ctx.b.live);
    await api.click(foreign, 'theirs', new Date().toISOString(), { campaign_id: 'x' }, ctx.b.live);
    expectError(await api.get(`/v1/analytics/breakdown?storeId=${foreign}&by=campaign_id`), 404, 'store_not_found');
    expectError(await api.get('/v1/analytics/breakdown?storeId=st_nope&by=campaign_id'), 404, 'store_not_found');
  });

  it('separates live and test data', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const day = utcDaysAgo(2);
    await api.click(storeId, 'l1', `${day}T08:00:00Z`, { campaign_id: 'live' });
    await api.convert(storeId, { fbclid: 'l1', eventValue: 12, timestamp: `${day}T09:00:00Z` });
    await api.spend(storeId, [{ date: day, amount: 6, currency: 'USD', campaignId: 'live' }]);
    await api.click(storeId, 't1', `${day}T08:00:00Z`, { campaign_id: 'test' }, ctx.a.test);
    await api.convert(storeId, { fbclid: 't1', eventValue: 7, timestamp: `${day}T09:00:00Z` }, ctx.a.test);
    await api.spend(storeId, [{ date: day, amount: 7, currency: 'USD', campaignId: 'live' }], ctx.a.test);
    const q = `storeId=${storeId}&startDate=${day}&endDate=${day}&by=campaign_id`;
    const live = await breakdown(q);
    expect(live.livemode).toBe(true);
    expect(live.groups).toEqual([group('live', 1, 1, 12, { spend: 6, roas: 2 })]);
    const test = await breakdown(q, ctx.a.test);
    expect(test.livemode).toBe(false);
    expect(test.groups).toEqual([
      group('test', 1, 1, 7, { spend: 0, roas: null }),
      group('live', 0, 0, 0, { spend: 7, roas: 0 }),
    ]);
  });

  it('uses the store time zone for the range of clicks and conversions', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live, { timezone: 'Pacific/Honolulu' }); // UTC-10
    const day = utcDaysAgo(8);
    await api.click(storeId, 'h1', `${day}T09:00:00Z`, { campaign_id: 'early' }); // the day before, 23:00 local
    await api.click(storeId, 'h2', `${day}T10:00:00Z`, { campaign_id: 'late' }); // 00:00 local
    await api.convert(storeId, { fbclid: 'h1', eventValue: 3, timestamp: `${day}T10:30:00Z` }); // 00:30 local
    const on = await breakdown(`storeId=${storeId}&startDate=${day}&endDate=${day}&by=campaign_id`);
    const noSpend = { spend: 0 };
    expect(on.groups).toEqual([group('early', 0, 1, 3, noSpend), group('late', 1, 0, 0, noSpend)]);
    const before = await breakdown(`storeId=${storeId}&startDate=${addDays(day, -1)}&endDate=${addDays(day, -1)}&by=campaign_id`);
    expect(before.groups).toEqual([group('early', 1, 0, 0, noSpend)]);
  });
});
