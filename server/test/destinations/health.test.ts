import { rmSync } from 'node:fs';
import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type DestinationHealth,
  type DestinationTestResult,
  type FetchLike,
  Waytrack,
} from '../../../packages/client/src/index.ts';
import { createAccount, createKey } from '../../src/accounts/accounts.js';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import type { DispatcherTuning } from '../../src/destinations/dispatcher.js';
import { forgetGoogleTokens } from '../../src/destinations/google_ads/index.js';
import { openTestDatabase } from '../engine.js';
import { call, conversionBody, expectError, makeStore, tempDir } from '../helpers.js';
import { FakeDataManager } from './fake-data-manager.js';
import { FakePlatforms } from './fake-platforms.js';
import { FakeGraph } from './meta/fake-graph.js';
import { FAST, PIXEL, RELAXED, TOKEN } from './meta/setup.js';

/**
 * Destination health (api.md §12): 5 failed attempts in a row or a job pending too long turn a
 * destination `failing` — one warning, one `destination.failing` webhook — and a success turns it
 * back — one line, one `destination.recovered`; messages say whose side failed; the check route.
 */

let graph: FakeGraph;
let fake: FakePlatforms;
let dm: FakeDataManager;
beforeAll(async () => {
  graph = await FakeGraph.start();
  fake = await FakePlatforms.start();
  // One token endpoint for both Google APIs (as google-data-manager.test.ts): its tokens are good at both fakes.
  dm = await FakeDataManager.start({ shareTokensWith: fake.tokens });
});
afterAll(async () => {
  await graph.close();
  await fake.close();
  await dm.close();
});

interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

/** An app whose log lines are kept (the test counts the health lines), forwarding to the fakes. */
async function healthApp(env: Record<string, string> = {}, tuning: Partial<DispatcherTuning> = {}) {
  const dataDir = tempDir();
  const lines: LogLine[] = [];
  const config = loadConfig({
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    RATE_LIMIT_RPS: '100000',
    RATE_LIMIT_BURST: '100000',
    META_GRAPH_URL: graph.url,
    TIKTOK_API_URL: fake.url,
    GOOGLE_ADS_API_URL: fake.url,
    GOOGLE_DATA_MANAGER_URL: dm.url,
    GOOGLE_OAUTH_TOKEN_URL: dm.tokenUrl,
    CAPI_SYNC_WAIT_MS: '10000',
    SECRETS_KEY,
    ...env,
  });
  const store = await openTestDatabase(dataDir, { migrated: true });
  await store.database.migrate();
  const app = await buildApp({
    config,
    database: store.database,
    logger: { level: 'info', stream: { write: (line: string) => lines.push(JSON.parse(line) as LogLine) } },
    forwarding: { ...FAST, ...RELAXED, ...tuning },
  });
  await app.ready();
  const owner = await createAccount(store.database, { email: 'owner@example.com' });
  const other = await createAccount(store.database, { email: 'other@example.com' });
  return {
    app,
    database: store.database,
    lines,
    key: owner.keys.live,
    testKey: owner.keys.test,
    otherKey: other.keys.live,
    readOnlyKey: (await createKey(store.database, { accountId: owner.accountId, mode: 'live', scopes: ['stores:read'] })).key,
    healthLines: (destination = 'meta') =>
      lines.filter((l) => l.destination === destination && /^Destination \w+ of store /.test(l.msg)),
    async close() {
      await app.close();
      await store.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A local port nothing listens on (one just closed). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** One key for every instance of a test (a second instance must open the first one's sealed tokens). */
const SECRETS_KEY = 'ab'.repeat(32);

type HealthApp = Awaited<ReturnType<typeof healthApp>>;
let ctx: HealthApp | undefined;
afterEach(async () => {
  await ctx?.close();
  ctx = undefined;
  graph.reset();
  fake.reset();
  dm.reset();
  forgetGoogleTokens();
});

async function healthOf(c: HealthApp, storeId: string, kind = 'meta') {
  const res = await call(c.app, 'GET', `/v1/stores/${storeId}/destinations`, { key: c.key });
  expect(res.status).toBe(200);
  return res.body.data.destinations.find((d: { kind: string }) => d.kind === kind).health;
}

/** The webhook messages of the account, by event type (an endpoint subscribed to both health events). */
async function healthEvents(c: HealthApp) {
  const rows = await c.database.read
    .selectFrom('webhook_messages')
    .select(['event_type', 'payload'])
    .where('event_type', 'like', 'destination.%')
    .orderBy('created_at')
    .execute();
  return rows.map((r) => ({ type: r.event_type, data: JSON.parse(r.payload).data }));
}

async function subscribe(c: HealthApp) {
  const body = { url: 'https://hooks.invalid/health', events: ['destination.failing', 'destination.recovered'] };
  expect((await call(c.app, 'POST', '/v1/webhooks', { key: c.key, body })).status).toBe(201);
}

async function convert(c: HealthApp, storeId: string) {
  const res = await call(c.app, 'POST', '/v1/track/conversion', { key: c.key, body: conversionBody(storeId) });
  expect(res.status).toBe(200);
  return res.body.data.conversionId as string;
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out; last value ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('failing after 5 attempts in a row, recovered by a success', () => {
  it('turns once, with one warning and one webhook each way, naming the token to renew', async () => {
    ctx = await healthApp();
    const c = ctx;
    await subscribe(c);
    const storeId = await makeStore(c.app, c.key, { pixelId: PIXEL, capiAccessToken: TOKEN });
    expect(await healthOf(c, storeId)).toEqual({ status: 'unverified', consecutiveFailures: 0 });

    // Meta refuses the token: each conversion (its request waits for the attempt) is one failed attempt.
    graph.outage = { type: 'error', status: 401, code: 190, message: 'Error validating access token: Session has expired' };
    for (let i = 1; i <= 4; i++) {
      await convert(c, storeId);
      const health = await until(
        () => healthOf(c, storeId),
        (h) => h.consecutiveFailures === i,
      );
      expect(health.status).toBe('unverified');
    }
    expect(c.healthLines()).toEqual([]);
    expect(await healthEvents(c)).toEqual([]);

    await convert(c, storeId);
    const failing = await until(
      () => healthOf(c, storeId),
      (h) => h.status === 'failing',
    );
    expect(failing.consecutiveFailures).toBe(5);
    expect(failing.lastError).toMatch(/code 190/);
    // The credential to renew and where.
    expect(failing.lastError).toMatch(/access token.*Events Manager.*Conversions API.*Generate access token/);
    expect(failing.lastError).not.toContain(TOKEN);
    expect(failing.lastFailureAt).toEqual(expect.any(String));

    // A sixth failure: still failing, no second line nor webhook.
    await convert(c, storeId);
    await until(
      () => healthOf(c, storeId),
      (h) => h.consecutiveFailures === 6,
    );
    const warned = c.healthLines();
    expect(warned).toHaveLength(1);
    expect(warned[0]?.level).toBe(40); // warn
    expect(warned[0]?.msg).toMatch(new RegExp(`^Destination meta of store ${storeId} is failing: 5 attempts`));
    let events = await healthEvents(c);
    expect(events.map((e) => e.type)).toEqual(['destination.failing']);
    expect(events[0]?.data).toMatchObject({
      storeId,
      destination: 'meta',
      health: { status: 'failing', consecutiveFailures: 5 },
    });

    // Meta takes events again: one success recovers it.
    graph.outage = undefined;
    await convert(c, storeId);
    const ok = await until(
      () => healthOf(c, storeId),
      (h) => h.status === 'ok',
    );
    expect(ok.consecutiveFailures).toBe(0);
    expect(ok.lastSuccessAt).toEqual(expect.any(String));
    await convert(c, storeId);
    const lines = c.healthLines();
    expect(lines).toHaveLength(2);
    expect(lines[1]?.msg).toMatch(new RegExp(`^Destination meta of store ${storeId} recovered`));
    events = await healthEvents(c);
    expect(events.map((e) => e.type)).toEqual(['destination.failing', 'destination.recovered']);
    expect(events[1]?.data).toMatchObject({ storeId, destination: 'meta', health: { status: 'ok', consecutiveFailures: 0 } });
  });
});

describe('several instances on one database', () => {
  it('count every failed attempt of both, and one of them turns the destination: one line, one webhook', async () => {
    ctx = await healthApp();
    const c = ctx;
    // A second instance: its own app and dispatcher (its own lease owner) on the same database.
    const lines: LogLine[] = [];
    const otherDir = tempDir();
    const other = await buildApp({
      config: loadConfig({
        DATA_DIR: otherDir,
        LOG_LEVEL: 'info',
        META_GRAPH_URL: graph.url,
        CAPI_SYNC_WAIT_MS: '10000',
        SECRETS_KEY, // instances sharing a database share the key (else each sees the other's tokens as lost)
      }),
      database: c.database,
      logger: { level: 'info', stream: { write: (line: string) => lines.push(JSON.parse(line) as LogLine) } },
      forwarding: { ...FAST, ...RELAXED },
    });
    await other.ready();
    try {
      await subscribe(c);
      const storeId = await makeStore(c.app, c.key, { pixelId: PIXEL, capiAccessToken: TOKEN });
      graph.outage = { type: 'error', status: 401, code: 190, message: 'Error validating access token' };
      const send = (app: typeof c.app) =>
        call(app, 'POST', '/v1/track/conversion', { key: c.key, body: conversionBody(storeId) }).then((r) =>
          expect(r.status).toBe(200),
        );
      // Both instances at once, until there were 6 requests or more: their recordings interleave.
      for (let round = 0; round < 10 && graph.requests.length < 6; round++) {
        await Promise.all([c.app, other, c.app, other, c.app, other].map(send));
      }
      // Every job ended (a refused token fails them at once): nothing left in flight.
      await until(
        async () =>
          (await c.database.read.selectFrom('destination_jobs').select('status').where('status', '=', 'pending').execute())
            .length,
        (n) => n === 0,
      );
      const health = await healthOf(c, storeId);
      expect(health.consecutiveFailures).toBe(graph.requests.length);
      expect(graph.requests.length).toBeGreaterThanOrEqual(5);
      const turned = [...c.healthLines(), ...lines.filter((l) => /^Destination meta of store /.test(l.msg))];
      expect(turned).toHaveLength(1);
      expect((await healthEvents(c)).map((e) => e.type)).toEqual(['destination.failing']);
    } finally {
      await other.close();
      rmSync(otherDir, { recursive: true, force: true });
    }
  });
});

describe('failing when a job waits longer than DESTINATION_ALERT_AFTER_S', () => {
  it('turns failing from the periodic check while Meta does not answer, and back when it does', async () => {
    ctx = await healthApp({ DESTINATION_ALERT_AFTER_S: '1', CAPI_SYNC_WAIT_MS: '0' }, { healthCheckMs: 100 });
    const c = ctx;
    await subscribe(c);
    const storeId = await makeStore(c.app, c.key, { pixelId: PIXEL, capiAccessToken: TOKEN });
    const release = graph.hold(); // the request is sent and never answered meanwhile: no attempt recorded
    await convert(c, storeId);
    const failing = await until(
      () => healthOf(c, storeId),
      (h) => h.status === 'failing',
    );
    expect(failing.consecutiveFailures).toBe(0);
    expect(Date.parse(failing.oldestPendingAt)).toBeLessThanOrEqual(Date.now() - 1000);
    await until(
      async () => c.healthLines().length,
      (n) => n > 0,
    );
    expect(c.healthLines()[0]?.msg).toMatch(/is failing: A conversion has waited for Meta since .* \(more than 1 s\)/);
    release();
    const ok = await until(
      () => healthOf(c, storeId),
      (h) => h.status === 'ok',
    );
    expect(ok.oldestPendingAt).toBeUndefined();
    await until(
      async () => c.healthLines().length,
      (n) => n > 1,
    );
    // Checks keep running: nothing more is said while it delivers.
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(c.healthLines().map((l) => l.level)).toEqual([40, 30]);
    expect((await healthEvents(c)).map((e) => e.type)).toEqual(['destination.failing', 'destination.recovered']);
  });
});

describe('messages say whose side failed', () => {
  it('a name that does not resolve: this server and the host, not Meta', async () => {
    ctx = await healthApp({ META_GRAPH_URL: 'http://nonexistent.invalid', CAPI_SYNC_WAIT_MS: '10000' });
    const c = ctx;
    const storeId = await makeStore(c.app, c.key, { pixelId: PIXEL, capiAccessToken: TOKEN });
    await convert(c, storeId);
    const health = await until(
      () => healthOf(c, storeId),
      (h) => h.consecutiveFailures >= 1,
    );
    expect(health.lastError).toMatch(
      /^This server could not resolve nonexistent\.invalid \((ENOTFOUND|EAI_AGAIN)\): check outbound network, DNS, proxy/,
    );
    const check = await call(c.app, 'POST', `/v1/stores/${storeId}/destinations/meta/test`, { key: c.key });
    expect(check.status).toBe(200);
    expect(check.body.data.ok).toBe(false);
    expect(check.body.data.message).toMatch(/^This server could not resolve nonexistent\.invalid/);
  });

  it('a port nothing listens on: this server could not connect to the host and port', async () => {
    const port = await closedPort();
    ctx = await healthApp({ TIKTOK_API_URL: `http://127.0.0.1:${port}` });
    const c = ctx;
    const storeId = await makeStore(c.app, c.key);
    const put = await call(c.app, 'PUT', `/v1/stores/${storeId}/destinations/tiktok`, {
      key: c.key,
      body: { pixelCode: 'CABCDEFGHIJ1234567', accessToken: fake.tiktokToken, testEventCode: 'TEST1' },
    });
    expect(put.status).toBe(200);
    const check = await call(c.app, 'POST', `/v1/stores/${storeId}/destinations/tiktok/test`, { key: c.key });
    expect(check.body.data).toEqual({
      ok: false,
      message: expect.stringMatching(
        new RegExp(`^This server could not connect to 127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\): check outbound network`),
      ),
    });
  });
});

describe('POST /v1/stores/:id/destinations/:kind/test', () => {
  it('Meta: reads the pixel with the token; a refused token names what to renew; nothing recorded', async () => {
    ctx = await healthApp();
    const c = ctx;
    const storeId = await makeStore(c.app, c.key, { pixelId: PIXEL, capiAccessToken: TOKEN });
    const good = await call(c.app, 'POST', `/v1/stores/${storeId}/destinations/meta/test`, { key: c.key });
    expect(good.status).toBe(200);
    expect(good.body.data).toEqual({ ok: true, message: `Meta accepted the access token for pixel ${PIXEL} (Fake pixel)` });
    expect(graph.pixelReads).toEqual([{ pixelId: PIXEL, accessToken: TOKEN, tokenInUrl: false }]);

    graph.validTokens = new Set(['another-token']);
    const bad = await call(c.app, 'POST', `/v1/stores/${storeId}/destinations/meta/test`, { key: c.key });
    expect(bad.body.data.ok).toBe(false);
    expect(bad.body.data.message).toMatch(/code 190.*Generate access token/);
    expect(bad.body.data.platformMessage).toMatch(/Invalid OAuth access token/);
    expect(JSON.stringify(bad.body)).not.toContain(TOKEN);

    // No event was sent, no conversion or job recorded, the health untouched.
    expect(graph.requests).toEqual([]);
    expect(await c.database.read.selectFrom('conversions').select('id').execute()).toEqual([]);
    expect(await c.database.read.selectFrom('destination_jobs').select('conversion_id').execute()).toEqual([]);
    expect(await healthOf(c, storeId)).toEqual({ status: 'unverified', consecutiveFailures: 0 });
  });

  it('Meta with a test event code: one test event, never a live one', async () => {
    ctx = await healthApp();
    const c = ctx;
    const storeId = await makeStore(c.app, c.key, { pixelId: PIXEL, capiAccessToken: TOKEN, capiTestEventCode: 'TEST777' });
    const res = await call(c.app, 'POST', `/v1/stores/${storeId}/destinations/meta/test`, { key: c.key });
    expect(res.body.data.ok).toBe(true);
    expect(graph.requests).toHaveLength(1);
    expect(graph.requests[0]?.testEventCode).toBe('TEST777');
    expect(graph.requests[0]?.events).toHaveLength(1);
    expect(await c.database.read.selectFrom('conversions').select('id').execute()).toEqual([]);
  });

  it('TikTok: a test event with testEventCode; a bad token names it; without a code, says how to get one', async () => {
    ctx = await healthApp();
    const c = ctx;
    const storeId = await makeStore(c.app, c.key);
    const put = (body: Record<string, unknown>) =>
      call(c.app, 'PUT', `/v1/stores/${storeId}/destinations/tiktok`, {
        key: c.key,
        body: { pixelCode: 'CABCDEFGHIJ1234567', ...body },
      });
    const test = () => call(c.app, 'POST', `/v1/stores/${storeId}/destinations/tiktok/test`, { key: c.key });

    expect((await put({ accessToken: fake.tiktokToken })).status).toBe(200);
    const noCode = await test();
    expect(noCode.body.data.ok).toBe(false);
    expect(noCode.body.data.message).toMatch(/testEventCode/);
    expect(fake.tiktok).toHaveLength(0);

    expect((await put({ accessToken: fake.tiktokToken, testEventCode: 'TEST9' })).status).toBe(200);
    const good = await test();
    expect(good.body.data).toEqual({ ok: true, message: expect.stringMatching(/^TikTok accepted a test event/) });
    expect(fake.tiktok).toHaveLength(1);
    expect(fake.tiktok[0]?.body.test_event_code).toBe('TEST9');

    expect((await put({ accessToken: 'revoked-token', testEventCode: 'TEST9' })).status).toBe(200);
    const bad = await test();
    expect(bad.body.data.ok).toBe(false);
    expect(bad.body.data.message).toMatch(/code 40105.*Events API access token/);
    expect(bad.body.data.platformMessage).toBe('Access token is incorrect or has been revoked.');
    expect(await c.database.read.selectFrom('conversions').select('id').execute()).toEqual([]);
  });

  it('Google: the refresh token exchanged now and a validateOnly upload, on both APIs; a revoked token says so', async () => {
    ctx = await healthApp();
    const c = ctx;
    const storeId = await makeStore(c.app, c.key);
    const action = 'customers/1234567890/conversionActions/555';
    const put = (body: Record<string, unknown>) =>
      call(c.app, 'PUT', `/v1/stores/${storeId}/destinations/google_ads`, {
        key: c.key,
        body: { customerId: '1234567890', conversionAction: action, oauth: { ...dm.oauthClient }, ...body },
      });
    const test = () => call(c.app, 'POST', `/v1/stores/${storeId}/destinations/google_ads/test`, { key: c.key });

    expect((await put({ api: 'data_manager' })).status).toBe(200);
    const dataManager = await test();
    expect(dataManager.body.data).toEqual({
      ok: true,
      message: expect.stringMatching(/validateOnly upload \(Data Manager API\)/),
    });
    expect(dm.requests.map((r) => r.body.validateOnly)).toEqual([true]);
    expect(dm.conversions.size).toBe(0);

    expect((await put({ api: 'google_ads_api', developerToken: fake.developerToken })).status).toBe(200);
    const adsApi = await test();
    expect(adsApi.body.data.ok).toBe(true);
    expect(fake.uploads.map((u) => u.validateOnly)).toEqual([true]);

    expect((await put({ api: 'data_manager', oauth: { ...dm.oauthClient, refreshToken: '1//revoked' } })).status).toBe(200);
    const revoked = await test();
    expect(revoked.body.data.ok).toBe(false);
    expect(revoked.body.data.message).toMatch(/invalid_grant|refresh token/i);
    expect(JSON.stringify(revoked.body)).not.toContain(dm.oauthClient.clientSecret);
    expect(await c.database.read.selectFrom('conversions').select('id').execute()).toEqual([]);
  });

  it('answers 404 for a destination not configured, 400 for an unknown kind, 403 without stores:write, 404 for another account', async () => {
    ctx = await healthApp();
    const c = ctx;
    const storeId = await makeStore(c.app, c.key, { pixelId: PIXEL, capiAccessToken: TOKEN });
    const url = (kind: string) => `/v1/stores/${storeId}/destinations/${kind}/test`;
    expectError(await call(c.app, 'POST', url('tiktok'), { key: c.key }), 404, 'not_found');
    const unknown = expectError(await call(c.app, 'POST', url('myspace'), { key: c.key }), 400, 'invalid_request');
    expect(unknown.details?.field).toBe('kind');
    expectError(await call(c.app, 'POST', url('meta'), { key: c.readOnlyKey }), 403, 'forbidden');
    expectError(await call(c.app, 'POST', url('meta'), { key: c.otherKey }), 404, 'store_not_found');
    // The test-mode key of the same account checks the same (store) configuration.
    expect((await call(c.app, 'POST', url('meta'), { key: c.testKey })).body.data.ok).toBe(true);
  });
});

describe('@waytrack/client', () => {
  it('wt.stores.destinations.test(storeId, kind) and the listed health', async () => {
    ctx = await healthApp();
    const c = ctx;
    const storeId = await makeStore(c.app, c.key, { pixelId: PIXEL, capiAccessToken: TOKEN });
    // The client's requests go to the app in process (its fetch option), not over a socket.
    const fetch: FetchLike = async (url, init) => {
      const res = await c.app.inject({
        method: init.method as 'GET' | 'POST',
        url: new URL(url).pathname,
        headers: init.headers,
        ...(init.body !== undefined && { payload: init.body }),
      });
      return {
        status: res.statusCode,
        headers: { get: (name) => (res.headers[name.toLowerCase()] as string) ?? null },
        text: async () => res.body,
      };
    };
    const wt = new Waytrack({ apiKey: c.key, baseUrl: 'http://waytrack.test/v1', fetch, maxRetries: 0 });
    const result: DestinationTestResult = await wt.stores.destinations.test(storeId, 'meta');
    expect(result).toEqual({ ok: true, message: `Meta accepted the access token for pixel ${PIXEL} (Fake pixel)` });
    graph.validTokens = new Set(['another-token']);
    const refused = await wt.stores.destinations.test(storeId, 'meta');
    expect(refused.ok).toBe(false);
    expect(refused.platformMessage).toMatch(/Invalid OAuth access token/);
    const list = await wt.stores.destinations.list(storeId);
    const health: DestinationHealth | undefined = list.destinations.find((d) => d.kind === 'meta')?.health;
    expect(health).toEqual({ status: 'unverified', consecutiveFailures: 0 });
  });
});
