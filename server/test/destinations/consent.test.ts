import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { forgetGoogleTokens } from '../../src/destinations/google_ads/index.js';
import { call, createTestContext, makeStore, type TestContext } from '../helpers.js';
import { FakePlatforms, type Json } from './fake-platforms.js';
import { FakeGraph } from './meta/fake-graph.js';
import { FAST, PIXEL, TOKEN } from './meta/setup.js';

// Consent as data (api.md §10): what each destination receives under the stored consent.

const sha = (value: string) => createHash('sha256').update(value, 'utf8').digest('hex');
const ACTION = 'customers/1234567890/conversionActions/555';
const IP = '203.0.113.77';
const UA = 'Mozilla/5.0 (Consent Test) Gecko/20100101 Firefox/133.0';
const FBP = 'fb.1.1732000000000.987654321';
const TTP = 'ttp-cookie-consent-1';
const FINGERPRINT = 'fp-consent-visitor';
/** The tag's visitor id: the same browser on the click and the conversion links them (api.md §13). */
const VISITOR_ID = 'wt.consent-visitor';

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

async function context() {
  ctx = await createTestContext({
    env: {
      META_GRAPH_URL: graph.url,
      GOOGLE_ADS_API_URL: fake.url,
      GOOGLE_OAUTH_TOKEN_URL: fake.tokenUrl,
      TIKTOK_API_URL: fake.url,
      CAPI_SYNC_WAIT_MS: '0',
    },
    forwarding: FAST,
  });
  return ctx;
}

/** A store forwarding to Meta, Google Ads and TikTok. */
async function allThree(storeOverrides: Record<string, unknown> = {}): Promise<string> {
  const storeId = await makeStore(ctx.app, ctx.a.live, { pixelId: PIXEL, capiAccessToken: TOKEN, ...storeOverrides });
  const google = await call(ctx.app, 'PUT', `/v1/stores/${storeId}/destinations/google_ads`, {
    key: ctx.a.live,
    body: {
      customerId: '1234567890',
      conversionAction: ACTION,
      api: 'google_ads_api',
      developerToken: fake.developerToken,
      oauth: fake.oauthClient,
    },
  });
  expect(google.status).toBe(200);
  const tiktok = await call(ctx.app, 'PUT', `/v1/stores/${storeId}/destinations/tiktok`, {
    key: ctx.a.live,
    body: { pixelCode: 'CABCDEFGHIJ1234567', accessToken: fake.tiktokToken },
  });
  expect(tiktok.status).toBe(200);
  return storeId;
}

async function post(path: string, body: Record<string, unknown>) {
  return call(ctx.app, 'POST', path, { key: ctx.a.live, body });
}

async function click(storeId: string, body: Record<string, unknown>) {
  const res = await post('/v1/track/click', { storeId, landingPage: 'https://shop.acme.test/p?utm_source=x', ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.clickId as string;
}

async function conversion(storeId: string, body: Record<string, unknown>) {
  const res = await post('/v1/track/conversion', { storeId, eventType: 'Purchase', eventValue: 49.9, currency: 'EUR', ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as { conversionId: string; attributed: boolean; attributedTo?: { clickId: string } };
}

async function get(id: string) {
  return (await call(ctx.app, 'GET', `/v1/conversions/${id}`, { key: ctx.a.live })).body.data;
}

async function settled(id: string, kinds: string[], timeoutMs = 8000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const data = await get(id);
    if (kinds.every((kind) => ['sent', 'failed', 'skipped'].includes(data.forwarding?.[kind]?.status))) return data;
    if (Date.now() > deadline) throw new Error(`${id}: ${JSON.stringify(data.forwarding)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const metaEvent = (orderId: string) => graph.acceptedEvents().find((e) => e.custom_data.order_id === orderId);
const googleRow = (orderId: string) => fake.googleAccepted().find((c) => c.orderId === orderId);
const tiktokEvent = (orderId: string) => fake.tiktokAccepted().find((e) => e.properties.order_id === orderId);

/** None of the visitor's identifiers appears anywhere in what a platform received. */
function expectNoIdentifier(payload: Json | undefined, email: string) {
  expect(payload).toBeDefined();
  const text = JSON.stringify(payload);
  for (const value of [IP, UA, FBP, TTP, FINGERPRINT, sha(email), sha('+16505551212'), sha('16505551212')]) {
    expect(text).not.toContain(value);
  }
}

describe('consent as data: what leaves per destination', () => {
  it('adUserData denied: no hashed data, IP, UA, fbp, ttp or fingerprint to Meta, Google or TikTok; Google gets DENIED; still attributed', async () => {
    await context();
    const storeId = await allThree();
    const clickId = await click(storeId, {
      fbclid: 'FB-consent-1',
      gclid: 'G-consent-1',
      ttclid: 'TT-consent-1',
      ipAddress: IP,
      userAgent: UA,
      fbp: FBP,
      ttp: TTP,
      fingerprint: FINGERPRINT,
      visitorId: VISITOR_ID,
    });
    const email = 'buyer@example.com';
    const result = await conversion(storeId, {
      orderId: 'denied-1',
      fingerprint: FINGERPRINT,
      visitorId: VISITOR_ID,
      ipAddress: IP,
      userAgent: UA,
      fbp: FBP,
      ttp: TTP,
      customerData: { email, phone: '+1 650 555 1212', firstName: 'Ann', city: 'Denver', country: 'US' },
      consent: { adUserData: 'denied' },
    });
    expect(result.attributed).toBe(true);
    expect(result.attributedTo?.clickId).toBe(clickId);
    const data = await settled(result.conversionId, ['meta', 'google_ads', 'tiktok']);
    expect(data.forwarding.meta.status).toBe('sent');
    expect(data.forwarding.google_ads.status).toBe('sent');
    expect(data.forwarding.tiktok.status).toBe('sent');
    expect(data.consent).toEqual({ adStorage: 'granted', adUserData: 'denied', adPersonalization: 'granted' });

    const meta = metaEvent('denied-1');
    expect(meta?.user_data).toEqual({ fbc: expect.stringMatching(/^fb\.1\.\d+\.FB-consent-1$/) });
    expectNoIdentifier(meta, email);

    const google = googleRow('denied-1');
    expect(google).toMatchObject({ gclid: 'G-consent-1', consent: { adUserData: 'DENIED' } });
    expect(google?.userIdentifiers).toBeUndefined();
    expectNoIdentifier(google, email);

    const tiktok = tiktokEvent('denied-1');
    expect(tiktok?.user).toEqual({ ttclid: 'TT-consent-1' });
    expectNoIdentifier(tiktok, email);
  });

  it('the same conversion granted sends the identifiers (the test above can fail)', async () => {
    await context();
    const storeId = await allThree();
    await click(storeId, {
      fbclid: 'FB-g',
      gclid: 'G-g',
      ttclid: 'TT-g',
      ipAddress: IP,
      userAgent: UA,
      fingerprint: FINGERPRINT,
      visitorId: VISITOR_ID,
    });
    const email = 'buyer@example.com';
    const result = await conversion(storeId, {
      orderId: 'granted-1',
      fingerprint: FINGERPRINT,
      visitorId: VISITOR_ID,
      fbp: FBP,
      ttp: TTP,
      customerData: { email },
      consent: { adUserData: 'granted', adStorage: 'granted' },
    });
    await settled(result.conversionId, ['meta', 'google_ads', 'tiktok']);
    expect(metaEvent('granted-1')?.user_data).toMatchObject({
      em: [sha(email)],
      client_ip_address: IP,
      client_user_agent: UA,
      fbp: FBP,
    });
    expect(googleRow('granted-1')).toMatchObject({
      consent: { adUserData: 'GRANTED' },
      userIdentifiers: [{ hashedEmail: sha(email) }],
    });
    expect(tiktokEvent('granted-1')?.user).toMatchObject({ ttclid: 'TT-g', ttp: TTP, ip: IP, user_agent: UA });
  });

  it('adStorage denied on the click: its ids attribute but are never sent, nor in a URL; Google is skipped with the reason', async () => {
    await context();
    const storeId = await allThree();
    const landingPage = 'https://shop.acme.test/p?fbclid=FB-s1&gclid=G-s1&ttclid=TT-s1&utm_source=meta&msclkid=MS-s1';
    const clickId = await click(storeId, { landingPage, ipAddress: IP, userAgent: UA, consent: { adStorage: 'denied' } });
    // Named explicitly: confidence 100 from a click id the platforms will never see.
    const result = await conversion(storeId, { orderId: 'storage-1', fbclid: 'FB-s1', ttp: 'ttp-own-1' });
    expect(result.attributed).toBe(true);
    expect(result.attributedTo?.clickId).toBe(clickId);
    const data = await settled(result.conversionId, ['meta', 'google_ads', 'tiktok']);

    expect(data.forwarding.google_ads).toMatchObject({ status: 'skipped', reason: 'consent_denied' });
    expect(fake.uploads).toHaveLength(0);

    const meta = metaEvent('storage-1');
    expect(meta?.user_data.fbc).toBeUndefined();
    expect(meta?.event_source_url).toBe('https://shop.acme.test/p?utm_source=meta');
    expect(JSON.stringify(meta)).not.toMatch(/FB-s1|G-s1|TT-s1|MS-s1/);

    // TikTok: its own ttp (user data granted) still goes; the click's ttclid and the URL's ids do not.
    expect(data.forwarding.tiktok.status).toBe('sent');
    const tiktok = tiktokEvent('storage-1');
    expect(tiktok?.user.ttclid).toBeUndefined();
    expect(tiktok?.user.ttp).toBe('ttp-own-1');
    expect(tiktok?.page.url).toBe('https://shop.acme.test/p?utm_source=meta');
    expect(JSON.stringify(tiktok)).not.toMatch(/FB-s1|G-s1|TT-s1|MS-s1/);

    // The click shows its consent; its ids are kept (attribution uses them).
    const shown = await call(ctx.app, 'GET', `/v1/clicks/${clickId}`, { key: ctx.a.live });
    expect(shown.body.data).toMatchObject({
      fbclid: 'FB-s1',
      gclid: 'G-s1',
      consent: { adStorage: 'denied', adUserData: 'granted', adPersonalization: 'granted' },
    });
  });

  it('TikTok with only a denied ttclid is skipped with the reason', async () => {
    await context();
    const storeId = await allThree();
    await click(storeId, { ttclid: 'TT-only', visitorId: 'wt.fp-tt', consent: { adStorage: 'denied' } });
    const result = await conversion(storeId, { orderId: 'tt-denied', visitorId: 'wt.fp-tt' });
    const data = await settled(result.conversionId, ['meta', 'tiktok']);
    expect(data.forwarding.tiktok).toMatchObject({ status: 'skipped', reason: 'consent_denied' });
    expect(fake.tiktok).toHaveLength(0);
  });

  it("the store's defaultConsent fills what an event leaves out; the event's own fields win; retries send the same", async () => {
    await context();
    const storeId = await allThree({ defaultConsent: { adUserData: 'denied' } });
    const store = await call(ctx.app, 'GET', `/v1/stores/${storeId}`, { key: ctx.a.live });
    expect(store.body.data.defaultConsent).toEqual({ adStorage: 'granted', adUserData: 'denied', adPersonalization: 'granted' });

    fake.googleFaults.push({ type: 'http500' });
    await click(storeId, { gclid: 'G-d1', visitorId: 'wt.d1' });
    const email = 'default@example.com';
    const byDefault = await conversion(storeId, { orderId: 'default-1', visitorId: 'wt.d1', customerData: { email } });
    const data = await settled(byDefault.conversionId, ['google_ads']);
    expect(data.forwarding.google_ads.status).toBe('sent');
    expect(data.forwarding.google_ads.attempts).toBeGreaterThanOrEqual(2);
    expect(data.consent.adUserData).toBe('denied');
    // Every attempt carried the same consented row.
    const attempts = fake.uploads.flatMap((u) => u.conversions).filter((c) => c.orderId === 'default-1');
    expect(attempts.length).toBeGreaterThanOrEqual(2);
    for (const row of attempts) {
      expect(row.consent).toEqual({ adUserData: 'DENIED' });
      expect(row.userIdentifiers).toBeUndefined();
    }

    await click(storeId, { gclid: 'G-d2', visitorId: 'wt.fp-d2' });
    const granted = await conversion(storeId, {
      orderId: 'default-2',
      visitorId: 'wt.fp-d2',
      customerData: { email },
      consent: { adUserData: 'granted' },
    });
    await settled(granted.conversionId, ['google_ads']);
    expect(googleRow('default-2')).toMatchObject({
      consent: { adUserData: 'GRANTED' },
      userIdentifiers: [{ hashedEmail: sha(email) }],
    });

    // The default changes later: recorded conversions keep the consent they were recorded with.
    const reset = await call(ctx.app, 'PATCH', `/v1/stores/${storeId}`, { key: ctx.a.live, body: { defaultConsent: null } });
    expect(reset.status).toBe(200);
    expect(reset.body.data.defaultConsent).toEqual({ adStorage: 'granted', adUserData: 'granted', adPersonalization: 'granted' });
    expect((await get(byDefault.conversionId)).consent.adUserData).toBe('denied');
  });

  it('limited data use: Meta gets LDU with its country and state codes (0 = geolocate); a click’s carries to its conversions', async () => {
    await context();
    const storeId = await makeStore(ctx.app, ctx.a.live, { pixelId: PIXEL, capiAccessToken: TOKEN });
    const california = await conversion(storeId, { orderId: 'ldu-ca', limitedDataUse: { country: 'us', state: 'ca' } });
    const geo = await conversion(storeId, { orderId: 'ldu-geo', limitedDataUse: true });
    const texas = await conversion(storeId, { orderId: 'ldu-tx', limitedDataUse: { state: 'TX' } });
    await click(storeId, { fbclid: 'FB-ldu', visitorId: 'wt.ldu', limitedDataUse: { country: 'US', state: 'CO' } });
    const viaClick = await conversion(storeId, { orderId: 'ldu-click', visitorId: 'wt.ldu' });
    const none = await conversion(storeId, { orderId: 'ldu-none' });
    for (const r of [california, geo, texas, viaClick, none]) await settled(r.conversionId, ['meta']);

    const ldu = (country: number, state: number) => ({
      data_processing_options: ['LDU'],
      data_processing_options_country: country,
      data_processing_options_state: state,
    });
    expect(metaEvent('ldu-ca')).toMatchObject(ldu(1, 1000));
    expect(metaEvent('ldu-geo')).toMatchObject(ldu(0, 0));
    expect(metaEvent('ldu-tx')).toMatchObject(ldu(1, 0));
    expect(metaEvent('ldu-click')).toMatchObject(ldu(1, 1001));
    expect(metaEvent('ldu-none')?.data_processing_options).toBeUndefined();
    expect((await get(california.conversionId)).limitedDataUse).toEqual({ country: 'US', state: 'CA' });
    expect((await get(geo.conversionId)).limitedDataUse).toBe(true);
    expect((await get(none.conversionId)).limitedDataUse).toBeUndefined();
  });
});

describe('consent fields: validation and display', () => {
  it('refuses bad consent values with the field, in single requests and batch events', async () => {
    await context();
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const base = { storeId, eventType: 'Purchase', orderId: 'v-1', eventValue: 1, currency: 'USD' };
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ consent: { adStorage: 'maybe' } }, 'consent.adStorage', 'unknown_value'],
      [{ consent: { adStorag: 'denied' } }, 'consent.adStorag', 'unknown_field'],
      [{ consent: 'denied' }, 'consent', 'invalid_type'],
      [{ limitedDataUse: { country: 'FR' } }, 'limitedDataUse.country', 'unknown_value'],
      [{ limitedDataUse: { state: 'ZZ' } }, 'limitedDataUse.state', 'unknown_value'],
    ];
    for (const [extra, field, reason] of cases) {
      const res = await post('/v1/track/conversion', { ...base, ...extra });
      expect(res.status, JSON.stringify(extra)).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
      expect(res.body.error.details, JSON.stringify(extra)).toMatchObject({ field, reason });
    }
    const notTrue = await post('/v1/track/conversion', { ...base, limitedDataUse: false });
    expect(notTrue.status).toBe(400);
    expect(notTrue.body.error.details.field).toBe('limitedDataUse');

    const clickRes = await post('/v1/track/click', {
      storeId,
      fbclid: 'FB-v',
      landingPage: 'https://shop.acme.test/',
      consent: { adUserData: 'nope' },
    });
    expect(clickRes.status).toBe(400);
    expect(clickRes.body.error.details).toMatchObject({ field: 'consent.adUserData' });

    const store = await call(ctx.app, 'PATCH', `/v1/stores/${storeId}`, {
      key: ctx.a.live,
      body: { defaultConsent: { adStorage: 'no' } },
    });
    expect(store.status).toBe(400);
    expect(store.body.error.details).toMatchObject({ field: 'defaultConsent.adStorage' });

    const batch = await post('/v1/track/batch', {
      events: [
        { type: 'click', storeId, fbclid: 'FB-b1', landingPage: 'https://shop.acme.test/', consent: { adStorage: 'denied' } },
        { type: 'conversion', ...base, orderId: 'b-2', limitedDataUse: { country: 'DE' } },
        { type: 'conversion', ...base, orderId: 'b-3', consent: { adPersonalization: 'denied' } },
      ],
    });
    expect(batch.status).toBe(200);
    const [first, second, third] = batch.body.data.results;
    expect(first.status).toBe(200);
    expect(second.status).toBe(400);
    expect(second.error.details).toMatchObject({ field: 'limitedDataUse.country' });
    expect(third.status).toBe(200);
    const clicked = await call(ctx.app, 'GET', `/v1/clicks/${first.data.clickId}`, { key: ctx.a.live });
    expect(clicked.body.data.consent.adStorage).toBe('denied');
    const converted = await get(third.data.conversionId);
    expect(converted.consent).toEqual({ adStorage: 'granted', adUserData: 'granted', adPersonalization: 'denied' });
  });

  it('lists show the consent of every item; a duplicate names a differing consent', async () => {
    await context();
    const storeId = await makeStore(ctx.app, ctx.a.live);
    await click(storeId, { fbclid: 'FB-l1' });
    await click(storeId, {
      fbclid: 'FB-l2',
      consent: { adStorage: 'denied', adUserData: 'denied', adPersonalization: 'denied' },
    });
    const list = await call(ctx.app, 'GET', `/v1/clicks?storeId=${storeId}`, { key: ctx.a.live });
    const byId = Object.fromEntries(
      list.body.data.clicks.map((c: { fbclid: string; consent: unknown }) => [c.fbclid, c.consent]),
    );
    expect(byId['FB-l1']).toEqual({ adStorage: 'granted', adUserData: 'granted', adPersonalization: 'granted' });
    expect(byId['FB-l2']).toEqual({ adStorage: 'denied', adUserData: 'denied', adPersonalization: 'denied' });

    await conversion(storeId, { orderId: 'dup-1', consent: { adUserData: 'denied' } });
    const again = await post('/v1/track/conversion', {
      storeId,
      eventType: 'Purchase',
      eventValue: 49.9,
      currency: 'EUR',
      orderId: 'dup-1',
      consent: { adUserData: 'granted' },
    });
    expect(again.body.data).toMatchObject({ duplicate: true, differences: ['consent.adUserData'] });
    const conversions = await call(ctx.app, 'GET', `/v1/conversions?storeId=${storeId}`, { key: ctx.a.live });
    expect(conversions.body.data.conversions[0].consent.adUserData).toBe('denied');
  });
});
