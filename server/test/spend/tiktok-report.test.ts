import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { dateWindows, tiktokSpend } from '../../src/spend/platforms/tiktok.js';
import type { SpendEnv, SpendFetchRequest, SpendFetchResult } from '../../src/spend/platforms/types.js';
import { type FakeTikTokReports, startFakeTikTokReports } from './fake-tiktok-reports.js';

const ADVERTISER = '7001';
const ROWS = [
  { date: '2026-11-01', campaignId: '1800000000000001', campaignName: 'Spring', spend: '12.34' },
  { date: '2026-11-01', campaignId: '1800000000000002', campaignName: 'Retargeting', spend: '99999999999.99' },
  { date: '2026-11-02', campaignId: '1800000000000001', campaignName: 'Spring', spend: '0.005' },
  { date: '2026-11-03', campaignId: '1800000000000003', spend: '0.00' },
];

let tiktok: FakeTikTokReports;

function env(): SpendEnv {
  return {
    metaGraphUrl: 'http://unused.invalid',
    metaGraphVersion: 'v21.0',
    googleAdsApiUrl: 'http://unused.invalid',
    googleAdsApiVersion: 'v22',
    googleOauthTokenUrl: 'http://unused.invalid/token',
    ...tiktok.env(),
  };
}

function request(overrides: Partial<SpendFetchRequest> = {}): SpendFetchRequest {
  return {
    account: ADVERTISER,
    since: '2026-11-01',
    until: '2026-11-07',
    credentials: tiktok.credentials(),
    env: env(),
    timeoutMs: 5000,
    ...overrides,
  };
}

function failure(result: SpendFetchResult) {
  if (!('error' in result)) throw new Error(`expected an error, got ${JSON.stringify(result)}`);
  return result;
}

function manyRows(days: number, campaigns: number) {
  const rows = [];
  for (let d = 0; d < days; d++) {
    const date = new Date(Date.UTC(2026, 8, 1) + d * 86_400_000).toISOString().slice(0, 10);
    for (let c = 0; c < campaigns; c++)
      rows.push({ date, campaignId: String(900 + c), campaignName: `C${c}`, spend: `${d}.${String(c).padStart(2, '0')}` });
  }
  return rows;
}

beforeAll(async () => {
  tiktok = await startFakeTikTokReports({
    accounts: {
      [ADVERTISER]: { currency: 'usd', rows: ROWS },
      '7002': { currency: 'JPY', rows: [], denied: true },
    },
  });
});
afterAll(() => tiktok.close());
beforeEach(() => {
  tiktok.requests.length = 0;
  tiktok.pageSizeCap = 1000;
});

describe('dateWindows', () => {
  it('splits a range into windows of at most 30 days', () => {
    expect(dateWindows('2026-11-01', '2026-11-01')).toEqual([['2026-11-01', '2026-11-01']]);
    expect(dateWindows('2026-09-01', '2026-11-29')).toEqual([
      ['2026-09-01', '2026-09-30'],
      ['2026-10-01', '2026-10-30'],
      ['2026-10-31', '2026-11-29'],
    ]);
    expect(dateWindows('2026-11-02', '2026-11-01')).toEqual([]);
  });
});

describe('TikTok spend report', () => {
  it('asks the integrated report as documented', async () => {
    expect('rows' in (await tiktokSpend.fetch(request()))).toBe(true);
    expect(tiktok.requests).toHaveLength(1);
    const [asked] = tiktok.requests;
    expect(asked?.accessToken).toBe(tiktok.accessToken);
    expect(asked?.query).toEqual({
      advertiser_id: ADVERTISER,
      report_type: 'BASIC',
      data_level: 'AUCTION_CAMPAIGN',
      dimensions: '["campaign_id","stat_time_day"]',
      metrics: '["spend","campaign_name","currency"]',
      start_date: '2026-11-01',
      end_date: '2026-11-07',
      page: '1',
      page_size: '1000',
    });
  });

  it('returns every campaign and day with the exact decimals, the day trimmed and the currency upper-cased', async () => {
    const result = await tiktokSpend.fetch(request());
    expect(result).toEqual({
      rows: [
        { date: '2026-11-01', campaignId: '1800000000000001', campaignName: 'Spring', amount: '12.34', currency: 'USD' },
        {
          date: '2026-11-01',
          campaignId: '1800000000000002',
          campaignName: 'Retargeting',
          amount: '99999999999.99',
          currency: 'USD',
        },
        { date: '2026-11-02', campaignId: '1800000000000001', campaignName: 'Spring', amount: '0.005', currency: 'USD' },
        { date: '2026-11-03', campaignId: '1800000000000003', campaignName: null, amount: '0.00', currency: 'USD' },
      ],
    });
  });

  it('follows every page and asks a long range in 30-day windows', async () => {
    const rows = manyRows(45, 40); // 1800 rows: two pages of 1000 in the first window
    tiktok.setSpend('7100', { currency: 'EUR', rows });
    const result = await tiktokSpend.fetch(request({ account: '7100', since: '2026-09-01', until: '2026-10-15' }));
    if (!('rows' in result)) throw new Error(result.error);
    expect(result.rows).toHaveLength(rows.length);
    expect(new Set(result.rows.map((r) => `${r.date}/${r.campaignId}`)).size).toBe(rows.length);
    expect(result.rows.find((r) => r.date === '2026-10-15' && r.campaignId === '939')?.amount).toBe('44.39');
    expect(tiktok.requests.map((r) => [r.query.start_date, r.query.end_date, r.query.page])).toEqual([
      ['2026-09-01', '2026-09-30', '1'],
      ['2026-09-01', '2026-09-30', '2'],
      ['2026-10-01', '2026-10-15', '1'],
    ]);
  });

  it('follows total_page when the platform serves shorter pages', async () => {
    tiktok.pageSizeCap = 1;
    const result = await tiktokSpend.fetch(request());
    if (!('rows' in result)) throw new Error(result.error);
    expect(result.rows.map((r) => r.amount)).toEqual(['12.34', '99999999999.99', '0.005', '0.00']);
    expect(tiktok.requests.map((r) => r.query.page)).toEqual(['1', '2', '3', '4']);
  });

  it('names the access token when it expired, was revoked or is wrong, without echoing it', async () => {
    for (const [fault, said] of [
      ['expired', /access token has expired/],
      ['revoked', /access token is incorrect or has been revoked/],
    ] as const) {
      tiktok.failNext({ type: fault });
      const result = failure(await tiktokSpend.fetch(request()));
      expect(result).toMatchObject({ side: 'platform', retryable: false, credential: 'accessToken' });
      expect(result.error).toMatch(said);
      expect(result.error).not.toContain(tiktok.accessToken);
    }
    const wrong = failure(await tiktokSpend.fetch(request({ credentials: tiktok.credentials('tt-wrong-secret') })));
    expect(wrong).toMatchObject({ credential: 'accessToken', retryable: false });
    expect(wrong.error).toContain('40105');
    expect(wrong.error).not.toContain('tt-wrong-secret');
  });

  it('names a missing permission and an unknown advertiser', async () => {
    const denied = failure(await tiktokSpend.fetch(request({ account: '7002' })));
    expect(denied).toMatchObject({ side: 'platform', retryable: false, credential: 'accessToken' });
    expect(denied.error).toMatch(/Missing permission.*7002.*40001/s);
    const unknown = failure(await tiktokSpend.fetch(request({ account: '7999' })));
    expect(unknown).toMatchObject({ side: 'platform', retryable: false, credential: 'advertiserIds' });
    expect(unknown.error).toMatch(/Unknown account.*7999.*40002/s);
    const notAnId = failure(await tiktokSpend.fetch(request({ account: 'act_1' })));
    expect(notAnId).toMatchObject({ credential: 'advertiserIds', retryable: false });
  });

  it('retries later on the rate limit, TikTok errors and a gateway error', async () => {
    tiktok.failNext({ type: 'throttle' });
    const throttled = failure(await tiktokSpend.fetch(request()));
    expect(throttled).toMatchObject({ side: 'platform', retryable: true });
    expect(throttled.error).toContain('40100');
    tiktok.failNext({ type: 'server' });
    expect(failure(await tiktokSpend.fetch(request()))).toMatchObject({ side: 'platform', retryable: true });
    tiktok.failNext({ type: 'http502' });
    const gateway = failure(await tiktokSpend.fetch(request()));
    expect(gateway).toMatchObject({ side: 'platform', retryable: true });
    expect(gateway.error).toContain('HTTP 502');
  });

  it('fails when a later page fails, keeping nothing of the earlier ones', async () => {
    tiktok.pageSizeCap = 2;
    tiktok.failNext(
      { type: 'malformed', body: { code: 0, message: 'OK', data: { list: [], page_info: { page: 1, total_page: 2 } } } },
      { type: 'server' },
    );
    const result = failure(await tiktokSpend.fetch(request()));
    expect(result).toMatchObject({ retryable: true });
    expect(tiktok.requests).toHaveLength(2);
  });

  it('fails a malformed page on the platform side with what was wrong, never throwing', async () => {
    const item = (dimensions: unknown, metrics: unknown) => ({
      code: 0,
      message: 'OK',
      data: { list: [{ dimensions, metrics }], page_info: { page: 1, page_size: 1000, total_number: 1, total_page: 1 } },
    });
    const good = { campaign_id: '1', stat_time_day: '2026-11-01 00:00:00' };
    const cases: Array<[unknown, RegExp]> = [
      [[], /not \{code, message, data\}/],
      [{ code: 0, message: 'OK' }, /data is missing/],
      [{ code: 0, data: { list: {} } }, /data\.list is not an array/],
      [{ code: 0, data: { list: [] } }, /page_info\.total_page is missing/],
      [item(good, { spend: '1,5', currency: 'USD' }), /spend is missing or not a decimal \("1,5"\)/],
      [item(good, { spend: '-1', currency: 'USD' }), /spend is missing or not a decimal/],
      [item(good, { currency: 'USD' }), /spend is missing/],
      [item(good, { spend: '1', currency: 'dollars' }), /currency is not an ISO 4217/],
      [item({ campaign_id: '1', stat_time_day: 'yesterday' }, { spend: '1', currency: 'USD' }), /stat_time_day/],
      [item({ stat_time_day: '2026-11-01 00:00:00' }, { spend: '1', currency: 'USD' }), /campaign_id is missing/],
    ];
    for (const [body, reason] of cases) {
      tiktok.failNext({ type: 'malformed', body });
      const result = failure(await tiktokSpend.fetch(request()));
      expect(result).toMatchObject({ side: 'platform', retryable: false });
      expect(result.error).toMatch(/malformed page/);
      expect(result.error).toMatch(reason);
    }
    tiktok.failNext({ type: 'non-json' });
    const text = failure(await tiktokSpend.fetch(request()));
    expect(text).toMatchObject({ side: 'platform', retryable: false });
    expect(text.error).toContain('not JSON');
  });

  it('names this server and the host when TikTok cannot be reached', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const refused = failure(await tiktokSpend.fetch(request({ env: { ...env(), tiktokApiUrl: `http://127.0.0.1:${port}` } })));
    expect(refused).toMatchObject({ side: 'network', retryable: true });
    expect(refused.error).toContain(`127.0.0.1:${port}`);
    expect(refused.error).toContain('ECONNREFUSED');
    const dns = failure(await tiktokSpend.fetch(request({ env: { ...env(), tiktokApiUrl: 'https://nonexistent.invalid' } })));
    expect(dns).toMatchObject({ side: 'network', retryable: true });
    expect(dns.error).toContain('could not resolve nonexistent.invalid');
    expect(dns.error).not.toContain(tiktok.accessToken);
  });

  it('times out after timeoutMs', async () => {
    tiktok.failNext({ type: 'hang' });
    const result = failure(await tiktokSpend.fetch(request({ timeoutMs: 300 })));
    expect(result).toMatchObject({ side: 'network', retryable: true });
    expect(result.error).toMatch(/no answer from 127\.0\.0\.1 within 300 ms/);
  });
});
