import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { forgetGoogleTokens } from '../../src/destinations/google_ads/index.js';
import { call, createTestContext, makeStore, type TestContext } from '../helpers.js';
import { FakeDataManager } from './fake-data-manager.js';
import { FakePlatforms } from './fake-platforms.js';
import { FakeGraph } from './meta/fake-graph.js';
import { FAST, PIXEL, RELAXED, TOKEN } from './meta/setup.js';

// api.md §12 "Pixel and server, counted once" (issue 39 point 5): every destination receives the
// conversion's eventId as its dedup id — Meta `event_id`, TikTok `event_id`, Google (Data
// Manager) `transactionId` — the id the shop gave its browser pixel (the tag's waytrack('eventId')).

let graph: FakeGraph;
let platforms: FakePlatforms;
let dm: FakeDataManager;
let ctx: TestContext;

beforeAll(async () => {
  graph = await FakeGraph.start();
  platforms = await FakePlatforms.start();
  dm = await FakeDataManager.start({ shareTokensWith: platforms.tokens });
});
afterAll(async () => {
  await graph.close();
  await dm.close();
  await platforms.close();
});
afterEach(async () => {
  await ctx?.close();
  graph.reset();
  dm.reset();
  platforms.reset();
  forgetGoogleTokens();
});

async function storeWithEveryDestination(): Promise<string> {
  const storeId = await makeStore(ctx.app, ctx.a.live, { pixelId: PIXEL, capiAccessToken: TOKEN });
  const put = (kind: string, body: unknown) =>
    call(ctx.app, 'PUT', `/v1/stores/${storeId}/destinations/${kind}`, { key: ctx.a.live, body });
  const google = await put('google_ads', {
    customerId: '1234567890',
    conversionAction: 'customers/1234567890/conversionActions/555',
    oauth: { ...dm.oauthClient },
  });
  expect(google.body.data.settings.api).toBe('data_manager');
  expect((await put('tiktok', { pixelCode: 'CABCDEFGHIJ1234567', accessToken: platforms.tiktokToken })).status).toBe(200);
  return storeId;
}

async function sentEverywhere(conversionId: string) {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const res = await call(ctx.app, 'GET', `/v1/conversions/${conversionId}`, { key: ctx.a.live });
    const forwarding = res.body.data.forwarding ?? {};
    const statuses = ['meta', 'google_ads', 'tiktok'].map((kind) => forwarding[kind]?.status);
    if (statuses.every((s) => s === 'sent')) return res.body.data;
    if (Date.now() > deadline) throw new Error(`${conversionId}: ${JSON.stringify(forwarding)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('one event id for pixel and server (api.md §12)', () => {
  it('Meta event_id, TikTok event_id and Google transactionId are the conversion’s eventId; orderId when none was given', async () => {
    ctx = await createTestContext({
      env: {
        META_GRAPH_URL: graph.url,
        GOOGLE_DATA_MANAGER_URL: dm.url,
        GOOGLE_OAUTH_TOKEN_URL: dm.tokenUrl,
        TIKTOK_API_URL: platforms.url,
        CAPI_SYNC_WAIT_MS: '0',
      },
      forwarding: { ...FAST, ...RELAXED },
    });
    const storeId = await storeWithEveryDestination();
    const convert = async (fields: Record<string, unknown>) => {
      const res = await call(ctx.app, 'POST', '/v1/track/conversion', {
        key: ctx.a.live,
        body: { storeId, eventType: 'Purchase', eventValue: 20, currency: 'EUR', ...fields },
      });
      expect(res.status).toBe(200);
      return res.body.data.conversionId as string;
    };
    // The id the tag's waytrack('eventId') gave the page: 22 characters of base64url.
    const eventId = 'Zq3v1uX0S9-ab_cD2eFg4h';
    const given = await convert({ orderId: 'o-evt-1', eventId, gclid: 'gclid-evt-1', ttclid: 'tt-evt-1' });
    const defaulted = await convert({ orderId: 'o-evt-2', gclid: 'gclid-evt-2', ttclid: 'tt-evt-2' });
    expect((await sentEverywhere(given)).eventId).toBe(eventId);
    expect((await sentEverywhere(defaulted)).eventId).toBe('o-evt-2');

    const metaIds = graph.requests.filter((r) => r.accepted).flatMap((r) => r.events.map((e) => e.event_id));
    expect(metaIds).toEqual(expect.arrayContaining([eventId, 'o-evt-2']));
    const tiktok = platforms.tiktokAccepted() as Array<{ event_id: string; properties: { order_id: string } }>;
    expect(tiktok.map((e) => [e.properties.order_id, e.event_id]).sort()).toEqual([
      ['o-evt-1', eventId],
      ['o-evt-2', 'o-evt-2'],
    ]);
    const google = dm.accepted() as Array<{ transactionId: string; adIdentifiers: { gclid: string } }>;
    expect(google.map((e) => [e.adIdentifiers.gclid, e.transactionId]).sort()).toEqual([
      ['gclid-evt-1', eventId],
      ['gclid-evt-2', 'o-evt-2'],
    ]);
  });
});
