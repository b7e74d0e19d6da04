import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Attribution, Touchpoint } from '../../src/attribution/model.js';
import { forgetGoogleTokens } from '../../src/destinations/google_ads/index.js';
import { applyReattribution } from '../../src/tracking/conversion-attribution.js';
import { FakePlatforms } from '../destinations/fake-platforms.js';
import { FakeGraph } from '../destinations/meta/fake-graph.js';
import { FAST, PIXEL, RELAXED, TOKEN } from '../destinations/meta/setup.js';
import { call, createTestContext, makeStore, type TestContext } from '../helpers.js';

// Re-attribution and the destinations (issue 38 points 4–5, docs/api.md "Re-attribution"): a job
// a platform already received is never sent again; a job still pending is sent with the new
// click; a destination the new click no longer calls for is skipped, one it now calls for is sent.

const sha = (value: string) => createHash('sha256').update(value, 'utf8').digest('hex');
const ACTION = 'customers/1234567890/conversionActions/555';
/** A next attempt no dispatcher reaches during the test: the job waits for the test. */
const PARKED = Date.now() + 10 * 365 * 86_400_000;

let fake: FakePlatforms;
let graph: FakeGraph;
let ctx: TestContext;
let storeId: string;

beforeAll(async () => {
  fake = await FakePlatforms.start();
  graph = await FakeGraph.start();
  ctx = await createTestContext({
    env: {
      META_GRAPH_URL: graph.url,
      GOOGLE_ADS_API_URL: fake.url,
      GOOGLE_OAUTH_TOKEN_URL: fake.tokenUrl,
      TIKTOK_API_URL: fake.url,
      CAPI_SYNC_WAIT_MS: '0',
    },
    forwarding: { ...FAST, ...RELAXED },
  });
  storeId = await makeStore(ctx.app, ctx.a.live, { pixelId: PIXEL, capiAccessToken: TOKEN });
  const google = await call(ctx.app, 'PUT', `/v1/stores/${storeId}/destinations/google_ads`, {
    key: ctx.a.live,
    body: {
      customerId: '1234567890',
      conversionAction: ACTION,
      api: 'google_ads_api',
      developerToken: fake.developerToken,
      oauth: { ...fake.oauthClient },
    },
  });
  expect(google.status).toBe(200);
});
afterEach(() => {
  graph.outage = undefined;
  fake.outage = false;
});
afterAll(async () => {
  await ctx?.close();
  await fake.close();
  await graph.close();
  forgetGoogleTokens();
});

interface Click {
  clickId: string;
  fbclid: string;
  time: number;
}

async function click(body: Record<string, unknown>): Promise<Click> {
  const timestamp = new Date(Date.now() - 3_600_000).toISOString();
  const res = await call(ctx.app, 'POST', '/v1/track/click', {
    key: ctx.a.live,
    body: { storeId, landingPage: 'https://shop.acme.test/p?utm_source=x', timestamp, ...body },
  });
  expect(res.status).toBe(200);
  return { clickId: res.body.data.clickId, fbclid: String(body.fbclid ?? ''), time: Date.parse(timestamp) };
}

async function conversion(body: Record<string, unknown>): Promise<string> {
  const res = await call(ctx.app, 'POST', '/v1/track/conversion', {
    key: ctx.a.live,
    body: {
      storeId,
      eventType: 'Purchase',
      eventValue: 49.9,
      currency: 'EUR',
      customerData: { email: ' John.Smith@GMail.com ', phone: '(650) 555-1212', country: 'US' },
      ...body,
    },
  });
  expect(res.status).toBe(200);
  const id = res.body.data.conversionId as string;
  // Recorded below 100 (as by probabilistic evidence), so a re-attribution may replace it.
  await ctx.database.write((trx) =>
    trx.updateTable('conversions').set({ confidence: 70, attribution_signal: 'ip' }).where('id', '=', id).execute(),
  );
  return id;
}

function result(winner: Click): Attribution {
  const touchpoint: Touchpoint = {
    clickId: winner.clickId,
    fbclid: winner.fbclid,
    signal: 'same_browser',
    score: 95,
    clickTime: winner.time,
    evidence: [{ kind: 'same_browser', sharedBy: 1 }],
    browser: `b-${winner.clickId}`,
  };
  return { winner: touchpoint, touchpoints: [touchpoint], candidates: [touchpoint] };
}

const reattribute = (conversionId: string, winner: Click) =>
  applyReattribution(ctx.database, { accountId: ctx.a.accountId, livemode: 1, conversionId }, result(winner));

async function forwardingOf(id: string) {
  return (await call(ctx.app, 'GET', `/v1/conversions/${id}`, { key: ctx.a.live })).body.data.forwarding;
}

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const jobsOf = (id: string) =>
  ctx.database.read
    .selectFrom('destination_jobs')
    .selectAll()
    .where('conversion_id', '=', id)
    .where('kind', '=', 'conversion')
    .execute();

/**
 * Holds the conversion's pending jobs back (during an outage they are retried between attempts):
 * each is parked once no dispatcher holds it, so nothing is in flight while the test re-attributes.
 */
async function park(id: string, destinations: string[]) {
  await waitFor(async () => {
    await ctx.database.write((trx) =>
      trx
        .updateTable('destination_jobs')
        .set({ next_attempt_at: PARKED })
        .where('conversion_id', '=', id)
        .where('status', '=', 'pending')
        .where('claimed_by', 'is', null)
        .execute(),
    );
    const jobs = await jobsOf(id);
    return destinations.every((d) =>
      jobs.some(
        (j) => j.destination === d && j.status === 'pending' && j.claimed_by === null && Number(j.next_attempt_at) === PARKED,
      ),
    );
  }, `parked jobs of ${id}`);
}

async function release(id: string) {
  graph.outage = undefined;
  fake.outage = false;
  await ctx.database.write((trx) =>
    trx
      .updateTable('destination_jobs')
      .set({ next_attempt_at: Date.now() })
      .where('conversion_id', '=', id)
      .where('status', '=', 'pending')
      .execute(),
  );
}

const metaEvents = (orderId: string) => graph.acceptedEvents().filter((e) => e.event_id === orderId);
const googleRows = (orderId: string) => fake.googleAccepted().filter((c) => c.orderId === orderId);

describe('re-attribution and the destinations', () => {
  it('a conversion Meta and Google already received is not sent again', async () => {
    const old = await click({ fbclid: 'FB-sent-old', gclid: 'G-sent-old' });
    const next = await click({ fbclid: 'FB-sent-new', gclid: 'G-sent-new' });
    const id = await conversion({ orderId: 'sent-1', fbclid: 'FB-sent-old' });
    await waitFor(async () => {
      const f = await forwardingOf(id);
      return f.meta?.status === 'sent' && f.google_ads?.status === 'sent';
    }, 'both sent');
    expect(metaEvents('sent-1')).toHaveLength(1);
    expect(googleRows('sent-1')).toEqual([expect.objectContaining({ gclid: 'G-sent-old' })]);
    const payloads = (await jobsOf(id)).map((j) => [j.destination, j.payload]);

    const applied = await reattribute(id, next);
    expect(applied?.after.attributed_click_id).toBe(next.clickId);
    expect(applied?.jobs).toEqual({ meta: 'kept_sent', google_ads: 'kept_sent' });
    // What was sent stays as sent; nothing new goes out.
    expect((await jobsOf(id)).map((j) => [j.destination, j.payload])).toEqual(payloads);
    await new Promise((r) => setTimeout(r, 500));
    expect(metaEvents('sent-1')).toHaveLength(1);
    expect(googleRows('sent-1')).toHaveLength(1);
    expect((await forwardingOf(id)).google_ads.status).toBe('sent');
    expect(old.clickId).not.toBe(next.clickId);
  });

  it('pending jobs are sent with the new click (its fbc, its gclid), with the hashes they already had', async () => {
    graph.outage = { type: 'http500' };
    fake.outage = true;
    await click({ fbclid: 'FB-pend-old', gclid: 'G-pend-old' });
    const next = await click({ fbclid: 'FB-pend-new', gclid: 'G-pend-new' });
    const id = await conversion({ orderId: 'pend-1', fbclid: 'FB-pend-old' });
    await park(id, ['meta', 'google_ads']);

    const applied = await reattribute(id, next);
    expect(applied?.jobs).toEqual({ meta: 'replanned', google_ads: 'replanned' });
    await release(id);
    await waitFor(async () => metaEvents('pend-1').length > 0 && googleRows('pend-1').length > 0, 'delivery');
    const [event] = metaEvents('pend-1');
    expect(String(event?.user_data?.fbc)).toMatch(/\.FB-pend-new$/);
    expect(googleRows('pend-1')).toEqual([
      expect.objectContaining({
        gclid: 'G-pend-new',
        userIdentifiers: [{ hashedEmail: sha('johnsmith@gmail.com') }, { hashedPhoneNumber: sha('+16505551212') }],
      }),
    ]);
    expect(JSON.stringify(graph.acceptedEvents())).not.toContain('FB-pend-old');
    await waitFor(async () => (await forwardingOf(id)).google_ads?.status === 'sent', 'google sent shown');
  });

  it('a pending Google job is skipped when the new click has no Google id; a click with one gets a new job', async () => {
    fake.outage = true;
    await click({ fbclid: 'FB-skip-old', gclid: 'G-skip-old' });
    const metaOnly = await click({ fbclid: 'FB-skip-new' });
    const id = await conversion({ orderId: 'skip-1', fbclid: 'FB-skip-old' });
    await waitFor(async () => (await forwardingOf(id)).meta?.status === 'sent', 'meta sent');
    await park(id, ['google_ads']);
    const skipped = await reattribute(id, metaOnly);
    expect(skipped?.jobs).toEqual({ meta: 'kept_sent', google_ads: 'skipped' });
    expect((await forwardingOf(id)).google_ads).toMatchObject({ status: 'skipped', reason: 'reattributed' });
    await release(id);

    // The other way: recorded without a Google id (no google_ads entry), re-attributed to a click with one.
    const google = await click({ fbclid: 'FB-new-job', gclid: 'G-new-job' });
    await click({ fbclid: 'FB-no-google' });
    const other = await conversion({ orderId: 'new-job-1', fbclid: 'FB-no-google' });
    expect((await forwardingOf(other)).google_ads).toBeUndefined();
    const quality = async () =>
      (await call(ctx.app, 'GET', `/v1/conversions/${other}`, { key: ctx.a.live })).body.data.matchQuality;
    expect((await quality()).google_ads).toBeUndefined();
    const enqueued = await reattribute(other, google);
    expect(enqueued?.jobs.google_ads).toBe('enqueued');
    await waitFor(async () => googleRows('new-job-1').length > 0, 'google delivery of the new job');
    expect(googleRows('new-job-1')[0]).toMatchObject({ gclid: 'G-new-job' });
    // Match quality now has Google's entry, with the click id and the stored email hash.
    expect((await quality()).google_ads).toMatchObject({ keys: expect.arrayContaining(['clickId', 'email']) });
    await new Promise((r) => setTimeout(r, 300));
    expect(googleRows('skip-1')).toHaveLength(0);
  });
});
