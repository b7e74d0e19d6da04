import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { reconcile } from '../../src/analytics/reconciliation.js';
import { reconciliationReport } from '../../src/analytics/reconciliation-report.js';
import { addDays, startOfDay } from '../../src/calendar/dates.js';
import { DESTINATION_KINDS, forwardingStates } from '../../src/db/repositories/reconciliation.js';
import { call, createTestContext, makeStore, type TestContext } from '../helpers.js';
import { FakeMicrosoft } from './fake-microsoft.js';
import { FakeGraph } from './meta/fake-graph.js';
import { FAST, PIXEL, TOKEN } from './meta/setup.js';

const UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';
const sha = (value: string) => createHash('sha256').update(value, 'utf8').digest('hex');

let fake: FakeMicrosoft;
let graph: FakeGraph;
let ctx: TestContext;

beforeAll(async () => {
  fake = await FakeMicrosoft.start();
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
});

function context() {
  return createTestContext({
    env: { META_GRAPH_URL: graph.url, MICROSOFT_CAPI_URL: fake.url, CAPI_SYNC_WAIT_MS: '0' },
    forwarding: FAST,
  });
}

const settings = (overrides: Record<string, unknown> = {}) => ({ tagId: fake.tagId, accessToken: fake.token, ...overrides });

function put(storeId: string, body: unknown, key = ctx.a.live) {
  return call(ctx.app, 'PUT', `/v1/stores/${storeId}/destinations/microsoft`, { key, body });
}

async function configured(): Promise<string> {
  const storeId = await makeStore(ctx.app, ctx.a.live, { pixelId: PIXEL, capiAccessToken: TOKEN });
  expect((await put(storeId, settings())).status).toBe(200);
  return storeId;
}

async function click(storeId: string, body: Record<string, unknown>, key = ctx.a.live) {
  const res = await call(ctx.app, 'POST', '/v1/track/click', {
    key,
    body: { storeId, landingPage: 'https://shop.acme.test/p?utm_source=bing', ...body },
  });
  expect(res.status).toBe(200);
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
  return (await call(ctx.app, 'GET', `/v1/conversions/${id}`, { key })).body.data;
}

async function waitForwarding(id: string, status: string, key = ctx.a.live, timeoutMs = 8000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const data = await forwardingOf(id, key);
    if (data.forwarding?.microsoft?.status === status) return data;
    if (Date.now() > deadline) throw new Error(`${id}: ${JSON.stringify(data.forwarding)}, expected ${status}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const eventOf = (orderId: string) => fake.accepted().find((e) => e.customData?.transactionId === orderId);

describe('microsoft destination settings', () => {
  it('validates, never echoes the token, keeps it when left out; another account cannot see or set it', async () => {
    ctx = await context();
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const missing = await put(storeId, { tagId: fake.tagId });
    expect(missing.status).toBe(400);
    expect(missing.body.error.details.field).toBe('accessToken');
    const badTag = await put(storeId, settings({ tagId: 'abc' }));
    expect(badTag.status).toBe(400);
    expect(badTag.body.error.details).toMatchObject({ field: 'tagId', reason: 'invalid_format' });
    const unknown = await put(storeId, settings({ pixelId: '1' }));
    expect(unknown.body.error.details).toMatchObject({ field: 'pixelId', reason: 'unknown_field' });

    const ok = await put(storeId, settings());
    expect(ok.status).toBe(200);
    expect(JSON.stringify(ok.body)).not.toContain(fake.token);
    expect(ok.body.data.settings).toEqual({ tagId: fake.tagId, accessTokenConfigured: true });
    // The token left out is kept.
    expect((await put(storeId, { tagId: fake.tagId })).status).toBe(200);
    const list = await call(ctx.app, 'GET', `/v1/stores/${storeId}/destinations`, { key: ctx.a.live });
    const entry = list.body.data.destinations.find((d: { kind: string }) => d.kind === 'microsoft');
    expect(entry).toMatchObject({ configured: true, settings: { tagId: fake.tagId, accessTokenConfigured: true } });
    expect(JSON.stringify(list.body)).not.toContain(fake.token);
    // Sealed at rest: the stored row does not hold the token in clear.
    const rows = await ctx.database.read.selectFrom('store_destinations').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(fake.token);

    // Tenancy: account b sees no such store.
    expect((await put(storeId, settings(), ctx.b.live)).status).toBe(404);
    const other = await call(ctx.app, 'GET', `/v1/stores/${storeId}/destinations`, { key: ctx.b.live });
    expect(other.status).toBe(404);
  });
});

describe('microsoft routing and delivery (api.md §12)', () => {
  it('a conversion crediting an msclkid click is sent with the documented body; one without is not routed', async () => {
    ctx = await context();
    const storeId = await configured();
    const eventMs = Math.floor((Date.now() - 86_400_000) / 1000) * 1000;
    await click(storeId, {
      msclkid: 'MS-1',
      fingerprint: 'fp-ms',
      visitorId: 'wt.fp-ms',
      ipAddress: '203.0.113.7',
      userAgent: UA,
      timestamp: new Date(eventMs - 60_000).toISOString(),
    });
    const id = await conversion(storeId, {
      orderId: 'ms-1',
      eventId: 'evt-ms-1',
      ipAddress: '203.0.113.7',
      userAgent: UA,
      fingerprint: 'fp-ms',
      visitorId: 'wt.fp-ms',
      timestamp: new Date(eventMs).toISOString(),
      products: [{ productId: 'SKU-1', quantity: 2, price: 24.95 }],
      customerData: { email: ' John.Smith@GMail.com ', phone: '(650) 555-1212', country: 'US' },
    });
    const explicit = await conversion(storeId, { orderId: 'ms-2', msclkid: 'MS-explicit' });
    const none = await conversion(storeId, { orderId: 'ms-3', gclid: 'G-1' });
    // Folded into the report rollups now, most likely before delivery: the deliveries move them.
    await reconciliationReport(ctx.database, { accountId: ctx.a.accountId, livemode: true }, storeId, {});

    const data = await waitForwarding(id, 'sent');
    await waitForwarding(explicit, 'sent');
    await expectReconciliationAsRaw(storeId);
    expect((await forwardingOf(none)).forwarding.microsoft).toBeUndefined();
    expect(Object.keys(data.forwarding).sort()).toEqual(['meta', 'microsoft']);

    const request = fake.requests.find((r) => r.body.data.some((e: { eventId: string }) => e.eventId === 'evt-ms-1'));
    expect(request?.authorization).toBe(`Bearer ${fake.token}`);
    expect(request?.tagId).toBe(fake.tagId);
    expect(request?.body.continueOnValidationError).toBe(true);
    expect(eventOf('ms-1')).toEqual({
      eventType: 'custom',
      eventId: 'evt-ms-1',
      eventName: 'purchase',
      eventTime: eventMs / 1000,
      eventSourceUrl: 'https://shop.acme.test/p?utm_source=bing',
      adStorageConsent: 'G',
      userData: {
        msclkid: 'MS-1',
        em: sha('john.smith@gmail.com'),
        ph: sha('+16505551212'),
        clientIpAddress: '203.0.113.7',
        clientUserAgent: UA,
      },
      customData: { value: 49.9, currency: 'EUR', transactionId: 'ms-1', itemIds: ['SKU-1'] },
    });
    expect(eventOf('ms-2')?.userData.msclkid).toBe('MS-explicit');
    expect(fake.accepted().some((e) => e.customData.transactionId === 'ms-3')).toBe(false);

    // Exactly one job per conversion; the trace id is the request's, for reconciliation (§10).
    const jobs = await ctx.database.read
      .selectFrom('destination_jobs')
      .select(['conversion_id', 'trace_id'])
      .where('destination', '=', 'microsoft')
      .execute();
    expect(jobs.map((j) => j.conversion_id).sort()).toEqual([id, explicit].sort());
    expect(jobs.find((j) => j.conversion_id === id)?.trace_id).toBe(request?.requestId);
    // Match quality counts Microsoft's keys.
    expect(data.matchQuality.microsoft).toMatchObject({ keys: ['clickId', 'email', 'phone', 'ipUserAgent'], score: 10 });
    // Secrets never echoed in the conversion.
    expect(JSON.stringify(data)).not.toContain(fake.token);
  });

  it('consent: adUserData denied strips user data; adStorage denied skips (no msclkid)', async () => {
    ctx = await context();
    const storeId = await configured();
    const noUser = await conversion(storeId, {
      orderId: 'c-1',
      msclkid: 'MS-c1',
      ipAddress: '203.0.113.8',
      userAgent: 'UA',
      customerData: { email: 'a@b.test', phone: '+16505551212' },
      consent: { adUserData: 'denied' },
    });
    await waitForwarding(noUser, 'sent');
    expect(eventOf('c-1')?.userData).toEqual({ msclkid: 'MS-c1' });

    const noStorage = await conversion(storeId, { orderId: 'c-2', msclkid: 'MS-c2', consent: { adStorage: 'denied' } });
    const skipped = await forwardingOf(noStorage);
    expect(skipped.forwarding.microsoft).toMatchObject({ status: 'skipped', reason: 'consent_denied' });
    expect(fake.requests.some((r) => JSON.stringify(r.body).includes('MS-c2'))).toBe(false);
  });

  it('429 and 500 are retried (Retry-After honoured); refusals fail with Microsoft’s message', async () => {
    ctx = await context();
    const storeId = await configured();
    fake.faults.push({ type: 'throttle', retryAfterSeconds: 0 }, { type: 'server' });
    const id = await conversion(storeId, { orderId: 'r-1', msclkid: 'MS-r1' });
    const sent = await waitForwarding(id, 'sent');
    expect(sent.forwarding.microsoft.attempts).toBe(3);
    expect(sent.forwarding.microsoft.lastError).toContain('HTTP 500');
    expect(eventOf('r-1')).toBeDefined();

    // One event refused by index: that one fails with the platform's words.
    fake.badClickIds.add('MS-bad');
    const bad = await conversion(storeId, { orderId: 'r-2', msclkid: 'MS-bad' });
    const failed = await waitForwarding(bad, 'failed');
    expect(failed.forwarding.microsoft.attempts).toBe(1);
    expect(failed.forwarding.microsoft.lastError).toContain('msclkid is not a valid Microsoft click id');

    // A refused token fails the request, says what to renew, and never shows the token.
    await put(storeId, settings({ accessToken: 'revoked-token' }));
    const refused = await conversion(storeId, { orderId: 'r-3', msclkid: 'MS-r3' });
    const denied = await waitForwarding(refused, 'failed');
    expect(denied.forwarding.microsoft.lastError).toMatch(/HTTP 401: Invalid access token.*Use Conversions API/);
    expect(denied.forwarding.microsoft.lastError).not.toContain('revoked-token');
  });

  it('test mode: never sent (no test channel), skipped with its reason; age limit: 90 days', async () => {
    ctx = await context();
    const storeId = await configured();
    const test = await conversion(storeId, { orderId: 't-1', msclkid: 'MS-t1' }, ctx.a.test);
    expect((await forwardingOf(test, ctx.a.test)).forwarding.microsoft).toMatchObject({
      status: 'skipped',
      reason: 'test_mode_unsupported',
    });
    const old = new Date(Date.now() - 91 * 86_400_000).toISOString();
    const stale = await conversion(storeId, { orderId: 't-2', msclkid: 'MS-old', timestamp: old });
    expect((await forwardingOf(stale)).forwarding.microsoft).toMatchObject({ status: 'skipped', reason: 'expired' });
    const recent = new Date(Date.now() - 30 * 86_400_000).toISOString();
    const fine = await conversion(storeId, { orderId: 't-3', msclkid: 'MS-recent', timestamp: recent });
    await waitForwarding(fine, 'sent');
    expect(fake.requests.every((r) => !JSON.stringify(r.body).includes('MS-t1'))).toBe(true);
  });

  it('refunds are not sent to Microsoft (no adjustments in CAPI)', async () => {
    ctx = await context();
    const storeId = await configured();
    const id = await conversion(storeId, { orderId: 'f-1', msclkid: 'MS-f1' });
    await waitForwarding(id, 'sent');
    const refund = await call(ctx.app, 'POST', '/v1/track/refund', {
      key: ctx.a.live,
      body: { storeId, orderId: 'f-1', refundId: 'rf-1', amount: 10, currency: 'EUR' },
    });
    expect(refund.status).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    const jobs = await ctx.database.read
      .selectFrom('destination_jobs')
      .select(['kind'])
      .where('destination', '=', 'microsoft')
      .execute();
    expect(jobs.map((j) => j.kind)).toEqual(['conversion']);
    expect(fake.requests).toHaveLength(1);
  });

  it('the destination test checks the token without sending an event', async () => {
    ctx = await context();
    const storeId = await configured();
    const test = () => call(ctx.app, 'POST', `/v1/stores/${storeId}/destinations/microsoft/test`, { key: ctx.a.live });
    const good = await test();
    expect(good.body.data).toEqual({
      ok: true,
      message: `Microsoft Advertising accepted the access token for UET tag ${fake.tagId}`,
    });
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]?.body.data).toEqual([]);
    expect(fake.accepted()).toEqual([]);

    await put(storeId, settings({ accessToken: 'revoked-token' }));
    const bad = await test();
    expect(bad.body.data.ok).toBe(false);
    expect(bad.body.data.message).toMatch(/HTTP 401.*Use Conversions API/);
    expect(bad.body.data.platformMessage).toContain('Invalid access token');
    expect(JSON.stringify(bad.body)).not.toContain('revoked-token');
    expect(await ctx.database.read.selectFrom('conversions').select('id').execute()).toEqual([]);
  });
});

/** The reconciliation report, read from its rollups, equals the computation over the conversions as they are. */
async function expectReconciliationAsRaw(storeId: string) {
  const tenant = { accountId: ctx.a.accountId, livemode: true };
  const report = await reconciliationReport(ctx.database, tenant, storeId, {});
  const from = startOfDay(report.startDate, report.timezone);
  const to = startOfDay(addDays(report.endDate, 1), report.timezone);
  const conversions = await forwardingStates(ctx.database.read, { accountId: ctx.a.accountId, livemode: 1, storeId, from, to });
  const raw = reconcile({ ...report, storeId, kinds: DESTINATION_KINDS, conversions });
  expect(report.days).toEqual(raw);
  expect(raw.some((d) => (d.destinations.microsoft?.acknowledged ?? 0) > 0)).toBe(true);
}
