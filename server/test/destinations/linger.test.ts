import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RECORD_OUTCOME } from '../../src/destinations/record-outcome.js';
import { call, createTestContext, makeStore, type TestContext } from '../helpers.js';
import { FakePlatforms } from './fake-platforms.js';
import { FakeGraph } from './meta/fake-graph.js';
import { FAST, PIXEL, TOKEN } from './meta/setup.js';

/**
 * Micro-batching of the jobs a process hands over to its own dispatcher (dispatcher.ts,
 * `lingerMs`): every destination's jobs wait a moment for later ones and leave together, so a
 * platform gets one request for conversions recorded close together, not one each (issue 39
 * point 6: conversion latency with eight destinations) — but Meta's conversions while requests
 * wait for Meta's answer (CAPI_SYNC_WAIT_MS > 0).
 */
let platforms: FakePlatforms;
let graph: FakeGraph;
let ctx: TestContext;

beforeAll(async () => {
  platforms = await FakePlatforms.start();
  graph = await FakeGraph.start();
});
afterAll(async () => {
  await platforms.close();
  await graph.close();
});
afterEach(async () => {
  await ctx?.close();
  platforms.reset();
  graph.reset();
});

async function store(): Promise<string> {
  const storeId = await makeStore(ctx.app, ctx.a.live, { pixelId: PIXEL, capiAccessToken: TOKEN });
  const put = await call(ctx.app, 'PUT', `/v1/stores/${storeId}/destinations/tiktok`, {
    key: ctx.a.live,
    body: { pixelCode: 'CABCDEFGHIJ1234567', accessToken: platforms.tiktokToken },
  });
  expect(put.status).toBe(200);
  return storeId;
}

async function conversions(storeId: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const res = await call(ctx.app, 'POST', '/v1/track/conversion', {
      key: ctx.a.live,
      body: { storeId, eventType: 'Purchase', eventValue: 10, currency: 'USD', orderId: `o-${i}`, ttclid: `tt-${i}` },
    });
    expect(res.status).toBe(200);
  }
}

async function until(check: () => boolean, what: string, timeoutMs = 8000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** An app whose handed-over jobs linger 1.5 s, requests waiting up to `syncWaitMs` for Meta; its store sends to Meta and TikTok. */
async function lingering(syncWaitMs: string): Promise<string> {
  ctx = await createTestContext({
    env: { META_GRAPH_URL: graph.url, TIKTOK_API_URL: platforms.url, CAPI_SYNC_WAIT_MS: syncWaitMs },
    forwarding: { ...FAST, lingerMs: 1500, leaseMs: 60_000 },
  });
  return store();
}

describe('handed-over jobs linger for a batch (lingerMs)', () => {
  it('conversions recorded within the linger reach TikTok in one request; Meta gets each at once while requests wait for it', async () => {
    const storeId = await lingering('10000');
    const started = Date.now();
    await conversions(storeId, 5);
    const metaDone = Date.now();
    expect(graph.acceptedEventIds()).toHaveLength(5); // each request waited for its own event's answer
    await until(() => platforms.tiktokAccepted().length === 5, 'TikTok');
    expect(platforms.tiktok).toHaveLength(1);
    expect(platforms.tiktok[0]?.body.data).toHaveLength(5);
    // Meta did not wait for the linger; TikTok's request left after it.
    expect(graph.requests).toHaveLength(5);
    expect((platforms.tiktok[0]?.at ?? 0) - started).toBeGreaterThanOrEqual(1400);
    expect(metaDone - started).toBeLessThan((platforms.tiktok[0]?.at ?? 0) - started);
  });

  it("with CAPI_SYNC_WAIT_MS=0 no request waits for Meta: its conversions linger as the others' do", async () => {
    const storeId = await lingering('0');
    const started = Date.now();
    await conversions(storeId, 5);
    expect(graph.requests).toHaveLength(0);
    await until(() => graph.acceptedEventIds().length === 5 && platforms.tiktokAccepted().length === 5, 'Meta and TikTok');
    expect(graph.requests).toHaveLength(1);
    expect((graph.requests[0]?.at ?? 0) - started).toBeGreaterThanOrEqual(1400);
    expect(platforms.tiktok).toHaveLength(1);
  });

  it('a full batch leaves at once, without waiting for the linger', async () => {
    ctx = await createTestContext({
      env: { META_GRAPH_URL: graph.url, TIKTOK_API_URL: platforms.url, CAPI_SYNC_WAIT_MS: '0' },
      forwarding: { ...FAST, lingerMs: 60_000, leaseMs: 240_000, maxBatch: 3 },
    });
    const storeId = await store();
    await conversions(storeId, 3);
    await until(() => platforms.tiktokAccepted().length === 3, 'TikTok');
    expect(platforms.tiktok).toHaveLength(1);
  });
});

describe('a recording that outlasts its lease', () => {
  it('leaves its jobs to it: the process claims them again but does not send them twice', async () => {
    // Every delivery outcome waits 1.5 s before it is written (a writer busy behind other
    // writes, as under a loaded crash-loop run), three times the lease.
    ctx = await createTestContext({
      env: { META_GRAPH_URL: graph.url, CAPI_SYNC_WAIT_MS: '0' },
      forwarding: { ...FAST, leaseMs: 500 },
      wrapDatabase: (inner) => ({
        ...inner,
        async runWrite(job, arg) {
          if (job.name === RECORD_OUTCOME.name) await new Promise((r) => setTimeout(r, 1500));
          return inner.runWrite(job, arg);
        },
      }),
    });
    const storeId = await makeStore(ctx.app, ctx.a.live, { pixelId: PIXEL, capiAccessToken: TOKEN });
    const posted = await call(ctx.app, 'POST', '/v1/track/conversion', {
      key: ctx.a.live,
      body: { storeId, eventType: 'Purchase', eventValue: 10, currency: 'USD', orderId: 'o-slow' },
    });
    expect(posted.status).toBe(200);
    await until(() => graph.acceptedEventIds().length === 1, 'Meta');
    const listed = async () =>
      (await call(ctx.app, 'GET', `/v1/conversions/${posted.body.data.conversionId}`, { key: ctx.a.live })).body.data.forwarding
        ?.meta?.status;
    const deadline = Date.now() + 8000;
    while ((await listed()) !== 'sent' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(await listed()).toBe('sent');
    // Leases ran out twice over meanwhile, and the loop looked every 20 ms.
    expect(graph.acceptedEventIds()).toHaveLength(1);
  });
});
