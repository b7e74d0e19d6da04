import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { amountOf } from '../../src/destinations/linkedin/mapping.js';
import { type ApiResponse, call, createTestContext, makeStore, type TestContext } from '../helpers.js';
import { FakeLinkedIn } from './fake-linkedin.js';
import { FAST, RELAXED } from './meta/setup.js';

/** The linkedin destination (api.md §12): LinkedIn's Conversions API against its local fake. */

const sha = (value: string) => createHash('sha256').update(value, 'utf8').digest('hex');
const URN = 'urn:lla:llaPartnerConversion:123456';

let fake: FakeLinkedIn;
let ctx: TestContext;
beforeAll(async () => {
  fake = await FakeLinkedIn.start();
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
    env: { LINKEDIN_API_URL: fake.url, CAPI_SYNC_WAIT_MS: '0' },
    forwarding: { ...FAST, ...RELAXED },
  });
}

async function put(storeId: string, body: unknown, key = ctx.a.live): Promise<ApiResponse> {
  return call(ctx.app, 'PUT', `/v1/stores/${storeId}/destinations/linkedin`, { key, body });
}

async function linkedInStore(): Promise<string> {
  const storeId = await makeStore(ctx.app, ctx.a.live);
  expect((await put(storeId, { conversionRuleId: URN, accessToken: fake.token })).status).toBe(200);
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
    if (data.forwarding?.linkedin?.status === status) return data;
    if (Date.now() > deadline) throw new Error(`${id}: ${JSON.stringify(data.forwarding)}, expected linkedin ${status}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function jobsOf(conversionId: string) {
  return ctx.database.read
    .selectFrom('destination_jobs')
    .selectAll()
    .where('conversion_id', '=', conversionId)
    .where('destination', '=', 'linkedin')
    .execute();
}

describe('linkedin destination', () => {
  it('amounts are exact decimal strings from the minor units', () => {
    expect(amountOf(1234, 'USD')).toBe('12.34');
    expect(amountOf(5, 'EUR')).toBe('0.05');
    expect(amountOf(1200, 'JPY')).toBe('1200');
    expect(amountOf(1234, 'KWD')).toBe('1.234');
  });

  it('settings: the bare digits become the URN; validated with details.field; the token write-only; other accounts see nothing', async () => {
    ctx = await context();
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const bad = await put(storeId, { conversionRuleId: 'urn:li:conversion:1', accessToken: fake.token });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toMatchObject({ field: 'conversionRuleId', reason: 'invalid_format' });
    const missing = await put(storeId, { conversionRuleId: '123456' });
    expect(missing.body.error.details).toMatchObject({ field: 'accessToken' });
    const ok = await put(storeId, { conversionRuleId: '123456', accessToken: fake.token });
    expect(ok.status).toBe(200);
    expect(ok.body.data).toMatchObject({
      kind: 'linkedin',
      configured: true,
      settings: { conversionRuleId: URN, accessTokenConfigured: true },
    });
    const list = await call(ctx.app, 'GET', `/v1/stores/${storeId}/destinations`, { key: ctx.a.live });
    expect(JSON.stringify(list.body)).not.toContain(fake.token);
    const row = await ctx.database.read.selectFrom('store_destinations').selectAll().where('store_id', '=', storeId).execute();
    expect(JSON.stringify(row)).not.toContain(fake.token);
    expect((await call(ctx.app, 'GET', `/v1/stores/${storeId}/destinations`, { key: ctx.b.live })).status).toBe(404);
    expect((await put(storeId, { conversionRuleId: URN, accessToken: 'x' }, ctx.b.live)).status).toBe(404);
  });

  it('a conversion with a li_fat_id is delivered once with the exact body and headers; one without gets no entry', async () => {
    ctx = await context();
    const storeId = await linkedInStore();
    const click = await call(ctx.app, 'POST', '/v1/track/click', {
      key: ctx.a.live,
      body: { storeId, landingPage: 'https://shop.acme.test/p?li_fat_id=9c1e-2b', fingerprint: 'fp-l', visitorId: 'wt.fp-l' },
    });
    expect(click.status).toBe(200);
    const time = Date.now() - 60_000;
    const id = await conversion(storeId, {
      orderId: 'l-1',
      fingerprint: 'fp-l',
      visitorId: 'wt.fp-l',
      eventValue: 12.34,
      currency: 'USD',
      timestamp: new Date(time).toISOString(),
      customerData: { email: ' John.Smith@GMail.com ', firstName: 'John', lastName: 'Smith', country: 'us' },
    });
    const none = await conversion(storeId, { orderId: 'l-none' });
    const data = await waitForwarding(id, 'sent');
    expect(data.forwarding.linkedin).toMatchObject({ status: 'sent', attempts: 1 });
    const posts = fake.requests.filter((r) => r.method === 'POST');
    expect(posts).toHaveLength(1);
    const request = posts[0];
    expect(request?.headers).toMatchObject({
      authorization: `Bearer ${fake.token}`,
      'x-restli-method': 'BATCH_CREATE',
      'x-restli-protocol-version': '2.0.0',
      'linkedin-version': '202411',
    });
    expect(request?.body).toEqual({
      elements: [
        {
          conversion: URN,
          conversionHappenedAt: time,
          conversionValue: { currencyCode: 'USD', amount: '12.34' },
          eventId: data.eventId,
          user: {
            userIds: [
              { idType: 'SHA256_EMAIL', idValue: sha('john.smith@gmail.com') },
              { idType: 'LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID', idValue: '9c1e-2b' },
            ],
            userInfo: { firstName: 'John', lastName: 'Smith', countryCode: 'US' },
          },
        },
      ],
    });
    const jobs = await jobsOf(id);
    expect(jobs).toHaveLength(1);
    expect(jobs[0]?.trace_id).toBe(request?.requestId);
    expect((await forwardingOf(none)).forwarding?.linkedin).toBeUndefined();
    expect(await jobsOf(none)).toHaveLength(0);
    expect((await call(ctx.app, 'GET', `/v1/conversions/${id}`, { key: ctx.b.live })).status).toBe(404);
  });

  it('consent: adUserData denied sends the li_fat_id alone; both denied skips; test mode skips; 90 days', async () => {
    ctx = await context();
    const storeId = await linkedInStore();
    const noUserData = await conversion(storeId, {
      orderId: 'l-c1',
      li_fat_id: 'FAT-1',
      customerData: { email: 'a@example.com', firstName: 'A', lastName: 'B' },
      consent: { adUserData: 'denied' },
    });
    await waitForwarding(noUserData, 'sent');
    expect(
      fake.accepted().find((e) => e.eventId && e.user.userIds.some((u: { idValue: string }) => u.idValue === 'FAT-1'))?.user,
    ).toEqual({
      userIds: [{ idType: 'LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID', idValue: 'FAT-1' }],
    });
    const neither = await conversion(storeId, {
      orderId: 'l-c2',
      li_fat_id: 'FAT-2',
      customerData: { email: 'a@example.com' },
      consent: { adUserData: 'denied', adStorage: 'denied' },
    });
    expect((await forwardingOf(neither)).forwarding.linkedin).toMatchObject({ status: 'skipped', reason: 'consent_denied' });
    const test = await conversion(storeId, { orderId: 'l-test', li_fat_id: 'FAT-t' }, ctx.a.test);
    expect((await forwardingOf(test, ctx.a.test)).forwarding.linkedin).toMatchObject({
      status: 'skipped',
      reason: 'test_mode_unsupported',
    });
    expect(await jobsOf(test)).toHaveLength(0);
    const old = new Date(Date.now() - 91 * 86_400_000).toISOString();
    const stale = await conversion(storeId, { orderId: 'l-old', li_fat_id: 'FAT-old', timestamp: old });
    expect((await forwardingOf(stale)).forwarding.linkedin).toMatchObject({ status: 'skipped', reason: 'expired' });
  });

  it('429 then 500 are retried; an element LinkedIn refuses fails alone with its message; 401 names the token', async () => {
    ctx = await context();
    const storeId = await linkedInStore();
    fake.faults.push({ type: 'throttle', retryAfterSeconds: 0 }, { type: 'server' });
    const id = await conversion(storeId, { orderId: 'l-429', li_fat_id: 'FAT-429' });
    expect((await waitForwarding(id, 'sent')).forwarding.linkedin.attempts).toBe(3);
    expect(fake.requests.map((r) => r.status)).toEqual([429, 500, 200]);

    fake.refuse.set('FAT-bad', 'The li_fat_id is not valid');
    const refused = await conversion(storeId, { orderId: 'l-bad', li_fat_id: 'FAT-bad' });
    const failed = await waitForwarding(refused, 'failed');
    expect(failed.forwarding.linkedin.lastError).toBe('LinkedIn refused the event (status 400): The li_fat_id is not valid');

    fake.token = 'rotated';
    try {
      const unauthorized = await conversion(storeId, { orderId: 'l-401', li_fat_id: 'FAT-401' });
      const denied = await waitForwarding(unauthorized, 'failed');
      expect(denied.forwarding.linkedin.lastError).toMatch(
        /^LinkedIn error \(HTTP 401\): Invalid access token — renew the access token/,
      );
    } finally {
      fake.token = 'AQX-linkedin-token';
    }
  });

  it('POST …/destinations/linkedin/test reads the conversion rule', async () => {
    ctx = await context();
    const storeId = await linkedInStore();
    const good = await call(ctx.app, 'POST', `/v1/stores/${storeId}/destinations/linkedin/test`, { key: ctx.a.live });
    expect(good.status).toBe(200);
    expect(good.body.data).toEqual({
      ok: true,
      message: `LinkedIn shows conversion rule ${URN} (“CAPI Purchase”) to this token`,
    });
    expect(fake.requests.at(-1)).toMatchObject({ method: 'GET', path: '/rest/conversions/123456' });
    expect(fake.requests.filter((r) => r.method === 'POST')).toHaveLength(0);
    fake.ruleId = '999';
    try {
      const bad = await call(ctx.app, 'POST', `/v1/stores/${storeId}/destinations/linkedin/test`, { key: ctx.a.live });
      expect(bad.body.data).toMatchObject({ ok: false, platformMessage: 'Conversion 123456 not found' });
      expect(bad.body.data.message).toMatch(
        /^LinkedIn error \(HTTP 404\): Conversion 123456 not found — check the linkedin destination’s conversionRuleId/,
      );
    } finally {
      fake.ruleId = '123456';
    }
  });
});
