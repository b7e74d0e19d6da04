import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { forgetGoogleTokens } from '../../src/destinations/google_ads/oauth.js';
import { googleAdsSpend, microsToDecimal, spendQuery } from '../../src/spend/platforms/google-ads.js';
import type { SpendEnv, SpendFetchRequest, SpendFetchResult } from '../../src/spend/platforms/types.js';
import { type FakeGoogleAdsReports, startFakeGoogleAdsReports } from './fake-google-ads-reports.js';

const CUSTOMER = '1234567890';
const MANAGED = '5555555555';
const ROWS = [
  { date: '2026-11-01', campaignId: '111', campaignName: 'Brand', costMicros: '123450000' },
  { date: '2026-11-01', campaignId: '222', campaignName: 'Shopping', costMicros: '99999999999990000' },
  { date: '2026-11-02', campaignId: '111', campaignName: 'Brand', costMicros: '1' },
  { date: '2026-11-02', campaignId: '222', campaignName: 'Shopping', costMicros: '0' },
  { date: '2026-11-03', campaignId: '333', costMicros: '5000000' },
  { date: '2026-11-09', campaignId: '111', campaignName: 'Brand', costMicros: '7000000' },
];

let google: FakeGoogleAdsReports;

function env(): SpendEnv {
  return {
    metaGraphUrl: 'http://unused.invalid',
    metaGraphVersion: 'v21.0',
    tiktokApiUrl: 'http://unused.invalid',
    ...google.env(),
  };
}

function request(overrides: Partial<SpendFetchRequest> = {}): SpendFetchRequest {
  return {
    account: CUSTOMER,
    since: '2026-11-01',
    until: '2026-11-07',
    credentials: google.credentials(),
    env: env(),
    timeoutMs: 5000,
    ...overrides,
  };
}

function failure(result: SpendFetchResult) {
  if (!('error' in result)) throw new Error(`expected an error, got ${JSON.stringify(result)}`);
  return result;
}

beforeAll(async () => {
  google = await startFakeGoogleAdsReports({
    accounts: {
      [CUSTOMER]: { currency: 'eur', timeZone: 'Pacific/Auckland', rows: ROWS },
      [MANAGED]: {
        currency: 'USD',
        timeZone: 'America/New_York',
        rows: [{ date: '2026-11-01', campaignId: '9', campaignName: 'M', costMicros: '10000' }],
        manager: '9999999999',
      },
    },
  });
});
afterAll(() => google.close());
beforeEach(() => {
  forgetGoogleTokens();
  google.batchSize = 10_000;
  google.reset();
});

describe('microsToDecimal', () => {
  it('divides by 1,000,000 exactly, keeping sub-cent micros', () => {
    expect(microsToDecimal('123450000')).toBe('123.45');
    expect(microsToDecimal('99999999999990000')).toBe('99999999999.99');
    expect(microsToDecimal('9223372036854775807')).toBe('9223372036854.775807');
    expect(microsToDecimal('1')).toBe('0.000001');
    expect(microsToDecimal('0')).toBe('0');
    expect(microsToDecimal('5000000')).toBe('5');
    expect(microsToDecimal('-1500000')).toBe('-1.5');
    expect(microsToDecimal('12.5')).toBeNull();
    expect(microsToDecimal('1e6')).toBeNull();
  });
});

describe('Google Ads spend report', () => {
  it('asks searchStream with the GAQL date range and the destination path headers', async () => {
    const result = await googleAdsSpend.fetch(request());
    expect('rows' in result).toBe(true);
    const [asked] = google.requests;
    expect(asked).toMatchObject({
      customerId: CUSTOMER,
      version: 'v22',
      developerToken: google.developerToken,
      loginCustomerId: undefined,
    });
    expect(asked?.authorization).toMatch(/^Bearer ya29\./);
    expect(asked?.query).toBe(spendQuery('2026-11-01', '2026-11-07'));
    expect(asked?.query).toContain("WHERE segments.date BETWEEN '2026-11-01' AND '2026-11-07'");
  });

  it('returns every campaign and day with exact decimals, the account currency upper-cased and its own days', async () => {
    const result = await googleAdsSpend.fetch(request());
    if (!('rows' in result)) throw new Error(result.error);
    expect(result.rows).toEqual([
      { date: '2026-11-01', campaignId: '111', campaignName: 'Brand', amount: '123.45', currency: 'EUR' },
      { date: '2026-11-01', campaignId: '222', campaignName: 'Shopping', amount: '99999999999.99', currency: 'EUR' },
      { date: '2026-11-02', campaignId: '111', campaignName: 'Brand', amount: '0.000001', currency: 'EUR' },
      { date: '2026-11-02', campaignId: '222', campaignName: 'Shopping', amount: '0', currency: 'EUR' },
      // Days are the account's (Pacific/Auckland) as Google gives them: never shifted to UTC.
      { date: '2026-11-03', campaignId: '333', campaignName: null, amount: '5', currency: 'EUR' },
    ]);
  });

  it('reads every batch of the stream', async () => {
    google.batchSize = 2;
    const result = await googleAdsSpend.fetch(request({ until: '2026-11-30' }));
    if (!('rows' in result)) throw new Error(result.error);
    expect(result.rows.map((r) => `${r.date}/${r.campaignId}`)).toEqual(ROWS.map((r) => `${r.date}/${r.campaignId}`));
    expect(google.requests).toHaveLength(1);
  });

  it('answers no rows for a range without spend', async () => {
    expect(await googleAdsSpend.fetch(request({ since: '2026-12-01', until: '2026-12-05' }))).toEqual({ rows: [] });
  });

  it('sends login-customer-id for an account reached through a manager', async () => {
    const denied = failure(await googleAdsSpend.fetch(request({ account: MANAGED })));
    expect(denied).toMatchObject({ side: 'platform', retryable: false, credential: 'customerIds' });
    expect(denied.error).toContain('Missing permission');
    expect(denied.error).toContain(MANAGED);
    expect(denied.error).toContain('USER_PERMISSION_DENIED');
    const result = await googleAdsSpend.fetch(
      request({ account: MANAGED, credentials: google.credentials({ loginCustomerId: '9999999999' }) }),
    );
    expect(result).toEqual({
      rows: [{ date: '2026-11-01', campaignId: '9', campaignName: 'M', amount: '0.01', currency: 'USD' }],
    });
    expect(google.requests.at(-1)?.loginCustomerId).toBe('9999999999');
  });

  it('names an unknown customer', async () => {
    const result = failure(await googleAdsSpend.fetch(request({ account: '1111111111' })));
    expect(result).toMatchObject({ side: 'platform', retryable: false, credential: 'customerIds' });
    expect(result.error).toMatch(/Unknown account.*1111111111.*CUSTOMER_NOT_FOUND/s);
    const malformedId = failure(await googleAdsSpend.fetch(request({ account: '123-456-7890' })));
    expect(malformedId).toMatchObject({ credential: 'customerIds', retryable: false });
  });

  it('exchanges the refresh token again when the access token expired, once', async () => {
    expect('rows' in (await googleAdsSpend.fetch(request()))).toBe(true);
    const exchanges = google.tokenExchanges();
    google.failNext({ type: 'expire-token' });
    const result = await googleAdsSpend.fetch(request());
    expect('rows' in result).toBe(true);
    expect(google.tokenExchanges()).toBe(exchanges + 1);
  });

  it('names the refresh token when Google revoked it, without echoing secrets', async () => {
    expect('rows' in (await googleAdsSpend.fetch(request()))).toBe(true);
    google.failNext({ type: 'revoke' });
    const result = failure(await googleAdsSpend.fetch(request()));
    expect(result).toMatchObject({ side: 'platform', retryable: false, credential: 'oauth.refreshToken' });
    expect(result.error).toContain('invalid_grant');
    expect(result.error).toContain('set oauth.refreshToken');
    expect(result.error).not.toContain('destination');
    expect(result.error).not.toContain(google.oauthClient.refreshToken);
    expect(result.error).not.toContain(google.oauthClient.clientSecret);
  });

  it('names the OAuth client when Google does not know it', async () => {
    const result = failure(await googleAdsSpend.fetch(request({ credentials: google.credentials({ clientSecret: 'wrong' }) })));
    expect(result).toMatchObject({ side: 'platform', retryable: false, credential: 'oauth.clientSecret' });
    expect(result.error).toContain('invalid_client');
    expect(result.error).toContain('check the OAuth client id and secret');
    expect(result.error).not.toContain('wrong');
  });

  it('names the developer token', async () => {
    const result = failure(
      await googleAdsSpend.fetch(request({ credentials: google.credentials({ developerToken: 'not-approved' }) })),
    );
    expect(result).toMatchObject({ side: 'platform', retryable: false, credential: 'developerToken' });
    expect(result.error).toContain('DEVELOPER_TOKEN_NOT_APPROVED');
    expect(result.error).not.toContain('not-approved');
  });

  it('retries later on rate limits, server errors and an error inside the stream', async () => {
    google.failNext({ type: 'throttle' });
    const throttled = failure(await googleAdsSpend.fetch(request()));
    expect(throttled).toMatchObject({ side: 'platform', retryable: true });
    expect(throttled.error).toContain('RESOURCE_EXHAUSTED');
    expect(throttled.credential).toBeUndefined();
    google.failNext({ type: 'server' });
    expect(failure(await googleAdsSpend.fetch(request()))).toMatchObject({ side: 'platform', retryable: true });
    google.failNext({ type: 'stream-error' });
    const stream = failure(await googleAdsSpend.fetch(request()));
    expect(stream).toMatchObject({ side: 'platform', retryable: true });
    expect(stream.error).toContain('TRANSIENT_ERROR');
  });

  it('fails a malformed page on the platform side with what was wrong, never throwing', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ results: [] }, /not a JSON array of batches/],
      [['x'], /batch 0 is not an object/],
      [[{ results: 'no' }], /batch 0\.results is not an array/],
      [
        [{ results: [{ campaign: { id: '1' }, metrics: { costMicros: '1' }, customer: { currencyCode: 'EUR' } }] }],
        /segments\.date/,
      ],
      [
        [
          {
            results: [
              {
                segments: { date: '2026-11-01' },
                campaign: { id: '1' },
                metrics: { costMicros: '1.5' },
                customer: { currencyCode: 'EUR' },
              },
            ],
          },
        ],
        /costMicros is missing or not an integer \("1\.5"\)/,
      ],
      [
        [
          {
            results: [
              { segments: { date: '2026-11-01' }, campaign: { id: '1' }, metrics: {}, customer: { currencyCode: 'EUR' } },
            ],
          },
        ],
        /costMicros is missing/,
      ],
      [
        [
          {
            results: [
              {
                segments: { date: '2026-11-01' },
                campaign: { id: '1' },
                metrics: { costMicros: '1' },
                customer: { currencyCode: 'EURO' },
              },
            ],
          },
        ],
        /currencyCode is not an ISO 4217/,
      ],
      [
        [
          {
            results: [
              { segments: { date: '2026-11-01' }, campaign: {}, metrics: { costMicros: '1' }, customer: { currencyCode: 'EUR' } },
            ],
          },
        ],
        /campaign\.id/,
      ],
    ];
    for (const [body, reason] of cases) {
      google.failNext({ type: 'malformed', body });
      const result = failure(await googleAdsSpend.fetch(request()));
      expect(result).toMatchObject({ side: 'platform', retryable: false });
      expect(result.error).toMatch(/malformed page/);
      expect(result.error).toMatch(reason);
    }
    google.failNext({ type: 'non-json' });
    const html = failure(await googleAdsSpend.fetch(request()));
    expect(html).toMatchObject({ side: 'platform', retryable: false });
    expect(html.error).toContain('not JSON');
  });

  it('names this server and the host when the platform cannot be reached', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    // The OAuth exchange is the first request: an unused port there.
    const refused = failure(
      await googleAdsSpend.fetch(request({ env: { ...env(), googleOauthTokenUrl: `http://127.0.0.1:${port}/token` } })),
    );
    expect(refused).toMatchObject({ side: 'network', retryable: true });
    expect(refused.error).toContain(`127.0.0.1:${port}`);
    expect(refused.error).toContain('ECONNREFUSED');
    // The report itself on a host that does not resolve (the token is cached by now).
    expect('rows' in (await googleAdsSpend.fetch(request()))).toBe(true);
    const dns = failure(
      await googleAdsSpend.fetch(request({ env: { ...env(), googleAdsApiUrl: 'http://nonexistent.invalid' } })),
    );
    expect(dns).toMatchObject({ side: 'network', retryable: true });
    expect(dns.error).toContain('could not resolve nonexistent.invalid');
  });

  it('times out after timeoutMs', async () => {
    expect('rows' in (await googleAdsSpend.fetch(request()))).toBe(true);
    google.failNext({ type: 'hang' });
    const result = failure(await googleAdsSpend.fetch(request({ timeoutMs: 300 })));
    expect(result).toMatchObject({ side: 'network', retryable: true });
    expect(result.error).toMatch(/no answer from 127\.0\.0\.1 within 300 ms/);
  });
});
