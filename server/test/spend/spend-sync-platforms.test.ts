import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call, makeStore } from '../helpers.js';
import { type FakeGoogleAdsReports, startFakeGoogleAdsReports } from './fake-google-ads-reports.js';
import { FakeMetaInsights } from './fake-meta-insights.js';
import { type FakeTikTokReports, startFakeTikTokReports } from './fake-tiktok-reports.js';
import { day, type SpendApp, spend, spendApp, today, until } from './sync-app.js';

/**
 * The spend sync of Google Ads and TikTok sources end to end (api.md §11): the server's own job,
 * its credentials (the source's own, or the store's destination's), the platforms' report
 * protocols against local fakes, the rows recorded as exact `sync` entries.
 */

let meta: FakeMetaInsights;
let google: FakeGoogleAdsReports;
let tiktok: FakeTikTokReports;
beforeAll(async () => {
  meta = await FakeMetaInsights.start();
  google = await startFakeGoogleAdsReports({ accounts: {} });
  tiktok = await startFakeTikTokReports({ accounts: {} });
});
afterAll(async () => {
  await meta.close();
  await google.close();
  await tiktok.close();
});

let ctx: SpendApp | undefined;
afterEach(async () => {
  await ctx?.close();
  ctx = undefined;
  google.reset();
});

const env = () => ({
  GOOGLE_ADS_API_URL: google.env().googleAdsApiUrl,
  GOOGLE_ADS_API_VERSION: google.env().googleAdsApiVersion,
  GOOGLE_OAUTH_TOKEN_URL: google.env().googleOauthTokenUrl,
  TIKTOK_API_URL: tiktok.url,
});

async function status(c: SpendApp, storeId: string, kind: string) {
  const res = await call(c.app, 'GET', `/v1/stores/${storeId}/spend-sources`, { key: c.key });
  return res.body.data.spendSources.find((s: { kind: string }) => s.kind === kind);
}

describe('spend sync of Google Ads and TikTok', () => {
  it('Google Ads: cost_micros to exact decimals per campaign and day, through a manager account', async () => {
    ctx = await spendApp(meta, env());
    google.setSpend('1234567890', {
      currency: 'EUR',
      timeZone: 'Europe/Berlin',
      manager: '9999999999',
      rows: [
        { date: day(-3), campaignId: '501', campaignName: 'Search', costMicros: '123450000' },
        { date: day(-1), campaignId: '501', campaignName: 'Search', costMicros: '10000' },
        { date: day(-1), campaignId: '502', campaignName: 'PMax', costMicros: '99999999999990000' },
      ],
    });
    const storeId = await makeStore(ctx.app, ctx.key, { currency: 'EUR' });
    const put = await call(ctx.app, 'PUT', `/v1/stores/${storeId}/spend-sources/google_ads`, {
      key: ctx.key,
      body: {
        customerIds: ['1234567890'],
        loginCustomerId: '9999999999',
        developerToken: google.developerToken,
        oauth: google.oauthClient,
        backfillDays: 7,
      },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const c = ctx;
    const done = await until(
      () => status(c, storeId, 'google_ads'),
      (s) => s.status !== 'never',
    );
    expect(done).toMatchObject({ status: 'ok', accounts: ['1234567890'], syncedThrough: today });
    expect(await spend(c, storeId)).toMatchObject({
      [`${day(-3)} 501`]: '123.45 EUR sync',
      [`${day(-1)} 501`]: '0.01 EUR sync',
      [`${day(-1)} 502`]: '99999999999.99 EUR sync',
    });
    expect(google.requests[0]).toMatchObject({ customerId: '1234567890', loginCustomerId: '9999999999' });
    expect(google.requests[0]?.query).toContain(`BETWEEN '${day(-6)}' AND '${today}'`);
  });

  it('TikTok: every page, and an expired token named with the credential to renew', async () => {
    ctx = await spendApp(meta, env());
    tiktok.setSpend('7001', {
      currency: 'USD',
      rows: Array.from({ length: 5 }, (_, i) => ({
        date: day(-i),
        campaignId: `17${i}`,
        campaignName: `C${i}`,
        spend: `${i}.25`,
      })),
    });
    tiktok.pageSizeCap = 2;
    const storeId = await makeStore(ctx.app, ctx.key, { currency: 'USD' });
    const put = await call(ctx.app, 'PUT', `/v1/stores/${storeId}/spend-sources/tiktok`, {
      key: ctx.key,
      body: { advertiserIds: ['7001'], accessToken: tiktok.accessToken, backfillDays: 10 },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const c = ctx;
    expect(
      await until(
        () => status(c, storeId, 'tiktok'),
        (s) => s.status !== 'never',
      ),
    ).toMatchObject({ status: 'ok' });
    const rows = await spend(c, storeId);
    expect(Object.keys(rows)).toHaveLength(5);
    expect(rows[`${day(-4)} 174`]).toBe('4.25 USD sync');
    expect(new Set(tiktok.requests.map((r) => r.query.page))).toEqual(new Set(['1', '2', '3']));

    tiktok.failNext({ type: 'expired' });
    expect((await call(c.app, 'POST', `/v1/stores/${storeId}/spend-sources/tiktok/sync`, { key: c.key })).status).toBe(202);
    const failing = await until(
      () => status(c, storeId, 'tiktok'),
      (s) => s.status === 'failing',
    );
    expect(failing.lastError).toMatch(/TikTok/);
    expect(failing.lastError).toMatch(/accessToken/);
    // The figures already recorded stay.
    expect(Object.keys(await spend(c, storeId))).toHaveLength(5);
  });
});
