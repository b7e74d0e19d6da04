import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { forgetGoogleTokens, googleAds } from '../../src/destinations/google_ads/index.js';
import { call, createTestContext, makeStore, type TestContext } from '../helpers.js';
import { FakeDataManager } from './fake-data-manager.js';
import { FAST, RELAXED } from './meta/setup.js';

/** Data Manager's fail-fast refusals mapped per event, refunds as adjustments, jobs planned under the other api (api.md §9, §12). */

const ACTION = 'customers/1234567890/conversionActions/555';

let dm: FakeDataManager;
let ctx: TestContext | undefined;

beforeAll(async () => {
  dm = await FakeDataManager.start();
});
afterAll(async () => {
  await dm.close();
});
afterEach(async () => {
  await ctx?.close();
  ctx = undefined;
  dm.reset();
  forgetGoogleTokens();
});

const env = () => ({
  metaGraphUrl: 'http://127.0.0.1:9',
  metaGraphVersion: 'v24.0',
  googleAdsApiUrl: 'http://127.0.0.1:9',
  googleAdsApiVersion: 'v22',
  googleOauthTokenUrl: dm.tokenUrl,
  googleDataManagerUrl: dm.url,
  pinterestApiUrl: 'http://127.0.0.1:9',
  snapchatApiUrl: 'http://127.0.0.1:9',
  tiktokApiUrl: 'http://127.0.0.1:9',
  microsoftCapiUrl: 'http://127.0.0.1:9',
  redditApiUrl: 'http://127.0.0.1:9',
  linkedinApiUrl: 'http://127.0.0.1:9',
});

const settings = { api: 'data_manager' as const, customerId: '1234567890', conversionAction: ACTION };
const secrets = () => ({ clientSecret: dm.oauthClient.clientSecret, refreshToken: dm.oauthClient.refreshToken });

const event = (gclid: string, transactionId: string) => ({
  conversionAction: ACTION,
  event: {
    transactionId,
    eventTimestamp: '2026-11-28T10:00:00.000Z',
    adIdentifiers: { gclid },
    conversionValue: 10,
    currency: 'EUR',
    consent: { adUserData: 'CONSENT_GRANTED', adPersonalization: 'CONSENT_GRANTED' },
    eventSource: 'WEB',
  },
});

describe('the Data Manager sender', () => {
  it('an event Google names as refused fails with its message; the others of the batch are sent in the same attempt', async () => {
    dm.badClickIds.add('gclid-bad');
    const result = await googleAds.send({
      settings: { ...settings, oauthClientId: dm.oauthClient.clientId },
      secrets: secrets(),
      live: true,
      kind: 'conversion',
      route: '',
      payloads: [event('gclid-a', 't-a'), event('gclid-bad', 't-bad'), event('gclid-c', 't-c')],
      env: env(),
      timeoutMs: 5000,
    });
    expect(result.outcomes.map((o) => o.outcome)).toEqual(['sent', 'failed', 'sent']);
    const refused = result.outcomes[1] as { error: string };
    expect(refused.error).toBe(
      'Google Data Manager refused this event: The gclid could not be decoded. (INVALID_FORMAT) at events[1].ad_identifiers.gclid',
    );
    // Fail-fast: the first request was refused whole, the second carried the other two.
    expect(dm.requests.map((r) => [r.status, r.body.events.map((e: { transactionId: string }) => e.transactionId)])).toEqual([
      [400, ['t-a', 't-bad', 't-c']],
      [200, ['t-a', 't-c']],
    ]);
    expect(result.traceId).toBe(dm.requests[1]?.requestId);
  });

  it('one request per conversion action (Data Manager destination); a ClickConversion planned for the Google Ads API is translated', async () => {
    const other = 'customers/1234567890/conversionActions/777';
    const result = await googleAds.send({
      settings: { ...settings, oauthClientId: dm.oauthClient.clientId },
      secrets: secrets(),
      live: false,
      kind: 'conversion',
      route: '',
      payloads: [
        event('gclid-a', 't-a'),
        {
          gclid: 'gclid-old',
          conversionAction: other,
          conversionDateTime: '2026-11-28 05:00:00-05:00',
          conversionValue: 12.5,
          currencyCode: 'USD',
          orderId: 'o-old',
          userIdentifiers: [{ hashedEmail: 'a'.repeat(64) }],
          consent: { adUserData: 'GRANTED' },
        },
      ],
      env: env(),
      timeoutMs: 5000,
    });
    expect(result.outcomes.map((o) => o.outcome)).toEqual(['sent', 'sent']);
    expect(dm.requests.map((r) => [r.body.destinations[0].productDestinationId, r.body.validateOnly])).toEqual([
      ['555', true],
      ['777', true],
    ]);
    expect(dm.requests[1]?.body.events).toEqual([
      {
        transactionId: 'o-old',
        eventTimestamp: '2026-11-28T10:00:00.000Z',
        adIdentifiers: { gclid: 'gclid-old' },
        conversionValue: 12.5,
        currency: 'USD',
        userData: { userIdentifiers: [{ emailAddress: 'a'.repeat(64) }] },
        consent: { adUserData: 'CONSENT_GRANTED', adPersonalization: 'CONSENT_GRANTED' },
        eventSource: 'WEB',
      },
    ]);
  });

  it('a refund under the Google Ads API of a conversion uploaded through Data Manager names its transactionId', () => {
    const conversion = {
      event_type: 'Purchase',
      order_id: 'o-1',
      value_minor: 10_000,
      currency: 'EUR',
      event_time: Date.parse('2026-11-28T10:00:00Z'),
    };
    const plan = googleAds.planRefund?.({
      store: { timezone: 'UTC' } as never,
      settings: { api: 'google_ads_api', customerId: '1234567890', conversionAction: ACTION, oauthClientId: 'c' },
      conversion: conversion as never,
      refund: { refunded_after_minor: 3000, refund_time: Date.parse('2026-11-28T12:00:00Z') } as never,
      conversionPayload: event('gclid-a', 'evt-1'),
      now: Date.now(),
    });
    expect(plan && 'payload' in plan && plan.payload).toMatchObject({
      conversionAction: ACTION,
      adjustmentType: 'RESTATEMENT',
      orderId: 'evt-1',
      adjustmentDateTime: '2026-11-28 12:00:00+00:00',
      restatementValue: { adjustedValue: 70, currencyCode: 'EUR' },
    });
  });

  it('a request-level refusal fails every event with Google’s message; 5xx is retried', async () => {
    dm.faults = [{ type: 'http500' }];
    const request = {
      settings: { ...settings, oauthClientId: dm.oauthClient.clientId, customerId: '1234567890' },
      secrets: secrets(),
      live: true,
      kind: 'conversion' as const,
      route: '',
      payloads: [event('gclid-a', 't-a')],
      env: env(),
      timeoutMs: 5000,
    };
    const first = await googleAds.send(request);
    expect(first.outcomes[0]).toMatchObject({ outcome: 'retry', error: expect.stringMatching(/HTTP 500 INTERNAL/) });
    const wrongAction = await googleAds.send({
      ...request,
      payloads: [{ ...event('gclid-a', 't-a'), conversionAction: 'customers/1/conversionActions/x' }],
    });
    expect(wrongAction.outcomes[0]).toMatchObject({
      outcome: 'failed',
      error: expect.stringMatching(/HTTP 400 INVALID_ARGUMENT.*INVALID_CONVERSION_ACTION_ID/),
    });
  });
});

describe('through the outbox', () => {
  async function setup() {
    ctx = await createTestContext({
      env: { GOOGLE_DATA_MANAGER_URL: dm.url, GOOGLE_OAUTH_TOKEN_URL: dm.tokenUrl, CAPI_SYNC_WAIT_MS: '0' },
      forwarding: { ...FAST, ...RELAXED },
    });
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const res = await call(ctx.app, 'PUT', `/v1/stores/${storeId}/destinations/google_ads`, {
      key: ctx.a.live,
      body: { customerId: '1234567890', conversionAction: ACTION, oauth: { ...dm.oauthClient } },
    });
    expect(res.status).toBe(200);
    return { storeId, app: ctx.app, key: ctx.a.live };
  }

  async function state(app: TestContext['app'], key: string, id: string, status: string) {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const res = await call(app, 'GET', `/v1/conversions/${id}`, { key });
      if (res.body.data.forwarding?.google_ads?.status === status) return res.body.data.forwarding.google_ads;
      if (Date.now() > deadline) throw new Error(`${id}: ${JSON.stringify(res.body.data.forwarding)}, expected ${status}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it('a conversion Google refuses is failed with Google’s message; another is sent', async () => {
    const { storeId, app, key } = await setup();
    dm.badClickIds.add('gclid-bad');
    const convert = async (orderId: string, gclid: string) => {
      const res = await call(app, 'POST', '/v1/track/conversion', {
        key,
        body: { storeId, eventType: 'Purchase', eventValue: 10, currency: 'EUR', orderId, gclid },
      });
      expect(res.status).toBe(200);
      return res.body.data.conversionId as string;
    };
    const bad = await convert('o-bad', 'gclid-bad');
    const good = await convert('o-good', 'gclid-good');
    const failed = await state(app, key, bad, 'failed');
    expect(failed.lastError).toMatch(
      /The gclid could not be decoded\. \(INVALID_FORMAT\) at events\[\d\]\.ad_identifiers\.gclid/,
    );
    await state(app, key, good, 'sent');
    expect(dm.accepted().map((e) => e.transactionId)).toEqual(['o-good']);
  });

  it('refunds restate the conversion by its transactionId: the value left, 0 when fully refunded', async () => {
    const { storeId, app, key } = await setup();
    const res = await call(app, 'POST', '/v1/track/conversion', {
      key,
      body: {
        storeId,
        eventType: 'Purchase',
        eventValue: 100,
        currency: 'EUR',
        orderId: 'o-1',
        eventId: 'evt-1',
        gclid: 'gclid-1',
      },
    });
    const id = res.body.data.conversionId as string;
    await state(app, key, id, 'sent');
    const refund = async (refundId: string, amount?: number) => {
      const out = await call(app, 'POST', '/v1/track/refund', {
        key,
        body: { storeId, orderId: 'o-1', refundId, currency: 'EUR', ...(amount !== undefined && { amount }) },
      });
      expect(out.status).toBe(200);
      return out.body.data;
    };
    expect((await refund('re-1', 30)).forwarding.google_ads).toMatchObject({ adjustmentType: 'RESTATEMENT' });
    await dm.waitFor(() => (dm.conversions.get('555\nevt-1')?.adjustments.length ?? 0) === 1, 8000, 'first adjustment');
    expect((await refund('re-2')).forwarding.google_ads).toMatchObject({ adjustmentType: 'RETRACTION' });
    await dm.waitFor(() => (dm.conversions.get('555\nevt-1')?.adjustments.length ?? 0) === 2, 8000, 'second adjustment');
    const recorded = dm.conversions.get('555\nevt-1');
    expect(recorded?.adjustments.map((a) => [a.value, a.currency])).toEqual([
      [70, 'EUR'],
      [0, 'EUR'],
    ]);
    expect(recorded?.value).toBe(0);
    // The adjustment is the conversion's event again: same ids, the refund's time as lastUpdatedTimestamp.
    const adjustment = dm.accepted()[1];
    expect(adjustment).toMatchObject({ transactionId: 'evt-1', adIdentifiers: { gclid: 'gclid-1' }, eventSource: 'WEB' });
    expect(Date.parse(adjustment?.lastUpdatedTimestamp)).toBeGreaterThan(Date.parse(adjustment?.eventTimestamp));
    // Its outcome is recorded just after the platform's answer: the refund shows it sent then.
    await vi.waitFor(async () => expect((await refund('re-2')).forwarding.google_ads).toMatchObject({ status: 'sent' }), {
      timeout: 8000,
      interval: 50,
    });
  });
});
