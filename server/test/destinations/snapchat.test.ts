import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, call, createTestContext, makeStore, type TestContext } from '../helpers.js';
import { FakeSnapchat, type Json } from './fake-snapchat.js';
import { FAST, RELAXED } from './meta/setup.js';

// The snapchat destination (api.md §12) against a local Snap Conversions API v3.
const sha = (value: string) => createHash('sha256').update(value, 'utf8').digest('hex');

const UA =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';

let fake: FakeSnapchat;
let ctx: TestContext;

beforeAll(async () => {
  fake = await FakeSnapchat.start();
});
afterAll(async () => {
  await fake.close();
});
afterEach(async () => {
  await ctx?.close();
  fake.reset();
});

const context = () =>
  createTestContext({
    env: { SNAPCHAT_API_URL: fake.url, META_GRAPH_URL: 'http://127.0.0.1:9', CAPI_SYNC_WAIT_MS: '0' },
    forwarding: { ...FAST, ...RELAXED },
  });

const settings = (overrides: Record<string, unknown> = {}) => ({
  pixelId: fake.pixelId,
  accessToken: fake.token,
  ...overrides,
});

async function put(storeId: string, body: unknown, key = ctx.a.live): Promise<ApiResponse> {
  return call(ctx.app, 'PUT', `/v1/stores/${storeId}/destinations/snapchat`, { key, body });
}

async function snapStore(key = ctx.a.live, overrides: Record<string, unknown> = {}): Promise<string> {
  const storeId = await makeStore(ctx.app, key);
  const res = await put(storeId, settings(overrides), key);
  expect(res.status).toBe(200);
  return storeId;
}

async function click(storeId: string, body: Record<string, unknown>, key = ctx.a.live) {
  const res = await call(ctx.app, 'POST', '/v1/track/click', {
    key,
    body: { storeId, landingPage: 'https://shop.acme.test/p?utm_source=snap', ...body },
  });
  expect(res.status).toBe(200);
  return res.body.data.clickId as string;
}

async function conversion(storeId: string, body: Record<string, unknown>, key = ctx.a.live) {
  const res = await call(ctx.app, 'POST', '/v1/track/conversion', {
    key,
    body: { storeId, eventType: 'Purchase', eventValue: 12.34, currency: 'EUR', ...body },
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
    if (data.forwarding?.snapchat?.status === status) return data;
    if (Date.now() > deadline) throw new Error(`${id}: ${JSON.stringify(data.forwarding)}, expected snapchat ${status}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const eventsFor = (orderId: string): Json[] =>
  fake.requests.flatMap((r) => (r.body.data as Json[]).filter((e) => e.custom_data.order_id === orderId));

describe('snapchat destination settings', () => {
  it('configures, shows no secret, refuses bad bodies with details.field, and is the account’s own', async () => {
    ctx = await context();
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const saved = await put(storeId, settings());
    expect(saved.status).toBe(200);
    expect(saved.body.data).toMatchObject({
      kind: 'snapchat',
      configured: true,
      settings: { pixelId: fake.pixelId, accessTokenConfigured: true },
    });
    const list = await call(ctx.app, 'GET', `/v1/stores/${storeId}/destinations`, { key: ctx.a.live });
    expect(list.body.data.destinations.map((d: { kind: string }) => d.kind)).toContain('snapchat');
    for (const res of [saved, list]) expect(JSON.stringify(res.body)).not.toContain(fake.token);
    const kept = await put(storeId, { pixelId: fake.pixelId });
    expect(kept.status).toBe(200);

    const fresh = await makeStore(ctx.app, ctx.a.live);
    const cases: Array<[unknown, string, string]> = [
      [{ pixelId: 'pixel id!', accessToken: 'x' }, 'pixelId', 'invalid_format'],
      [{ accessToken: 'x' }, 'pixelId', 'required_field_missing'],
      [{ pixelId: 'abc' }, 'accessToken', 'required_field_missing'],
      [{ pixelId: 'abc', accessToken: 'x', testEventCode: '1' }, 'testEventCode', 'unknown_field'],
    ];
    for (const [body, field, reason] of cases) {
      const res = await put(fresh, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.details).toMatchObject({ field, reason });
    }
    expect((await call(ctx.app, 'GET', `/v1/stores/${storeId}/destinations`, { key: ctx.b.live })).status).toBe(404);
    expect((await put(storeId, settings(), ctx.b.live)).status).toBe(404);
  });
});

describe('snapchat delivery (api.md §12)', () => {
  it('a conversion with a ScCid reaches Snap exactly, with the _scid cookie; one without gets no entry; one job each', async () => {
    ctx = await context();
    const storeId = await snapStore();
    const eventMs = Math.floor((Date.now() - 86_400_000) / 1000) * 1000;
    const clickId = await click(storeId, {
      ScCid: 'sc-click-1',
      ipAddress: '203.0.113.9',
      userAgent: UA,
      timestamp: new Date(eventMs - 60_000).toISOString(),
    });
    const routed = await conversion(storeId, {
      orderId: 'snap-1',
      eventId: 'evt-snap-1',
      clickId,
      scid: 'scid-cookie-1',
      timestamp: new Date(eventMs).toISOString(),
      customerData: { email: ' John.Smith@GMail.com ', phone: '(650) 555-1212', country: 'US' },
      products: [
        { productId: 'sku-1', name: 'One', quantity: 2, price: 5 },
        { productId: 'sku-2', name: 'Two', quantity: 1, price: 2.34 },
      ],
    });
    const explicit = await conversion(storeId, { orderId: 'snap-2', ScCid: 'sc-named' });
    const cookieOnly = await conversion(storeId, { orderId: 'snap-none', scid: 'scid-only' });

    const sent = await waitForwarding(routed, 'sent');
    expect(sent.forwarding.snapchat).toMatchObject({ status: 'sent', attempts: 1 });
    await waitForwarding(explicit, 'sent');
    expect((await forwardingOf(cookieOnly)).forwarding.snapchat).toBeUndefined();

    const request = fake.requests.find((r) => r.body.data.some((e: { event_id: string }) => e.event_id === 'evt-snap-1'));
    expect(request).toMatchObject({ pixelId: fake.pixelId, validate: false, token: fake.token, status: 200 });
    const event = request?.body.data.find((e: { event_id: string }) => e.event_id === 'evt-snap-1');
    expect(event).toEqual({
      event_name: 'PURCHASE',
      action_source: 'WEB',
      event_time: eventMs / 1000,
      event_id: 'evt-snap-1',
      event_source_url: 'https://shop.acme.test/p?utm_source=snap',
      user_data: {
        em: [sha('john.smith@gmail.com')],
        ph: [sha('16505551212')],
        client_ip_address: '203.0.113.9',
        client_user_agent: UA,
        sc_click_id: 'sc-click-1',
        sc_cookie1: 'scid-cookie-1',
      },
      custom_data: { currency: 'EUR', value: 12.34, order_id: 'snap-1', num_items: 3, content_ids: ['sku-1', 'sku-2'] },
    });
    expect(fake.accepted().find((e) => e.custom_data.order_id === 'snap-2')?.user_data.sc_click_id).toBe('sc-named');
    expect(eventsFor('snap-1')).toHaveLength(1);
    expect(eventsFor('snap-2')).toHaveLength(1);
    const jobs = await ctx.database.read
      .selectFrom('destination_jobs')
      .select(['conversion_id', 'trace_id'])
      .where('destination', '=', 'snapchat')
      .execute();
    expect(jobs.filter((j) => j.conversion_id === routed)).toEqual([{ conversion_id: routed, trace_id: request?.requestId }]);
    expect(jobs.filter((j) => j.conversion_id === cookieOnly)).toEqual([]);
    expect((await call(ctx.app, 'GET', `/v1/conversions/${routed}`, { key: ctx.b.live })).status).toBe(404);
  }, 60_000);

  it('consent adUserData denied: the ScCid only (no user data, no _scid); adStorage denied: skipped', async () => {
    ctx = await context();
    const storeId = await snapStore();
    const id = await conversion(storeId, {
      orderId: 'snap-consent',
      ScCid: 'sc-consent',
      scid: 'scid-consent',
      ipAddress: '203.0.113.8',
      userAgent: UA,
      customerData: { email: 'a@b.test', phone: '+4915112345678' },
      consent: { adUserData: 'denied' },
    });
    await waitForwarding(id, 'sent');
    expect(eventsFor('snap-consent')[0]?.user_data).toEqual({ sc_click_id: 'sc-consent' });

    const denied = await conversion(storeId, { orderId: 'snap-nostorage', ScCid: 'sc-x', consent: { adStorage: 'denied' } });
    expect((await forwardingOf(denied)).forwarding.snapchat).toMatchObject({ status: 'skipped', reason: 'consent_denied' });
  });

  it('429 then success; 5xx retried; an INVALID event and a bad token fail with Snap’s reason, the token never shown', async () => {
    ctx = await context();
    const storeId = await snapStore();
    fake.faults.push({ type: 'throttle', retryAfterSeconds: 0 }, { type: 'server' });
    const retried = await conversion(storeId, { orderId: 'snap-retry', ScCid: 'sc-r' });
    const data = await waitForwarding(retried, 'sent');
    expect(data.forwarding.snapchat.attempts).toBe(3);
    expect(data.forwarding.snapchat.lastError).toContain('Internal server error');
    expect(fake.requests.filter((r) => r.status === 429)).toHaveLength(1);

    fake.refuse.set('evt-refused', 'Invalid sc_click_id');
    const refused = await conversion(storeId, { orderId: 'snap-refused', eventId: 'evt-refused', ScCid: 'sc-bad' });
    const failed = await waitForwarding(refused, 'failed');
    expect(failed.forwarding.snapchat.attempts).toBe(1);
    expect(failed.forwarding.snapchat.lastError).toBe('Snapchat error: HTTP 400 INVALID: data[0]: Invalid sc_click_id');

    fake.faults.push({ type: 'bad-token' });
    const badToken = await conversion(storeId, { orderId: 'snap-token', ScCid: 'sc-t' });
    const auth = await waitForwarding(badToken, 'failed');
    expect(auth.forwarding.snapchat.lastError).toContain('HTTP 401 UNAUTHORIZED: Invalid access token');
    expect(auth.forwarding.snapchat.lastError).toContain('accessToken');
    expect(auth.forwarding.snapchat.lastError).not.toContain(fake.token);
  }, 60_000);

  it('test mode goes to events/validate (nothing recorded); events older than 7 days are skipped', async () => {
    ctx = await context();
    const storeId = await snapStore();
    const testId = await conversion(storeId, { orderId: 'snap-test', ScCid: 'sc-test' }, ctx.a.test);
    await waitForwarding(testId, 'sent', ctx.a.test);
    expect(fake.requests.at(-1)).toMatchObject({ validate: true, status: 200 });
    expect(fake.accepted()).toHaveLength(0);

    fake.refuse.set('evt-test-bad', 'Invalid event');
    const badTest = await conversion(storeId, { orderId: 'snap-test-bad', eventId: 'evt-test-bad', ScCid: 'sc-tb' }, ctx.a.test);
    const failed = await waitForwarding(badTest, 'failed', ctx.a.test);
    expect(failed.forwarding.snapchat.lastError).toBe('Snapchat refused the event: Invalid event');

    const old = new Date(Date.now() - 8 * 86_400_000).toISOString();
    const stale = await conversion(storeId, { orderId: 'snap-old', ScCid: 'sc-old', timestamp: old });
    expect((await forwardingOf(stale)).forwarding.snapchat).toMatchObject({ status: 'skipped', reason: 'expired' });
  }, 60_000);

  it('POST …/destinations/snapchat/test sends one event to the Test Event Tool', async () => {
    ctx = await context();
    const storeId = await snapStore();
    const test = () => call(ctx.app, 'POST', `/v1/stores/${storeId}/destinations/snapchat/test`, { key: ctx.a.live });
    const ok = await test();
    expect(ok.status).toBe(200);
    expect(ok.body.data).toMatchObject({ ok: true });
    expect(ok.body.data.message).toContain(fake.pixelId);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]).toMatchObject({ validate: true, status: 200 });

    expect((await put(storeId, settings({ accessToken: 'snap-wrong' }))).status).toBe(200);
    const bad = await test();
    expect(bad.body.data).toMatchObject({ ok: false, platformMessage: 'Invalid access token' });
    expect(bad.body.data.message).toContain('accessToken');
    expect(JSON.stringify(bad.body)).not.toContain('snap-wrong');
  });
});
