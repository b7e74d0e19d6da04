import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadRates } from '../../src/fx/operations.js';
import { call, clickBody, conversionBody, createTestContext, expectError, makeStore, type TestContext } from '../helpers.js';

const today = new Date().toISOString().slice(0, 10);
const D = (offset: number) => new Date(Date.parse(`${today}T00:00:00Z`) + offset * 86_400_000).toISOString().slice(0, 10);
const at = (offset: number, hour: number) => `${D(offset)}T${String(hour).padStart(2, '0')}:00:00.000Z`;

/**
 * The channel report by hand (api.md §11): two Meta campaigns, a Google click, an unattributed
 * purchase, a refund, spend in the store currency and in another with and without a rate, a
 * test-mode conversion left out — every figure exact, and the channels adding up to the metrics.
 */
describe('GET /v1/analytics/channels', () => {
  let ctx: TestContext;
  let storeId: string;
  beforeAll(async () => {
    ctx = await createTestContext();
    storeId = await makeStore(ctx.app, ctx.a.live, { currency: 'USD' });
    // EUR base: 1 EUR = 1.25 USD on D(-2); no JPY rate at all.
    await loadRates(ctx.database, ['date,base,currency,rate', `${D(-2)},EUR,USD,1.25`].join('\n'));
    const click = async (ids: Record<string, string>, query: string, time: string, key = ctx.a.live) => {
      const body = {
        ...clickBody(storeId, { timestamp: time, landingPage: `https://shop.acme.test/p?${query}` }),
        fbclid: undefined,
        ...ids,
      };
      const res = await call(ctx.app, 'POST', '/v1/track/click', { key, body });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    };
    const convert = async (fields: Record<string, unknown>, key = ctx.a.live) => {
      const res = await call(ctx.app, 'POST', '/v1/track/conversion', { key, body: conversionBody(storeId, fields) });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.data as { attributed: boolean };
    };
    await click({ fbclid: 'fbA' }, 'campaign_id=m1', at(-3, 10));
    await click({ fbclid: 'fbB' }, 'campaign_id=m2', at(-3, 11));
    await click({ fbclid: 'fbC' }, 'utm_source=facebook', at(-3, 12)); // no campaign id
    await click({ gclid: 'G1' }, 'campaign_id=g1c', at(-3, 13));
    expect(
      (
        await convert({
          orderId: 'P1',
          eventValue: 100,
          fbclid: 'fbA',
          timestamp: at(-2, 10),
          customerData: { email: 'a@x.test' },
        })
      ).attributed,
    ).toBe(true);
    expect((await convert({ orderId: 'P2', eventValue: 50, fbclid: 'fbB', timestamp: at(-2, 11) })).attributed).toBe(true);
    expect((await convert({ orderId: 'P3', eventValue: 30, gclid: 'G1', timestamp: at(-2, 12) })).attributed).toBe(true);
    expect(
      (await convert({ orderId: 'P4', eventValue: 20, timestamp: at(-2, 13), customerData: { email: 'b@x.test' } })).attributed,
    ).toBe(false);
    const refund = await call(ctx.app, 'POST', '/v1/track/refund', {
      key: ctx.a.live,
      body: { storeId, orderId: 'P1', refundId: 'R1', amount: 10, currency: 'USD', timestamp: at(-1, 9) },
    });
    expect(refund.status, JSON.stringify(refund.body)).toBe(200);
    // Test mode: never in the live report.
    await click({ fbclid: 'fbT' }, 'campaign_id=m1', at(-3, 10), ctx.a.test);
    await convert({ orderId: 'T1', eventValue: 999, fbclid: 'fbT', timestamp: at(-2, 10) }, ctx.a.test);
    const spend = await call(ctx.app, 'POST', `/v1/stores/${storeId}/ad-spend`, {
      key: ctx.a.live,
      body: {
        entries: [
          { date: D(-2), amount: 40, currency: 'USD', platform: 'meta', campaignId: 'm1', campaignName: 'Summer' },
          { date: D(-2), amount: 20, currency: 'EUR', platform: 'meta', campaignId: 'm2' }, // 25 USD
          { date: D(-2), amount: 15, currency: 'USD', platform: 'google', campaignId: 'g1c' },
          { date: D(-2), amount: 1000, currency: 'JPY', platform: 'tiktok', campaignId: 'tt1' }, // no rate
        ],
      },
    });
    expect(spend.status, JSON.stringify(spend.body)).toBe(200);
  });
  afterAll(async () => ctx?.close());

  const range = () => `storeId=${storeId}&startDate=${D(-5)}&endDate=${D(0)}`;
  const get = async (path: string) => {
    const res = await call(ctx.app, 'GET', path, { key: ctx.a.live });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data;
  };

  it('reports every channel and campaign exactly, last click', async () => {
    const data = await get(`/v1/analytics/channels?${range()}`);
    expect(data).toMatchObject({ storeId, currency: 'USD', model: 'last_click', livemode: true });
    const figures = (
      spend: number,
      clicks: number,
      conversions: number,
      revenue: number,
      refunds: number,
      newCustomers: number,
    ) => ({
      spend,
      clicks,
      conversions,
      revenue,
      refunds,
      netRevenue: Math.round((revenue - refunds) * 100) / 100,
      roas: spend === 0 ? null : Math.round(((revenue - refunds) / spend) * 100) / 100,
      cpa: spend === 0 || conversions === 0 ? null : Math.round((spend / conversions) * 100) / 100,
      newCustomers,
    });
    expect(data.channels).toEqual([
      {
        channel: 'meta',
        ...figures(65, 3, 2, 150, 10, 1),
        campaigns: [
          { campaignId: 'm1', campaignName: 'Summer', ...figures(40, 1, 1, 100, 10, 1) },
          { campaignId: 'm2', campaignName: null, ...figures(25, 1, 1, 50, 0, 0) },
          { campaignId: '', campaignName: null, ...figures(0, 1, 0, 0, 0, 0) },
        ],
      },
      {
        channel: 'google_ads',
        ...figures(15, 1, 1, 30, 0, 0),
        campaigns: [{ campaignId: 'g1c', campaignName: null, ...figures(15, 1, 1, 30, 0, 0) }],
      },
      {
        channel: 'tiktok',
        ...figures(0, 0, 0, 0, 0, 0),
        campaigns: [{ campaignId: 'tt1', campaignName: null, ...figures(0, 0, 0, 0, 0, 0) }],
      },
      { channel: 'unattributed', ...figures(0, 0, 1, 20, 0, 1), campaigns: [] },
    ]);
    expect(data.totals).toEqual({ spend: 80, netRevenue: 190, mer: 2.38 });
    expect(data.warnings).toEqual([
      expect.objectContaining({ code: 'spend_not_converted', currency: 'JPY', days: [D(-2)], amount: 1000 }),
    ]);
    const metrics = await get(`/v1/analytics/metrics?${range()}`);
    expect(metrics).toMatchObject({ totalConversions: 4, totalRevenue: 200, refunds: 10, netRevenue: 190, adSpend: 80 });
  });

  it('adds up to the metrics for every model', async () => {
    const metrics = await get(`/v1/analytics/metrics?${range()}`);
    for (const model of ['last_click', 'first_click', 'linear', 'time_decay', 'position_based']) {
      const data = await get(`/v1/analytics/channels?${range()}&model=${model}`);
      const sum = (field: string) =>
        Math.round(data.channels.reduce((s: number, c: Record<string, number>) => s + (c[field] as number), 0) * 100) / 100;
      expect(sum('conversions')).toBe(metrics.totalConversions);
      expect(sum('revenue')).toBe(metrics.totalRevenue);
      expect(sum('refunds')).toBe(metrics.refunds);
      expect(sum('netRevenue')).toBe(metrics.netRevenue);
      expect(sum('spend')).toBe(metrics.adSpend);
    }
  });

  it('refuses an unknown model and bad dates with the field named', async () => {
    const bad = await call(ctx.app, 'GET', `/v1/analytics/channels?${range()}&model=u_shaped`, { key: ctx.a.live });
    expect(expectError(bad, 400, 'invalid_request').details?.field).toBe('model');
    const dates = await call(ctx.app, 'GET', `/v1/analytics/channels?storeId=${storeId}&startDate=2026-02-30`, {
      key: ctx.a.live,
    });
    expect(expectError(dates, 400, 'invalid_request').details?.field).toBe('startDate');
    const none = await call(ctx.app, 'GET', '/v1/analytics/channels?storeId=st_nope', { key: ctx.a.live });
    expect(none.status).toBe(404);
  });

  it('tracking health names spend without clicks and untagged clicks with the parameters to add', async () => {
    const data = await get(`/v1/analytics/tracking-health?${range()}`);
    expect(data.items).toEqual([
      expect.objectContaining({
        type: 'spend_without_clicks',
        channel: 'tiktok',
        campaignId: 'tt1',
        spend: 1000,
        currency: 'JPY',
      }),
      expect.objectContaining({
        type: 'untagged_clicks',
        channel: 'meta',
        clicks: 3,
        untagged: 1,
        share: 33.33,
        parameters: 'campaign_id={{campaign.id}}&adset_id={{adset.id}}&ad_id={{ad.id}}',
      }),
    ]);
    expect(data.items[0].message).toMatch(/^TikTok campaign tt1 spent ¥1,000 .* with no tracked click: add the Waytrack tag/);
  });

  it('tracking health names failing destinations and spend sources and conversions pending over an hour', async () => {
    const store = await ctx.database.read
      .selectFrom('stores')
      .select(['account_id'])
      .where('id', '=', storeId)
      .executeTakeFirstOrThrow();
    const now = Date.now();
    const conversion = await ctx.database.read
      .selectFrom('conversions')
      .select('id')
      .where('store_id', '=', storeId)
      .where('order_id', '=', 'P2')
      .executeTakeFirstOrThrow();
    await ctx.database.write(async (trx) => {
      await trx
        .insertInto('destination_health')
        .values({
          store_id: storeId,
          kind: 'tiktok',
          account_id: store.account_id,
          status: 'failing',
          consecutive_failures: 5,
          last_success_at: null,
          last_failure_at: now - 60_000,
          last_error: 'TikTok refused the access token (expired)',
          failing_reason: 'failures',
          failing_since: now - 600_000,
          updated_at: now,
        })
        .execute();
      await trx
        .insertInto('spend_sources')
        .values({
          store_id: storeId,
          kind: 'meta',
          account_id: store.account_id,
          settings: '{"adAccountIds":["act_1"]}',
          secrets: null,
          backfill_days: 30,
          status: 'failing',
          last_synced_at: now - 7_200_000,
          synced_through: D(-3),
          last_error: 'Meta: the access token has expired',
          consecutive_failures: 2,
          next_sync_at: now + 3_600_000,
          claimed_by: null,
          lease_until: null,
          created_at: now - 86_400_000,
          updated_at: now,
        })
        .execute();
      const job = {
        conversion_id: conversion.id,
        destination: 'tiktok',
        job_key: '',
        kind: 'conversion' as const,
        account_id: store.account_id,
        store_id: storeId,
        livemode: 1,
        route: '',
        payload: '{}',
        status: 'pending' as const,
        attempts: 0,
        next_attempt_at: now + 86_400_000,
        expires_at: now + 86_400_000,
        claimed_by: null,
        last_error: null,
        trace_id: null,
        created_at: now - 2 * 3_600_000,
        updated_at: now,
        sent_at: null,
      };
      // One job over an hour old is reported; a younger one is not.
      await trx.insertInto('destination_jobs').values(job).execute();
      await trx
        .insertInto('destination_jobs')
        .values({ ...job, destination: 'reddit', created_at: now - 60_000 })
        .execute();
    });
    const data = await get(`/v1/analytics/tracking-health?${range()}`);
    const of = (type: string) => data.items.filter((i: { type: string }) => i.type === type);
    expect(of('destination_failing')).toEqual([
      expect.objectContaining({
        destination: 'tiktok',
        consecutiveFailures: 5,
        lastError: 'TikTok refused the access token (expired)',
      }),
    ]);
    expect(of('destination_failing')[0].message).toMatch(
      /^The TikTok destination is failing \(TikTok refused the access token \(expired\)\)/,
    );
    expect(of('spend_source_failing')).toEqual([
      expect.objectContaining({ kind: 'meta', syncedThrough: D(-3), lastError: 'Meta: the access token has expired' }),
    ]);
    expect(of('conversions_pending')).toEqual([expect.objectContaining({ destination: 'tiktok', conversions: 1 })]);
    expect(of('conversions_pending')[0].message).toMatch(/^1 conversion has been waiting more than an hour to be sent to TikTok/);
  });
});
