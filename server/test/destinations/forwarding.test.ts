import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { forgetGoogleTokens } from '../../src/destinations/google_ads/index.js';
import { type ApiResponse, call, createTestContext, makeStore, type TestContext } from '../helpers.js';
import { FakePlatforms } from './fake-platforms.js';
import { FakeGraph } from './meta/fake-graph.js';
import { FAST, PIXEL, TOKEN } from './meta/setup.js';

const sha = (value: string) => createHash('sha256').update(value, 'utf8').digest('hex');
const ACTION = 'customers/1234567890/conversionActions/555';

/** The wall-clock time in New York with its offset, from the platform's own time zone data. */
function newYork(ms: number): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', {
      timeZone: 'America/New_York',
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      timeZoneName: 'longOffset',
    })
      .formatToParts(new Date(ms))
      .map((p) => [p.type, p.value]),
  );
  const offset = String(parts.timeZoneName).replace('GMT', '');
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second}${offset}`;
}

let fake: FakePlatforms;
let graph: FakeGraph;
let ctx: TestContext;

beforeAll(async () => {
  fake = await FakePlatforms.start();
  graph = await FakeGraph.start();
});
afterAll(async () => {
  await fake.close();
  await graph.close();
});
afterEach(async () => {
  await ctx?.close();
  fake.reset();
  graph.reset();
  forgetGoogleTokens();
});

function context() {
  return createTestContext({
    env: {
      META_GRAPH_URL: graph.url,
      GOOGLE_ADS_API_URL: fake.url,
      GOOGLE_OAUTH_TOKEN_URL: fake.tokenUrl,
      TIKTOK_API_URL: fake.url,
      CAPI_SYNC_WAIT_MS: '0',
    },
    forwarding: FAST,
  });
}

const googleBody = (overrides: Record<string, unknown> = {}) => ({
  customerId: '1234567890',
  conversionAction: ACTION,
  api: 'google_ads_api',
  developerToken: fake.developerToken,
  oauth: { ...fake.oauthClient },
  ...overrides,
});
const tiktokBody = (overrides: Record<string, unknown> = {}) => ({
  pixelCode: 'CABCDEFGHIJ1234567',
  accessToken: fake.tiktokToken,
  ...overrides,
});

async function put(storeId: string, kind: string, body: unknown, key = ctx.a.live): Promise<ApiResponse> {
  return call(ctx.app, 'PUT', `/v1/stores/${storeId}/destinations/${kind}`, { key, body });
}

async function allThree(storeOverrides: Record<string, unknown> = {}): Promise<string> {
  const storeId = await makeStore(ctx.app, ctx.a.live, { pixelId: PIXEL, capiAccessToken: TOKEN, ...storeOverrides });
  expect((await put(storeId, 'google_ads', googleBody())).status).toBe(200);
  expect((await put(storeId, 'tiktok', tiktokBody({ testEventCode: 'TEST123' }))).status).toBe(200);
  return storeId;
}

async function click(storeId: string, body: Record<string, unknown>, key = ctx.a.live) {
  const res = await call(ctx.app, 'POST', '/v1/track/click', {
    key,
    body: { storeId, landingPage: 'https://shop.acme.test/p?utm_source=x', ...body },
  });
  expect(res.status).toBe(200);
  return res.body.data.clickId as string;
}

async function conversion(storeId: string, body: Record<string, unknown>, key = ctx.a.live) {
  const res = await call(ctx.app, 'POST', '/v1/track/conversion', {
    key,
    body: { storeId, eventType: 'Purchase', eventValue: 49.9, currency: 'EUR', ...body },
  });
  expect(res.status).toBe(200);
  return res.body.data.conversionId as string;
}

async function forwardingOf(id: string, key = ctx.a.live) {
  const res = await call(ctx.app, 'GET', `/v1/conversions/${id}`, { key });
  return res.body.data;
}

async function waitForwarding(id: string, kind: string, status: string, key = ctx.a.live, timeoutMs = 8000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const data = await forwardingOf(id, key);
    if (data.forwarding?.[kind]?.status === status) return data;
    if (Date.now() > deadline) throw new Error(`${id} ${kind}: ${JSON.stringify(data.forwarding)}, expected ${status}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('destinations API', () => {
  it('lists, configures and removes each platform; secrets are write-only; the old store fields are meta', async () => {
    ctx = await context();
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const list = await call(ctx.app, 'GET', `/v1/stores/${storeId}/destinations`, { key: ctx.a.live });
    expect(list.status).toBe(200);
    expect(list.body.data.destinations.map((d: { kind: string; configured: boolean }) => [d.kind, d.configured])).toEqual([
      ['meta', false],
      ['google_ads', false],
      ['tiktok', false],
      ['microsoft', false],
      ['reddit', false],
      ['linkedin', false],
      ['pinterest', false],
      ['snapchat', false],
    ]);

    const google = await put(storeId, 'google_ads', googleBody({ loginCustomerId: '9876543210' }));
    expect(google.status).toBe(200);
    expect(google.body.data).toMatchObject({ kind: 'google_ads', configured: true });
    const text = JSON.stringify(google.body);
    for (const secret of [fake.developerToken, fake.oauthClient.clientSecret, fake.oauthClient.refreshToken]) {
      expect(text).not.toContain(secret);
    }
    // Sealed at rest: the row holds no plaintext secret.
    const row = await ctx.database.read.selectFrom('store_destinations').selectAll().where('store_id', '=', storeId).execute();
    expect(JSON.stringify(row)).not.toContain(fake.oauthClient.refreshToken);
    expect(row[0]?.secrets.startsWith('wtenc1:')).toBe(true);

    // A PUT without the secrets keeps them.
    const again = await put(storeId, 'google_ads', { customerId: '1234567890', conversionAction: { Purchase: ACTION } });
    expect(again.status).toBe(200);
    expect(again.body.data.settings.conversionAction).toEqual({ Purchase: ACTION });

    const meta = await put(storeId, 'meta', { pixelId: PIXEL, accessToken: TOKEN });
    expect(meta.body.data).toMatchObject({ kind: 'meta', configured: true });
    const store = await call(ctx.app, 'GET', `/v1/stores/${storeId}`, { key: ctx.a.live });
    expect(store.body.data).toMatchObject({ pixelId: PIXEL, capiConfigured: true });
    expect(JSON.stringify(meta.body)).not.toContain(TOKEN);

    const removed = await call(ctx.app, 'DELETE', `/v1/stores/${storeId}/destinations/google_ads`, { key: ctx.a.live });
    expect(removed.body.data).toMatchObject({ kind: 'google_ads', configured: false });
    const gone = await call(ctx.app, 'DELETE', `/v1/stores/${storeId}/destinations/google_ads`, { key: ctx.a.live });
    expect(gone.status).toBe(404);
  });

  it('refuses bad settings with details.field, unknown kinds, missing scopes and other accounts', async () => {
    ctx = await context();
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const badId = await put(storeId, 'google_ads', googleBody({ customerId: '123' }));
    expect(badId.status).toBe(400);
    expect(badId.body.error.details).toMatchObject({ field: 'customerId', reason: 'invalid_format' });
    const noOauth = await put(storeId, 'google_ads', googleBody({ oauth: undefined }));
    expect(noOauth.body.error).toMatchObject({ code: 'missing_required_field', details: { field: 'oauth' } });
    const badAction = await put(storeId, 'google_ads', googleBody({ conversionAction: 'action-1' }));
    expect(badAction.body.error.details.field).toBe('conversionAction');
    const noToken = await put(storeId, 'tiktok', { pixelCode: 'CABCDEFGHIJ1234567' });
    expect(noToken.body.error).toMatchObject({ code: 'missing_required_field', details: { field: 'accessToken' } });
    const typo = await put(storeId, 'tiktok', tiktokBody({ pixelcode: 'x' }));
    expect(typo.body.error.details).toMatchObject({ field: 'pixelcode', reason: 'unknown_field' });
    const unknown = await put(storeId, 'myspace', {});
    expect(unknown.body.error).toMatchObject({ code: 'invalid_request', details: { field: 'kind' } });
    const readOnly = await ctx.keyWithScopes(['stores:read']);
    expect((await put(storeId, 'tiktok', tiktokBody(), readOnly)).status).toBe(403);
    expect((await call(ctx.app, 'GET', `/v1/stores/${storeId}/destinations`, { key: readOnly })).status).toBe(200);
    const other = await call(ctx.app, 'GET', `/v1/stores/${storeId}/destinations`, { key: ctx.b.live });
    expect(other.body.error.code).toBe('store_not_found');
  });
});

describe('routing and delivery (api.md §8)', () => {
  it('a store with all three: each conversion reaches exactly the destinations its ids call for', async () => {
    ctx = await context();
    const storeId = await allThree({ timezone: 'America/New_York' });
    const eventMs = Math.floor((Date.now() - 2 * 86_400_000) / 1000) * 1000;
    await click(storeId, {
      fbclid: 'FB-1',
      gclid: 'G-1',
      ttclid: 'TT-1',
      fingerprint: 'fp-all',
      visitorId: 'wt.fp-all',
      timestamp: new Date(eventMs - 60_000).toISOString(),
    });
    const everywhere = await conversion(storeId, {
      orderId: 'all-1',
      fingerprint: 'fp-all',
      visitorId: 'wt.fp-all',
      timestamp: new Date(eventMs).toISOString(),
      customerData: { email: ' John.Smith@GMail.com ', phone: '(650) 555-1212', country: 'US' },
    });
    await click(storeId, { fbclid: 'FB-2', fingerprint: 'fp-meta', visitorId: 'wt.fp-meta' });
    const metaOnly = await conversion(storeId, { orderId: 'meta-1', fingerprint: 'fp-meta', visitorId: 'wt.fp-meta' });
    const ttpOnly = await conversion(storeId, { orderId: 'ttp-1', ttp: 'ttp-cookie-1' });
    const explicitGoogle = await conversion(storeId, { orderId: 'g-1', gbraid: 'GB-unrecorded' });

    const all = await waitForwarding(everywhere, 'google_ads', 'sent');
    await waitForwarding(everywhere, 'tiktok', 'sent');
    expect(Object.keys(all.forwarding).sort()).toEqual(['google_ads', 'meta', 'tiktok']);
    expect(all.forwarding.meta).toEqual(all.capi);
    const meta = await forwardingOf(metaOnly);
    expect(Object.keys(meta.forwarding)).toEqual(['meta']);
    await waitForwarding(ttpOnly, 'tiktok', 'sent');
    expect(Object.keys((await forwardingOf(ttpOnly)).forwarding).sort()).toEqual(['meta', 'tiktok']);
    await waitForwarding(explicitGoogle, 'google_ads', 'sent');
    expect((await forwardingOf(explicitGoogle)).forwarding.tiktok).toBeUndefined();

    // Google's row: the click's gclid, the action, the store's local time with its offset, hashes by Google's rules.
    const row = fake.googleAccepted().find((c) => c.orderId === 'all-1');
    expect(row).toMatchObject({
      gclid: 'G-1',
      conversionAction: ACTION,
      conversionDateTime: newYork(eventMs),
      conversionValue: 49.9,
      currencyCode: 'EUR',
      consent: { adUserData: 'GRANTED' },
    });
    expect(row?.userIdentifiers).toEqual([
      { hashedEmail: sha('johnsmith@gmail.com') },
      { hashedPhoneNumber: sha('+16505551212') },
    ]);
    const upload = fake.uploads.find((u) => u.conversions.some((c) => c.orderId === 'all-1'));
    expect(upload).toMatchObject({ customerId: '1234567890', developerToken: fake.developerToken, validateOnly: false });
    expect(fake.googleAccepted().find((c) => c.orderId === 'g-1')).toMatchObject({ gbraid: 'GB-unrecorded' });
    expect(fake.googleAccepted().find((c) => c.orderId === 'g-1')?.userIdentifiers).toBeUndefined();

    // TikTok's event: the standard name, ttclid, hashed email/phone, value, page; live: no test_event_code.
    const request = fake.tiktok.find((r) =>
      r.body.data.some((e: { properties: { order_id: string } }) => e.properties.order_id === 'all-1'),
    );
    expect(request?.body).toMatchObject({ event_source: 'web', event_source_id: 'CABCDEFGHIJ1234567' });
    expect(request?.body.test_event_code).toBeUndefined();
    expect(request?.accessToken).toBe(fake.tiktokToken);
    const event = request?.body.data.find((e: { properties: { order_id: string } }) => e.properties.order_id === 'all-1');
    expect(event).toMatchObject({
      event: 'CompletePayment',
      event_id: 'all-1',
      user: { ttclid: 'TT-1', email: sha('john.smith@gmail.com'), phone: sha('+16505551212') },
      properties: { value: 49.9, currency: 'EUR', order_id: 'all-1' },
      page: { url: 'https://shop.acme.test/p?utm_source=x' },
    });
    expect(fake.tiktokAccepted().find((e) => e.properties.order_id === 'ttp-1')?.user.ttp).toBe('ttp-cookie-1');

    // Meta still receives every conversion of the store.
    for (const id of [everywhere, metaOnly, ttpOnly, explicitGoogle]) await waitForwarding(id, 'meta', 'sent');

    // Metrics count per destination and status, once the outcomes are recorded (a fake's acceptance comes first).
    for (const id of [everywhere, explicitGoogle]) await waitForwarding(id, 'google_ads', 'sent');
    for (const id of [everywhere, ttpOnly]) await waitForwarding(id, 'tiktok', 'sent');
    // The counters move once the recording's commit is synced and answered, a moment after it shows.
    await vi.waitFor(
      async () => {
        const metrics = await ctx.app.inject({ method: 'GET', url: '/metrics' });
        expect(metrics.body).toMatch(
          /waytrack_destination_events_total\{destination="google_ads",mode="live",outcome="sent"\} [1-9]/,
        );
        expect(metrics.body).toMatch(
          /waytrack_destination_events_total\{destination="tiktok",mode="live",outcome="sent"\} [1-9]/,
        );
      },
      { timeout: 8000, interval: 50 },
    );
  }, 90_000);

  it('Google partial failure fails that conversion only, with Google’s message', async () => {
    ctx = await context();
    const storeId = await allThree();
    fake.badClickIds.add('G-bad');
    await ctx.app.destinations.stop(); // both queued before the first look: one request
    const good = await conversion(storeId, { orderId: 'pf-good', gclid: 'G-good' });
    const bad = await conversion(storeId, { orderId: 'pf-bad', gclid: 'G-bad' });
    ctx.app.destinations.start();
    const failed = await waitForwarding(bad, 'google_ads', 'failed');
    expect(failed.forwarding.google_ads.lastError).toContain('The gclid could not be decoded.');
    expect(failed.forwarding.google_ads.lastError).toContain('UNPARSEABLE_GCLID');
    const sent = await waitForwarding(good, 'google_ads', 'sent');
    expect(sent.forwarding.google_ads.attempts).toBe(1);
    expect(fake.uploads.filter((u) => !u.validateOnly)).toHaveLength(1);
  });

  it('Google: the access token is cached, and exchanged again when it expires', async () => {
    ctx = await context();
    const storeId = await allThree();
    const first = await conversion(storeId, { orderId: 'tok-1', gclid: 'G-t1' });
    await waitForwarding(first, 'google_ads', 'sent');
    const second = await conversion(storeId, { orderId: 'tok-2', gclid: 'G-t2' });
    await waitForwarding(second, 'google_ads', 'sent');
    expect(fake.tokenExchanges).toBe(1);
    // Google revokes or expires it early: 401, exchanged again, delivered.
    fake.googleFaults.push({ type: 'expire-token' });
    const third = await conversion(storeId, { orderId: 'tok-3', gclid: 'G-t3' });
    const done = await waitForwarding(third, 'google_ads', 'sent');
    expect(done.forwarding.google_ads.attempts).toBe(2);
    expect(fake.tokenExchanges).toBe(2);
    // A revoked refresh token fails with Google's OAuth message.
    forgetGoogleTokens();
    await put(storeId, 'google_ads', googleBody({ oauth: { ...fake.oauthClient, refreshToken: '1//revoked' } }));
    const fourth = await conversion(storeId, { orderId: 'tok-4', gclid: 'G-t4' });
    const refused = await waitForwarding(fourth, 'google_ads', 'failed');
    expect(refused.forwarding.google_ads.lastError).toContain('invalid_grant');
    expect(refused.forwarding.google_ads.lastError).not.toContain('1//revoked');
  });

  it('throttling is retried (Google 429, TikTok 40100 and 5xxxx); TikTok’s other codes fail with its message', async () => {
    ctx = await context();
    const storeId = await allThree();
    fake.googleFaults.push({ type: 'throttle', retryAfterSeconds: 0 }, { type: 'http500' });
    fake.tiktokFaults.push({ type: 'throttle' }, { type: 'server' });
    const id = await conversion(storeId, { orderId: 'thr-1', gclid: 'G-thr', ttclid: 'TT-thr' });
    const google = await waitForwarding(id, 'google_ads', 'sent');
    expect(google.forwarding.google_ads.attempts).toBe(3);
    expect(google.forwarding.google_ads.lastError).toContain('HTTP 500');
    const tiktok = await waitForwarding(id, 'tiktok', 'sent');
    expect(tiktok.forwarding.tiktok.attempts).toBe(3);
    expect(tiktok.forwarding.tiktok.lastError).toContain('code 50000');

    fake.tiktokFaults.push({ type: 'bad-token' });
    const refused = await conversion(storeId, { orderId: 'thr-2', ttclid: 'TT-thr2' });
    const failed = await waitForwarding(refused, 'tiktok', 'failed');
    expect(failed.forwarding.tiktok.attempts).toBe(1);
    expect(failed.forwarding.tiktok.lastError).toContain('code 40105');
    expect(failed.forwarding.tiktok.lastError).toContain('Access token is incorrect or has been revoked.');
  });

  it('test mode: Google validateOnly, TikTok test_event_code, skipped without one; age limits skip', async () => {
    ctx = await context();
    const storeId = await allThree();
    await click(storeId, { gclid: 'G-test', ttclid: 'TT-test', fingerprint: 'fp-test', visitorId: 'wt.fp-test' }, ctx.a.test);
    const id = await conversion(storeId, { orderId: 'test-1', fingerprint: 'fp-test', visitorId: 'wt.fp-test' }, ctx.a.test);
    await waitForwarding(id, 'google_ads', 'sent', ctx.a.test);
    await waitForwarding(id, 'tiktok', 'sent', ctx.a.test);
    expect(fake.uploads.at(-1)?.validateOnly).toBe(true);
    expect(fake.googleAccepted()).toHaveLength(0);
    expect(fake.tiktok.at(-1)?.body.test_event_code).toBe('TEST123');

    await put(storeId, 'tiktok', tiktokBody());
    const skipped = await conversion(storeId, { orderId: 'test-2', ttclid: 'TT-x' }, ctx.a.test);
    const data = await forwardingOf(skipped, ctx.a.test);
    expect(data.forwarding.tiktok).toMatchObject({ status: 'skipped', reason: 'test_event_code_missing' });

    // TikTok: 7 days from the event; Google: 90 days from the click (from the event for an id named without a click).
    const old = new Date(Date.now() - 8 * 86_400_000).toISOString();
    const stale = await conversion(storeId, { orderId: 'old-1', ttclid: 'TT-old', gclid: 'G-old', timestamp: old });
    const staleData = await forwardingOf(stale);
    expect(staleData.forwarding.tiktok).toMatchObject({ status: 'skipped', reason: 'expired' });
    await waitForwarding(stale, 'google_ads', 'sent');
  });
});
