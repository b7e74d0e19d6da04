import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { forgetGoogleTokens } from '../../src/destinations/google_ads/index.js';
import { type ApiResponse, call, createTestContext, makeStore, type TestContext } from '../helpers.js';
import { ADWORDS_SCOPE, FakeDataManager } from './fake-data-manager.js';
import { FakePlatforms } from './fake-platforms.js';
import { FAST, RELAXED } from './meta/setup.js';

/** The google_ads destination through Google's Data Manager API (api.md §12), and the Google Ads API path kept for old settings. */

const sha = (value: string) => createHash('sha256').update(value, 'utf8').digest('hex');
const ACTION = 'customers/1234567890/conversionActions/555';

let dm: FakeDataManager;
let ads: FakePlatforms;
let ctx: TestContext;

beforeAll(async () => {
  ads = await FakePlatforms.start();
  // One token endpoint (GOOGLE_OAUTH_TOKEN_URL) for both APIs: its tokens are good at both fakes.
  dm = await FakeDataManager.start({ shareTokensWith: ads.tokens });
});
afterAll(async () => {
  await dm.close();
  await ads.close();
});
afterEach(async () => {
  await ctx?.close();
  dm.reset();
  ads.reset();
  forgetGoogleTokens();
});

function context() {
  return createTestContext({
    env: {
      GOOGLE_DATA_MANAGER_URL: dm.url,
      GOOGLE_ADS_API_URL: ads.url,
      GOOGLE_OAUTH_TOKEN_URL: dm.tokenUrl,
      CAPI_SYNC_WAIT_MS: '0',
    },
    forwarding: { ...FAST, ...RELAXED },
  });
}

const body = (overrides: Record<string, unknown> = {}) => ({
  customerId: '1234567890',
  conversionAction: ACTION,
  oauth: { ...dm.oauthClient },
  ...overrides,
});

const put = (storeId: string, value: unknown): Promise<ApiResponse> =>
  call(ctx.app, 'PUT', `/v1/stores/${storeId}/destinations/google_ads`, { key: ctx.a.live, body: value });

async function configured(overrides: Record<string, unknown> = {}): Promise<string> {
  const storeId = await makeStore(ctx.app, ctx.a.live);
  const res = await put(storeId, body(overrides));
  expect(res.status).toBe(200);
  return storeId;
}

async function conversion(storeId: string, fields: Record<string, unknown>, key = ctx.a.live) {
  const res = await call(ctx.app, 'POST', '/v1/track/conversion', {
    key,
    body: { storeId, eventType: 'Purchase', eventValue: 49.9, currency: 'EUR', ...fields },
  });
  expect(res.status).toBe(200);
  return res.body.data.conversionId as string;
}

async function waitForwarding(id: string, status: string, key = ctx.a.live) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const res = await call(ctx.app, 'GET', `/v1/conversions/${id}`, { key });
    const entry = res.body.data.forwarding?.google_ads;
    if (entry?.status === status) return entry;
    if (Date.now() > deadline) throw new Error(`${id}: ${JSON.stringify(res.body.data.forwarding)}, expected ${status}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const jobsOf = (conversionId: string) =>
  ctx.database.read
    .selectFrom('destination_jobs')
    .selectAll()
    .where('conversion_id', '=', conversionId)
    .where('destination', '=', 'google_ads')
    .execute();

describe('google_ads settings: api', () => {
  it('new settings default to data_manager without a developer token; secrets write-only and sealed; bad api named', async () => {
    ctx = await context();
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const res = await put(storeId, body({ loginCustomerId: '9876543210' }));
    expect(res.status).toBe(200);
    expect(res.body.data.settings).toMatchObject({
      api: 'data_manager',
      customerId: '1234567890',
      loginCustomerId: '9876543210',
      developerTokenConfigured: false,
      oauth: { clientId: dm.oauthClient.clientId, clientSecretConfigured: true, refreshTokenConfigured: true },
    });
    const text = JSON.stringify(res.body);
    for (const secret of [dm.oauthClient.clientSecret, dm.oauthClient.refreshToken]) expect(text).not.toContain(secret);
    const rows = await ctx.database.read.selectFrom('store_destinations').selectAll().where('store_id', '=', storeId).execute();
    expect(JSON.stringify(rows)).not.toContain(dm.oauthClient.refreshToken);
    expect(JSON.stringify(rows)).not.toContain(dm.oauthClient.clientSecret);
    expect(rows[0]?.secrets.startsWith('wtenc1:')).toBe(true);

    const withToken = await put(storeId, body({ developerToken: 'dev-token' }));
    expect(withToken.status).toBe(400);
    expect(withToken.body.error).toMatchObject({ code: 'invalid_request', details: { field: 'developerToken' } });
    expect(withToken.body.error.message).toMatch(/google_ads_api/);
    const badApi = await put(storeId, body({ api: 'ads' }));
    expect(badApi.body.error).toMatchObject({ code: 'invalid_request', details: { field: 'api', reason: 'unknown_value' } });
    const noToken = await put(storeId, body({ api: 'google_ads_api' }));
    expect(noToken.body.error).toMatchObject({ code: 'missing_required_field', details: { field: 'developerToken' } });
    // Choosing the Google Ads API with a token, then leaving api out: the stored choice is kept.
    expect((await put(storeId, body({ api: 'google_ads_api', developerToken: ads.developerToken }))).status).toBe(200);
    const kept = await put(storeId, { customerId: '1234567890', conversionAction: ACTION });
    expect(kept.body.data.settings).toMatchObject({ api: 'google_ads_api', developerTokenConfigured: true });
    // Back to Data Manager: the developer token stays stored (unused), so switching back needs none.
    const back = await put(storeId, { api: 'data_manager', customerId: '1234567890', conversionAction: ACTION });
    expect(back.body.data.settings).toMatchObject({ api: 'data_manager', developerTokenConfigured: true });
  });
});

describe('forwarding through the Data Manager API', () => {
  it('sends events:ingest with the documented request: destination, ids, transactionId = eventId, hashed user data, consent; requestId is the trace id', async () => {
    ctx = await context();
    const storeId = await configured({ loginCustomerId: '9876543210' });
    const id = await conversion(storeId, {
      orderId: 'o-1',
      eventId: 'evt-1',
      gclid: 'gclid-1',
      timestamp: '2026-11-28T10:00:00.000Z',
      customerData: { email: ' John.Doe@Gmail.com ', phone: '+1 650 555 1212' },
    });
    const entry = await waitForwarding(id, 'sent');
    expect(entry.attempts).toBe(1);
    const sent = dm.requests.filter((r) => r.status === 200);
    expect(sent).toHaveLength(1);
    const request = sent[0];
    expect(request?.developerToken).toBeUndefined();
    expect(request?.authorization).toMatch(/^Bearer ya29\./);
    expect(request?.body).toEqual({
      destinations: [
        {
          operatingAccount: { accountType: 'GOOGLE_ADS', accountId: '1234567890' },
          loginAccount: { accountType: 'GOOGLE_ADS', accountId: '9876543210' },
          productDestinationId: '555',
        },
      ],
      events: [
        {
          transactionId: 'evt-1',
          eventTimestamp: '2026-11-28T10:00:00.000Z',
          adIdentifiers: { gclid: 'gclid-1' },
          conversionValue: 49.9,
          currency: 'EUR',
          userData: { userIdentifiers: [{ emailAddress: sha('johndoe@gmail.com') }, { phoneNumber: sha('+16505551212') }] },
          consent: { adUserData: 'CONSENT_GRANTED', adPersonalization: 'CONSENT_GRANTED' },
          eventSource: 'WEB',
        },
      ],
      encoding: 'HEX',
    });
    const [job] = await jobsOf(id);
    expect(job?.trace_id).toBe(request?.requestId);
    expect(ads.uploads).toHaveLength(0);
  });

  it('adUserData denied: no userData, consent CONSENT_DENIED; test mode: validateOnly, nothing recorded by Google', async () => {
    ctx = await context();
    const storeId = await configured();
    const denied = await conversion(storeId, {
      orderId: 'o-denied',
      gclid: 'gclid-denied',
      customerData: { email: 'jane@example.com' },
      consent: { adUserData: 'denied', adPersonalization: 'denied' },
    });
    await waitForwarding(denied, 'sent');
    const [event] = dm.accepted();
    expect(event?.userData).toBeUndefined();
    expect(event?.consent).toEqual({ adUserData: 'CONSENT_DENIED', adPersonalization: 'CONSENT_DENIED' });
    expect(event?.transactionId).toBe('o-denied'); // the eventId defaults to the orderId

    const test = await conversion(storeId, { orderId: 'o-test', gclid: 'gclid-test' }, ctx.a.test);
    await waitForwarding(test, 'sent', ctx.a.test);
    const validated = dm.requests.filter((r) => r.body.validateOnly === true);
    expect(validated).toHaveLength(1);
    expect(validated[0]?.status).toBe(200);
    expect(dm.requests.filter((r) => r.body.validateOnly !== true)).toHaveLength(1);
    expect([...dm.conversions.keys()]).toEqual(['555\no-denied']);
  });

  it('429 is retried (Retry-After honoured), a 401 exchanges the refresh token again', async () => {
    ctx = await context();
    const storeId = await configured();
    dm.faults = [{ type: 'throttle', retryAfterSeconds: 0 }, { type: 'expire-token' }];
    const id = await conversion(storeId, { orderId: 'o-429', gclid: 'gclid-429' });
    const entry = await waitForwarding(id, 'sent');
    expect(entry.attempts).toBe(3);
    expect(dm.requests.map((r) => r.status)).toEqual([429, 401, 200]);
    expect(dm.tokenExchanges).toBe(2);
  });

  it('a refresh token without the datamanager scope fails, saying which scope to grant', async () => {
    ctx = await context();
    const storeId = await configured();
    dm.grantedScopes = [ADWORDS_SCOPE];
    const id = await conversion(storeId, { orderId: 'o-scope', gclid: 'gclid-scope' });
    const entry = await waitForwarding(id, 'failed');
    expect(entry.lastError).toMatch(/https:\/\/www\.googleapis\.com\/auth\/datamanager/);
    expect(dm.requests).toHaveLength(0);
  });
});

describe('old settings keep the Google Ads API', () => {
  it('settings saved before `api` existed still send through uploadClickConversions; new ones go to Data Manager', async () => {
    ctx = await context();
    const old = await configured({ api: 'google_ads_api', developerToken: ads.developerToken });
    // As the code before api.md §12 stored them: no `api`, no `developerTokenSet`.
    const row = await ctx.database.read
      .selectFrom('store_destinations')
      .selectAll()
      .where('store_id', '=', old)
      .executeTakeFirstOrThrow();
    const { api: _api, developerTokenSet: _set, ...before } = JSON.parse(row.config) as Record<string, unknown>;
    await ctx.database.write((trx) =>
      trx
        .updateTable('store_destinations')
        .set({ config: JSON.stringify(before) })
        .where('store_id', '=', old)
        .where('kind', '=', 'google_ads')
        .execute(),
    );
    const listed = await call(ctx.app, 'GET', `/v1/stores/${old}/destinations`, { key: ctx.a.live });
    const google = listed.body.data.destinations.find((d: { kind: string }) => d.kind === 'google_ads');
    expect(google.settings).toMatchObject({ api: 'google_ads_api', developerTokenConfigured: true });
    // The routing cache (1 s) must see the rewritten row.
    await new Promise((r) => setTimeout(r, 1100));
    const fresh = await configured();

    const oldId = await conversion(old, { orderId: 'o-old', gclid: 'gclid-old' });
    const newId = await conversion(fresh, { orderId: 'o-new', gclid: 'gclid-new' });
    await waitForwarding(oldId, 'sent');
    await waitForwarding(newId, 'sent');
    expect(ads.googleAccepted().map((c) => [c.orderId, c.gclid])).toEqual([['o-old', 'gclid-old']]);
    expect(ads.uploads[0]?.developerToken).toBe(ads.developerToken);
    expect(dm.accepted().map((e) => [e.transactionId, e.adIdentifiers.gclid])).toEqual([['o-new', 'gclid-new']]);

    // A PUT that leaves api out keeps the old path.
    const again = await put(old, { customerId: '1234567890', conversionAction: ACTION });
    expect(again.body.data.settings.api).toBe('google_ads_api');
  });
});
