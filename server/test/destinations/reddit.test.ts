import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, call, createTestContext, makeStore, type TestContext } from '../helpers.js';
import { FakeReddit } from './fake-reddit.js';
import { FAST, RELAXED } from './meta/setup.js';

/** The reddit destination (api.md §12): Reddit's Conversions API v2.0 against its local fake. */

const sha = (value: string) => createHash('sha256').update(value, 'utf8').digest('hex');

let fake: FakeReddit;
let ctx: TestContext;
beforeAll(async () => {
  fake = await FakeReddit.start();
});
afterAll(async () => {
  await fake.close();
});
afterEach(async () => {
  await ctx?.close();
  fake.reset();
});

function context() {
  return createTestContext({
    env: { REDDIT_API_URL: fake.url, CAPI_SYNC_WAIT_MS: '0' },
    forwarding: { ...FAST, ...RELAXED },
  });
}

const redditBody = (overrides: Record<string, unknown> = {}) => ({
  adAccountId: fake.adAccountId,
  accessToken: fake.token,
  ...overrides,
});

async function put(storeId: string, body: unknown, key = ctx.a.live): Promise<ApiResponse> {
  return call(ctx.app, 'PUT', `/v1/stores/${storeId}/destinations/reddit`, { key, body });
}

async function redditStore(): Promise<string> {
  const storeId = await makeStore(ctx.app, ctx.a.live);
  expect((await put(storeId, redditBody())).status).toBe(200);
  return storeId;
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

async function waitForwarding(id: string, status: string, key = ctx.a.live, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const data = await forwardingOf(id, key);
    if (data.forwarding?.reddit?.status === status) return data;
    if (Date.now() > deadline) throw new Error(`${id}: ${JSON.stringify(data.forwarding)}, expected reddit ${status}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function jobsOf(conversionId: string) {
  return ctx.database.read
    .selectFrom('destination_jobs')
    .selectAll()
    .where('conversion_id', '=', conversionId)
    .where('destination', '=', 'reddit')
    .execute();
}

describe('reddit destination', () => {
  it('settings: validated with details.field, the token write-only and sealed, other accounts see nothing', async () => {
    ctx = await context();
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const bad = await put(storeId, redditBody({ adAccountId: '12345' }));
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toMatchObject({ field: 'adAccountId', reason: 'invalid_format' });
    const missing = await put(storeId, { adAccountId: 't2_abc123' });
    expect(missing.status).toBe(400);
    expect(missing.body.error.details).toMatchObject({ field: 'accessToken' });
    const unknown = await put(storeId, redditBody({ pixelId: 'x' }));
    expect(unknown.body.error.details).toMatchObject({ field: 'pixelId', reason: 'unknown_field' });

    const ok = await put(storeId, redditBody({ adAccountId: 't2_legacy9' }));
    expect(ok.status).toBe(200);
    expect(ok.body.data).toMatchObject({
      kind: 'reddit',
      configured: true,
      settings: { adAccountId: 't2_legacy9', accessTokenConfigured: true },
    });
    const list = await call(ctx.app, 'GET', `/v1/stores/${storeId}/destinations`, { key: ctx.a.live });
    expect(JSON.stringify(list.body)).not.toContain(fake.token);
    expect(list.body.data.destinations.map((d: { kind: string }) => d.kind)).toContain('reddit');
    const row = await ctx.database.read.selectFrom('store_destinations').selectAll().where('store_id', '=', storeId).execute();
    expect(JSON.stringify(row)).not.toContain(fake.token);
    // Left out, the stored token is kept.
    expect((await put(storeId, { adAccountId: fake.adAccountId })).status).toBe(200);
    const other = await call(ctx.app, 'GET', `/v1/stores/${storeId}/destinations`, { key: ctx.b.live });
    expect(other.status).toBe(404);
    const otherPut = await put(storeId, redditBody(), ctx.b.live);
    expect(otherPut.status).toBe(404);
  });

  it('a conversion with an rdt_cid is delivered once with the exact body; one without gets no entry', async () => {
    ctx = await context();
    const storeId = await redditStore();
    const click = await call(ctx.app, 'POST', '/v1/track/click', {
      key: ctx.a.live,
      body: {
        storeId,
        landingPage: 'https://shop.acme.test/p?rdt_cid=1700000000.t2_abc',
        fingerprint: 'fp-r',
        visitorId: 'wt.fp-r',
      },
    });
    expect(click.status).toBe(200);
    const time = Date.now() - 60_000;
    const id = await conversion(storeId, {
      orderId: 'r-1',
      fingerprint: 'fp-r',
      visitorId: 'wt.fp-r',
      eventValue: 12.34,
      currency: 'USD',
      timestamp: new Date(time).toISOString(),
      rdtUuid: '1700000000000.uuid-1',
      ipAddress: '203.0.113.7',
      userAgent: 'Mozilla/5.0 (test)',
      products: [
        { productId: 'p1', quantity: 2, price: 5 },
        { productId: 'p2', quantity: 1, price: 2.34 },
      ],
      customerData: { email: ' John.Smith@GMail.com ' },
    });
    const none = await conversion(storeId, { orderId: 'r-none' });
    const data = await waitForwarding(id, 'sent');
    expect(data.forwarding.reddit).toMatchObject({ status: 'sent', attempts: 1 });
    expect(fake.requests).toHaveLength(1);
    const request = fake.requests[0];
    expect(request?.authorization).toBe(`Bearer ${fake.token}`);
    expect(request?.adAccountId).toBe(fake.adAccountId);
    expect(request?.body).toEqual({
      test_mode: false,
      events: [
        {
          event_at: new Date(time).toISOString(),
          event_type: { tracking_type: 'Purchase' },
          click_id: '1700000000.t2_abc',
          event_metadata: { conversion_id: data.eventId, currency: 'USD', value_decimal: 12.34, item_count: 3 },
          user: {
            email: sha('john.smith@gmail.com'),
            ip_address: '203.0.113.7',
            user_agent: 'Mozilla/5.0 (test)',
            uuid: '1700000000000.uuid-1',
          },
        },
      ],
    });
    expect(await jobsOf(id)).toHaveLength(1);
    // Reddit's request id is the trace id (reconciliation).
    expect((await jobsOf(id))[0]?.trace_id).toBe(request?.requestId);
    expect((await forwardingOf(none)).forwarding?.reddit).toBeUndefined();
    expect(await jobsOf(none)).toHaveLength(0);
    // Another account cannot see the conversion.
    expect((await call(ctx.app, 'GET', `/v1/conversions/${id}`, { key: ctx.b.live })).status).toBe(404);
  });

  it('an explicit rdt_cid routes; consent adUserData denied sends no user data, adStorage denied skips', async () => {
    ctx = await context();
    const storeId = await redditStore();
    const denied = await conversion(storeId, {
      orderId: 'r-consent',
      rdt_cid: 'RDT-explicit',
      rdtUuid: 'uuid-denied',
      ipAddress: '203.0.113.8',
      userAgent: 'UA',
      customerData: { email: 'a@example.com' },
      consent: { adUserData: 'denied' },
    });
    await waitForwarding(denied, 'sent');
    const event = fake.accepted().find((e) => e.click_id === 'RDT-explicit');
    expect(event?.user).toEqual({});
    const noStorage = await conversion(storeId, { orderId: 'r-storage', rdt_cid: 'RDT-2', consent: { adStorage: 'denied' } });
    expect((await forwardingOf(noStorage)).forwarding.reddit).toMatchObject({ status: 'skipped', reason: 'consent_denied' });
    expect(await jobsOf(noStorage)).toHaveLength(0);
  });

  it('429 is retried after Retry-After, then sent; a 400 fails with Reddit’s message; 401 names the token', async () => {
    ctx = await context();
    const storeId = await redditStore();
    fake.faults.push({ type: 'throttle', retryAfterSeconds: 0 }, { type: 'server' });
    const id = await conversion(storeId, { orderId: 'r-429', rdt_cid: 'RDT-429' });
    const data = await waitForwarding(id, 'sent');
    expect(data.forwarding.reddit.attempts).toBe(3);
    expect(fake.requests.map((r) => r.status)).toEqual([429, 503, 200]);

    fake.faults.push({ type: 'bad-request', message: 'invalid click_id' });
    const refused = await conversion(storeId, { orderId: 'r-400', rdt_cid: 'RDT-400' });
    const failed = await waitForwarding(refused, 'failed');
    expect(failed.forwarding.reddit.lastError).toBe('Reddit error (HTTP 400): invalid click_id');

    fake.token = 'rotated';
    try {
      const unauthorized = await conversion(storeId, { orderId: 'r-401', rdt_cid: 'RDT-401' });
      const denied = await waitForwarding(unauthorized, 'failed');
      expect(denied.forwarding.reddit.lastError).toMatch(
        /^Reddit error \(HTTP 401\): Unauthorized — renew the conversion access token/,
      );
    } finally {
      fake.token = 'reddit-conversion-token';
    }
  });

  it('test mode sends test_mode: true; older than 7 days is skipped', async () => {
    ctx = await context();
    const storeId = await redditStore();
    const test = await conversion(storeId, { orderId: 'r-test', rdt_cid: 'RDT-test' }, ctx.a.test);
    await waitForwarding(test, 'sent', ctx.a.test);
    expect(fake.requests.at(-1)?.body.test_mode).toBe(true);
    const old = new Date(Date.now() - 8 * 86_400_000).toISOString();
    const stale = await conversion(storeId, { orderId: 'r-old', rdt_cid: 'RDT-old', timestamp: old });
    expect((await forwardingOf(stale)).forwarding.reddit).toMatchObject({ status: 'skipped', reason: 'expired' });
  });

  it('POST …/destinations/reddit/test sends a test-mode event and reports Reddit’s refusal', async () => {
    ctx = await context();
    const storeId = await redditStore();
    const good = await call(ctx.app, 'POST', `/v1/stores/${storeId}/destinations/reddit/test`, { key: ctx.a.live });
    expect(good.status).toBe(200);
    expect(good.body.data).toEqual({ ok: true, message: `Reddit accepted a test-mode event for ad account ${fake.adAccountId}` });
    expect(fake.requests.at(-1)?.body.test_mode).toBe(true);
    fake.faults.push({ type: 'bad-request', message: 'invalid event' });
    const bad = await call(ctx.app, 'POST', `/v1/stores/${storeId}/destinations/reddit/test`, { key: ctx.a.live });
    expect(bad.body.data).toEqual({
      ok: false,
      message: 'Reddit error (HTTP 400): invalid event',
      platformMessage: 'invalid event',
    });
  });
});
