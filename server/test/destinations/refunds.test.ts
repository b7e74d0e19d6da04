import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { forgetGoogleTokens } from '../../src/destinations/google_ads/index.js';
import { call, createTestContext, makeStore, type TestContext } from '../helpers.js';
import { FakePlatforms } from './fake-platforms.js';
import { FakeGraph } from './meta/fake-graph.js';
import { FAST, PIXEL, TOKEN } from './meta/setup.js';

/** Refunds reach the ad platforms (api.md §9): Google Ads adjustments, opt-in refund events. */

const ACTION = 'customers/1234567890/conversionActions/555';
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

const googleBody = () => ({
  customerId: '1234567890',
  conversionAction: ACTION,
  api: 'google_ads_api',
  developerToken: fake.developerToken,
  oauth: { ...fake.oauthClient },
});

async function store(options: { tiktok?: Record<string, unknown>; meta?: Record<string, unknown> } = {}) {
  const storeId = await makeStore(ctx.app, ctx.a.live, { timezone: 'America/New_York' });
  const key = ctx.a.live;
  const put = (kind: string, body: unknown) => call(ctx.app, 'PUT', `/v1/stores/${storeId}/destinations/${kind}`, { key, body });
  expect((await put('google_ads', googleBody())).status).toBe(200);
  const tiktok = await put('tiktok', {
    pixelCode: 'CABCDEFGHIJ1234567',
    accessToken: fake.tiktokToken,
    testEventCode: 'TEST1',
    ...options.tiktok,
  });
  expect(tiktok.status).toBe(200);
  const meta = await put('meta', { pixelId: PIXEL, accessToken: TOKEN, testEventCode: 'TEST2', ...options.meta });
  expect(meta.status).toBe(200);
  return storeId;
}

async function purchase(storeId: string, orderId: string, key = ctx.a.live) {
  const res = await call(ctx.app, 'POST', '/v1/track/conversion', {
    key,
    body: {
      storeId,
      eventType: 'Purchase',
      eventValue: 100,
      currency: 'EUR',
      orderId,
      gclid: `gclid-${orderId}`,
      ttclid: `ttclid-${orderId}`,
      timestamp: new Date(Date.now() - 3600_000).toISOString(),
    },
  });
  expect(res.status).toBe(200);
  return res.body.data.conversionId as string;
}

async function refund(storeId: string, orderId: string, refundId: string, amount?: number, key = ctx.a.live) {
  const res = await call(ctx.app, 'POST', '/v1/track/refund', {
    key,
    body: { storeId, orderId, refundId, currency: 'EUR', ...(amount !== undefined && { amount }) },
  });
  expect(res.status).toBe(200);
  return res.body.data;
}

async function refundState(storeId: string, orderId: string, refundId: string, destination: string, status: string) {
  const deadline = Date.now() + 8000;
  for (;;) {
    const data = await refund(storeId, orderId, refundId);
    if (data.forwarding?.[destination]?.status === status) return data;
    if (Date.now() > deadline)
      throw new Error(`${refundId}: ${JSON.stringify(data.forwarding)}, expected ${destination} ${status}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('refunds to the ad platforms', () => {
  it('Google Ads: a partial refund restates the value left, a full one retracts, after the upload, in order', async () => {
    ctx = await context();
    const storeId = await store();
    fake.delayMs = 150; // the upload is still in flight when the refunds are recorded
    await purchase(storeId, 'o-1');
    const first = await refund(storeId, 'o-1', 're-1', 30);
    expect(first.forwarding.google_ads).toMatchObject({ status: 'pending', adjustmentType: 'RESTATEMENT' });
    await refund(storeId, 'o-1', 're-2', 20);
    await refund(storeId, 'o-1', 're-3');
    await fake.waitFor(() => fake.googleAdjusted().length === 3, 8000, 'three adjustments');
    fake.delayMs = 0;
    // Never before the conversion itself: the fake refuses adjustments of unknown orders.
    expect(fake.uploads.filter((u) => u.refused.size > 0)).toEqual([]);
    const adjustments = fake.googleAdjusted();
    expect(adjustments.map((a) => [a.adjustmentType, a.restatementValue?.adjustedValue])).toEqual([
      ['RESTATEMENT', 70],
      ['RESTATEMENT', 50],
      ['RETRACTION', undefined],
    ]);
    expect(adjustments[0]).toMatchObject({
      conversionAction: ACTION,
      orderId: 'o-1',
      restatementValue: { adjustedValue: 70, currencyCode: 'EUR' },
    });
    expect(adjustments[0]?.adjustmentDateTime).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}-0[45]:00$/);
    const held = fake.googleConversions.get(`${ACTION}\no-1`);
    expect(held).toMatchObject({ retracted: true });
    const done = await refundState(storeId, 'o-1', 're-3', 'google_ads', 'sent');
    expect(done.forwarding.google_ads).toMatchObject({ adjustmentType: 'RETRACTION', attempts: 1 });
    expect(done.forwarding.google_ads.sentAt).toEqual(expect.any(String));
    // Without opt-in, TikTok and Meta get no refund events.
    expect(done.forwarding.tiktok).toBeUndefined();
    expect(done.forwarding.meta).toBeUndefined();
    await new Promise((r) => setTimeout(r, 200));
    expect(fake.tiktokAccepted().map((e) => e.event)).toEqual(['CompletePayment']);
    expect(graph.acceptedEvents().map((e) => e.event_name)).toEqual(['Purchase']);
    const metrics = await call(ctx.app, 'GET', '/metrics');
    expect(metrics.raw.body).toMatch(
      /waytrack_destination_refunds_total\{destination="google_ads",mode="live",outcome="sent"\} 3/,
    );
  });

  it('a retry after a 5xx sends the same adjustment once; test mode uses validateOnly', async () => {
    ctx = await context();
    const storeId = await store();
    await purchase(storeId, 'o-2');
    await fake.waitFor(() => fake.googleAccepted().length === 1, 5000, 'the upload');
    fake.googleFaults.push({ type: 'http500' });
    await refund(storeId, 'o-2', 're-1', 40);
    const sent = await refundState(storeId, 'o-2', 're-1', 'google_ads', 'sent');
    expect(sent.forwarding.google_ads.attempts).toBe(2);
    expect(fake.uploads.filter((u) => u.method === 'uploadConversionAdjustments').map((u) => u.status)).toEqual([500, 200]);
    expect(fake.googleAdjusted()).toHaveLength(1);

    const testStore = await makeStore(ctx.app, ctx.a.test);
    const put = await call(ctx.app, 'PUT', `/v1/stores/${testStore}/destinations/google_ads`, {
      key: ctx.a.test,
      body: googleBody(),
    });
    expect(put.status).toBe(200);
    await purchase(testStore, 't-1', ctx.a.test);
    await refund(testStore, 't-1', 're-t', undefined, ctx.a.test);
    const deadline = Date.now() + 8000;
    while (!fake.uploads.some((u) => u.method === 'uploadConversionAdjustments' && u.validateOnly)) {
      if (Date.now() > deadline) throw new Error('no validateOnly adjustment');
      await new Promise((r) => setTimeout(r, 20));
    }
    const adjustment = fake.uploads.find((u) => u.method === 'uploadConversionAdjustments' && u.validateOnly);
    expect(adjustment?.adjustments[0]).toMatchObject({ adjustmentType: 'RETRACTION', orderId: 't-1' });
  });

  it('an adjustment of a conversion Google refused is skipped with the reason', async () => {
    ctx = await context();
    const storeId = await store();
    fake.badClickIds.add('gclid-o-3');
    const id = await purchase(storeId, 'o-3');
    await fake.waitFor(() => fake.uploads.some((u) => u.refused.size > 0), 5000, 'the refusal');
    const data = await refundState(storeId, 'o-3', 're-1', 'google_ads', 'skipped');
    expect(data.forwarding.google_ads.lastError).toMatch(/not delivered to Google Ads/);
    expect(fake.uploads.filter((u) => u.method === 'uploadConversionAdjustments')).toEqual([]);
    expect(id).toBeTruthy();
  });

  it('with refundEvent, TikTok and Meta get a custom event with the negative value, deduplicated by the refund', async () => {
    ctx = await context();
    const storeId = await store({ tiktok: { refundEvent: 'Refund' }, meta: { refundEvent: 'Refund' } });
    const destinations = await call(ctx.app, 'GET', `/v1/stores/${storeId}/destinations`, { key: ctx.a.live });
    const byKind = Object.fromEntries(
      destinations.body.data.destinations.map((d: { kind: string; settings: unknown }) => [d.kind, d.settings]),
    );
    expect(byKind.tiktok).toMatchObject({ refundEvent: 'Refund' });
    expect(byKind.meta).toMatchObject({ refundEvent: 'Refund' });
    await purchase(storeId, 'o-4');
    await refund(storeId, 'o-4', 're-1', 25.5);
    await fake.waitFor(() => fake.tiktokAccepted().length === 2, 8000, 'the TikTok refund event');
    const event = fake.tiktokAccepted().find((e) => e.event === 'Refund');
    expect(event).toMatchObject({
      event_id: 'refund_re-1',
      properties: { value: -25.5, currency: 'EUR', order_id: 'o-4' },
      user: { ttclid: 'ttclid-o-4' },
    });
    await fake.waitFor(() => graph.acceptedEvents().length === 2, 8000, 'the Meta refund event');
    const meta = graph.acceptedEvents().find((e) => e.event_name === 'Refund');
    expect(meta).toMatchObject({ event_id: 'refund_re-1', custom_data: { value: -25.5, currency: 'EUR', order_id: 'o-4' } });
    await refundState(storeId, 'o-4', 're-1', 'meta', 'sent');
    // TikTok's fake counts the event when it answers; the job is recorded sent just after.
    await refundState(storeId, 'o-4', 're-1', 'tiktok', 'sent');
  });

  it('test mode: refund events carry the test event codes; a bad refundEvent is refused with details.field', async () => {
    ctx = await context();
    const key = ctx.a.test;
    const storeId = await makeStore(ctx.app, key);
    const put = (kind: string, body: unknown) =>
      call(ctx.app, 'PUT', `/v1/stores/${storeId}/destinations/${kind}`, { key, body });
    const bad = await put('tiktok', { pixelCode: 'CABCDEFGHIJ1234567', accessToken: fake.tiktokToken, refundEvent: 'Re fund' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toMatchObject({ field: 'refundEvent', reason: 'invalid_format' });
    const tooLong = await put('meta', { pixelId: PIXEL, accessToken: TOKEN, refundEvent: 'R'.repeat(51) });
    expect(tooLong.body.error.details).toMatchObject({ field: 'refundEvent' });
    const tiktok = {
      pixelCode: 'CABCDEFGHIJ1234567',
      accessToken: fake.tiktokToken,
      testEventCode: 'TT_TEST',
      refundEvent: 'Refund',
    };
    expect((await put('tiktok', tiktok)).status).toBe(200);
    expect(
      (await put('meta', { pixelId: PIXEL, accessToken: TOKEN, testEventCode: 'META_TEST', refundEvent: 'Refund' })).status,
    ).toBe(200);
    await purchase(storeId, 'x-1', key);
    await refund(storeId, 'x-1', 're-x', 10, key);
    await fake.waitFor(() => fake.tiktokAccepted().some((e) => e.event === 'Refund'), 8000, 'the TikTok refund event');
    const request = fake.tiktok.find((r) => r.body.data.some((e: { event: string }) => e.event === 'Refund'));
    expect(request?.body.test_event_code).toBe('TT_TEST');
    await graph.waitFor(() => graph.acceptedEvents().some((e) => e.event_name === 'Refund'), 8000, 'the Meta refund event');
    const meta = graph.acceptedRequests().find((r) => r.events.some((e) => e.event_name === 'Refund'));
    expect(meta?.testEventCode).toBe('META_TEST');
    // A PUT without refundEvent turns it off.
    const { refundEvent: _, ...withoutRefund } = tiktok;
    const off = await put('tiktok', withoutRefund);
    expect(off.body.data.settings.refundEvent).toBeNull();
  });
});
