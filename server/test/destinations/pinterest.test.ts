import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, call, createTestContext, makeStore, type TestContext } from '../helpers.js';
import { FakePinterest, type Json } from './fake-pinterest.js';
import { FAST, RELAXED } from './meta/setup.js';

// The pinterest destination (api.md §12) against a local Pinterest Conversions API.
const sha = (value: string) => createHash('sha256').update(value, 'utf8').digest('hex');

const UA =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';

let fake: FakePinterest;
let ctx: TestContext;

beforeAll(async () => {
  fake = await FakePinterest.start();
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
    env: { PINTEREST_API_URL: fake.url, META_GRAPH_URL: 'http://127.0.0.1:9', CAPI_SYNC_WAIT_MS: '0' },
    forwarding: { ...FAST, ...RELAXED },
  });

const settings = (overrides: Record<string, unknown> = {}) => ({
  adAccountId: fake.adAccountId,
  accessToken: fake.token,
  ...overrides,
});

async function put(storeId: string, body: unknown, key = ctx.a.live): Promise<ApiResponse> {
  return call(ctx.app, 'PUT', `/v1/stores/${storeId}/destinations/pinterest`, { key, body });
}

async function pinterestStore(key = ctx.a.live, overrides: Record<string, unknown> = {}): Promise<string> {
  const storeId = await makeStore(ctx.app, key);
  const res = await put(storeId, settings(overrides), key);
  expect(res.status).toBe(200);
  return storeId;
}

async function click(storeId: string, body: Record<string, unknown>, key = ctx.a.live) {
  const res = await call(ctx.app, 'POST', '/v1/track/click', {
    key,
    body: { storeId, landingPage: 'https://shop.acme.test/p?utm_source=pin', ...body },
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
    if (data.forwarding?.pinterest?.status === status) return data;
    if (Date.now() > deadline) throw new Error(`${id}: ${JSON.stringify(data.forwarding)}, expected pinterest ${status}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const eventsFor = (orderId: string): Json[] =>
  fake.requests.flatMap((r) => (r.body.data as Json[]).filter((e) => e.custom_data.order_id === orderId));

describe('pinterest destination settings', () => {
  it('configures, shows no secret, refuses bad bodies with details.field, and is the account’s own', async () => {
    ctx = await context();
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const saved = await put(storeId, settings({ testMode: true }));
    expect(saved.status).toBe(200);
    expect(saved.body.data).toMatchObject({
      kind: 'pinterest',
      configured: true,
      settings: { adAccountId: fake.adAccountId, testMode: true, accessTokenConfigured: true },
    });
    const list = await call(ctx.app, 'GET', `/v1/stores/${storeId}/destinations`, { key: ctx.a.live });
    expect(list.body.data.destinations.map((d: { kind: string }) => d.kind)).toContain('pinterest');
    for (const res of [saved, list]) expect(JSON.stringify(res.body)).not.toContain(fake.token);
    // The token left out is kept; testMode left out turns it off.
    const kept = await put(storeId, { adAccountId: fake.adAccountId });
    expect(kept.status).toBe(200);
    expect(kept.body.data.settings).toEqual({ adAccountId: fake.adAccountId, testMode: false, accessTokenConfigured: true });

    const cases: Array<[unknown, string, string]> = [
      [{ adAccountId: 'act_12', accessToken: 'x' }, 'adAccountId', 'invalid_format'],
      [{ accessToken: 'x' }, 'adAccountId', 'required_field_missing'],
      [{ adAccountId: '12', accessToken: 'x', testMode: 'yes' }, 'testMode', 'invalid_type'],
      [{ adAccountId: '12', accessToken: 'x', pixelId: '1' }, 'pixelId', 'unknown_field'],
    ];
    const fresh = await makeStore(ctx.app, ctx.a.live);
    for (const [body, field, reason] of cases) {
      const res = await put(fresh, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.details).toMatchObject({ field, reason });
    }
    const noToken = await put(fresh, { adAccountId: '12' });
    expect(noToken.body.error.details).toMatchObject({ field: 'accessToken' });

    // Another account sees none of it.
    const other = await call(ctx.app, 'GET', `/v1/stores/${storeId}/destinations`, { key: ctx.b.live });
    expect(other.status).toBe(404);
    expect((await put(storeId, settings(), ctx.b.live)).status).toBe(404);
  });
});

describe('pinterest delivery (api.md §12)', () => {
  it('a conversion with an epik reaches Pinterest exactly; one without gets no entry; one job each', async () => {
    ctx = await context();
    const storeId = await pinterestStore();
    const eventMs = Math.floor((Date.now() - 86_400_000) / 1000) * 1000;
    const clickId = await click(storeId, {
      epik: 'dj0yJnU9EPIK-1',
      fingerprint: 'fp-pin',
      visitorId: 'wt.fp-pin',
      ipAddress: '203.0.113.7',
      userAgent: UA,
      timestamp: new Date(eventMs - 60_000).toISOString(),
    });
    const routed = await conversion(storeId, {
      orderId: 'pin-1',
      eventId: 'evt-pin-1',
      clickId,
      timestamp: new Date(eventMs).toISOString(),
      customerData: { email: ' John.Smith@GMail.com ', phone: '(650) 555-1212', country: 'US' },
      products: [
        { productId: 'sku-1', name: 'One', quantity: 2, price: 5 },
        { productId: 'sku-2', name: 'Two', quantity: 1, price: 2.34 },
      ],
    });
    const explicit = await conversion(storeId, { orderId: 'pin-2', epik: 'EPIK-named' });
    const none = await conversion(storeId, { orderId: 'pin-none', gclid: 'G-1' });

    const sent = await waitForwarding(routed, 'sent');
    expect(sent.forwarding.pinterest).toMatchObject({ status: 'sent', attempts: 1 });
    await waitForwarding(explicit, 'sent');
    expect((await forwardingOf(none)).forwarding.pinterest).toBeUndefined();

    const request = fake.requests.find((r) => r.body.data.some((e: { event_id: string }) => e.event_id === 'evt-pin-1'));
    expect(request).toMatchObject({ adAccountId: fake.adAccountId, test: false, authorization: `Bearer ${fake.token}` });
    const event = request?.body.data.find((e: { event_id: string }) => e.event_id === 'evt-pin-1');
    expect(event).toEqual({
      event_name: 'checkout',
      action_source: 'web',
      event_time: eventMs / 1000,
      event_id: 'evt-pin-1',
      event_source_url: 'https://shop.acme.test/p?utm_source=pin',
      user_data: {
        em: [sha('john.smith@gmail.com')],
        ph: [sha('16505551212')],
        client_ip_address: '203.0.113.7',
        client_user_agent: UA,
        click_id: 'dj0yJnU9EPIK-1',
      },
      custom_data: {
        currency: 'EUR',
        value: '12.34',
        order_id: 'pin-1',
        num_items: 3,
        content_ids: ['sku-1', 'sku-2'],
        contents: [
          { id: 'sku-1', quantity: 2, item_price: '5.00' },
          { id: 'sku-2', quantity: 1, item_price: '2.34' },
        ],
      },
    });
    expect(fake.accepted().find((e) => e.custom_data.order_id === 'pin-2')?.user_data.click_id).toBe('EPIK-named');
    // One job per conversion: each event reached Pinterest once; the request id is the trace id.
    expect(eventsFor('pin-1')).toHaveLength(1);
    expect(eventsFor('pin-2')).toHaveLength(1);
    expect(eventsFor('pin-none')).toHaveLength(0);
    const jobs = await ctx.database.read
      .selectFrom('destination_jobs')
      .select(['conversion_id', 'trace_id'])
      .where('destination', '=', 'pinterest')
      .execute();
    expect(jobs.filter((j) => j.conversion_id === routed)).toEqual([{ conversion_id: routed, trace_id: request?.rid }]);
    expect(jobs.filter((j) => j.conversion_id === none)).toEqual([]);
    // Another account cannot see the conversion.
    expect((await call(ctx.app, 'GET', `/v1/conversions/${routed}`, { key: ctx.b.live })).status).toBe(404);
  }, 60_000);

  it('consent adUserData denied: the epik only, no user data', async () => {
    ctx = await context();
    const storeId = await pinterestStore();
    const id = await conversion(storeId, {
      orderId: 'pin-consent',
      epik: 'EPIK-consent',
      ipAddress: '203.0.113.8',
      userAgent: 'UA-consent',
      customerData: { email: 'a@b.test', phone: '+4915112345678' },
      consent: { adUserData: 'denied' },
    });
    await waitForwarding(id, 'sent');
    const [event] = eventsFor('pin-consent');
    expect(event).toMatchObject({ user_data: { click_id: 'EPIK-consent' } });
    expect(event?.user_data).toEqual({ click_id: 'EPIK-consent' });

    const denied = await conversion(storeId, { orderId: 'pin-nostorage', epik: 'EPIK-x', consent: { adStorage: 'denied' } });
    expect((await forwardingOf(denied)).forwarding.pinterest).toMatchObject({ status: 'skipped', reason: 'consent_denied' });
  });

  it('429 then success honours Retry-After; 5xx retried; a refused event and a bad token fail with Pinterest’s message', async () => {
    ctx = await context();
    const storeId = await pinterestStore();
    fake.faults.push({ type: 'throttle', retryAfterSeconds: 0 }, { type: 'server' });
    const retried = await conversion(storeId, { orderId: 'pin-retry', epik: 'EPIK-r' });
    const data = await waitForwarding(retried, 'sent');
    expect(data.forwarding.pinterest.attempts).toBe(3);
    expect(data.forwarding.pinterest.lastError).toContain('Internal error.');
    expect(fake.requests.filter((r) => r.status === 429)).toHaveLength(1);

    fake.refuse.set('evt-refused', 'Invalid click_id');
    const refused = await conversion(storeId, { orderId: 'pin-refused', eventId: 'evt-refused', epik: 'EPIK-bad' });
    const failed = await waitForwarding(refused, 'failed');
    expect(failed.forwarding.pinterest.attempts).toBe(1);
    expect(failed.forwarding.pinterest.lastError).toBe('Pinterest refused the event: Invalid click_id');

    fake.faults.push({ type: 'bad-token' });
    const badToken = await conversion(storeId, { orderId: 'pin-token', epik: 'EPIK-t' });
    const auth = await waitForwarding(badToken, 'failed');
    expect(auth.forwarding.pinterest.lastError).toContain('HTTP 401 (code 2): Authentication failed.');
    expect(auth.forwarding.pinterest.lastError).toContain('accessToken');
    expect(auth.forwarding.pinterest.lastError).not.toContain(fake.token);
  }, 60_000);

  it('test mode sends test=true (and testMode does for live ones); events older than 7 days are skipped', async () => {
    ctx = await context();
    const storeId = await pinterestStore(ctx.a.live);
    const testId = await conversion(storeId, { orderId: 'pin-test', epik: 'EPIK-test' }, ctx.a.test);
    await waitForwarding(testId, 'sent', ctx.a.test);
    expect(fake.requests.at(-1)?.test).toBe(true);
    expect(fake.accepted()).toHaveLength(0);

    const old = new Date(Date.now() - 8 * 86_400_000).toISOString();
    const stale = await conversion(storeId, { orderId: 'pin-old', epik: 'EPIK-old', timestamp: old });
    expect((await forwardingOf(stale)).forwarding.pinterest).toMatchObject({ status: 'skipped', reason: 'expired' });

    expect((await put(storeId, settings({ testMode: true }))).status).toBe(200);
    const live = await conversion(storeId, { orderId: 'pin-live-test', epik: 'EPIK-lt' });
    await waitForwarding(live, 'sent');
    expect(fake.requests.at(-1)?.test).toBe(true);
    expect(fake.accepted()).toHaveLength(0);
  }, 60_000);

  it('POST …/destinations/pinterest/test reads the ad account with the token', async () => {
    ctx = await context();
    const storeId = await pinterestStore();
    const test = () => call(ctx.app, 'POST', `/v1/stores/${storeId}/destinations/pinterest/test`, { key: ctx.a.live });
    const ok = await test();
    expect(ok.status).toBe(200);
    expect(ok.body.data).toMatchObject({ ok: true });
    expect(ok.body.data.message).toContain(fake.adAccountId);
    expect(fake.checks).toBe(1);

    expect((await put(storeId, settings({ accessToken: 'pina_wrong' }))).status).toBe(200);
    const bad = await test();
    expect(bad.body.data).toMatchObject({ ok: false, platformMessage: 'Authentication failed.' });
    expect(bad.body.data.message).toContain('accessToken');
    expect(JSON.stringify(bad.body)).not.toContain('pina_wrong');

    expect((await put(storeId, settings({ adAccountId: '1' }))).status).toBe(200);
    const missing = await test();
    expect(missing.body.data).toMatchObject({ ok: false, platformMessage: 'Ad account not found.' });
    expect(missing.body.data.message).toContain('adAccountId');
  });
});
