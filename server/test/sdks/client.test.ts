// @waytrack/client (packages/client) against a real `waytrack serve` process and the harness's
// failing proxy: every method, the errors, retries with one Idempotency-Key, timeouts, TLS trust,
// and the built CommonJS and ESM files.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type FetchLike,
  VERSION,
  Waytrack,
  WaytrackConnectionError,
  WaytrackError,
  type WaytrackOptions,
} from '../../../packages/client/src/index.ts';
import { MAX_RETRY_AFTER_MS, parseRetryAfter, retryDelay } from '../../../packages/client/src/retry.ts';
import { ENGINE } from '../engine.js';
import { type SdkServer, startSdkServer } from './harness.js';

const run = promisify(execFile);
const CLIENT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../packages/client');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let sdk: SdkServer;
let env: Record<string, string>;

beforeAll(async () => {
  sdk = await startSdkServer('client');
  env = sdk.env;
}, 180_000);
afterAll(async () => sdk?.close());

interface Seen {
  method: string;
  path: string;
  idempotencyKey: string | null;
  userAgent: string | null;
  authorization: string | null;
}

/** The proxy's control: what to fail next, and what it saw. */
const control = {
  async fail(plan: { status: number; count: number; retryAfter?: number }) {
    const res = await fetch(`${env.WAYTRACK_TEST_CONTROL_URL}/fail`, { method: 'POST', body: JSON.stringify(plan) });
    expect(res.status).toBe(204);
  },
  async seen(): Promise<Seen[]> {
    return (await fetch(`${env.WAYTRACK_TEST_CONTROL_URL}/requests`)).json() as Promise<Seen[]>;
  },
  async reset() {
    await fetch(`${env.WAYTRACK_TEST_CONTROL_URL}/reset`, { method: 'POST' });
  },
};
beforeEach(() => control.reset());

/** Retries a few milliseconds apart, so the retry tests run fast. */
const FAST = { retryBaseDelayMs: 1, retryMaxDelayMs: 5 };

/** A client of the server itself, trusting its self-signed certificate. */
function direct(options: Partial<WaytrackOptions> = {}): Waytrack {
  return new Waytrack({
    apiKey: env.WAYTRACK_TEST_LIVE_KEY as string,
    baseUrl: env.WAYTRACK_TEST_BASE_URL,
    ca: env.WAYTRACK_TEST_CA_FILE,
    ...FAST,
    ...options,
  });
}

/** A client of the failing proxy in front of the server. */
const proxied = (options: Partial<WaytrackOptions> = {}) => direct({ baseUrl: env.WAYTRACK_TEST_PROXY_URL, ...options });

let counter = 0;
const unique = (prefix: string) => `${prefix}_${Date.now().toString(36)}_${counter++}`;

async function newStore(wt = direct()) {
  return wt.stores.create({ name: unique('Shop'), domain: 'shop.example.com', platform: 'custom' });
}

const landing = (fbclid: string) => `https://shop.example.com/p/1?utm_source=facebook&utm_campaign=bf&fbclid=${fbclid}`;

/** The rejection of `promise`, which must reject. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail, it succeeded');
}

async function apiError(promise: Promise<unknown>): Promise<WaytrackError> {
  const error = await rejection(promise);
  expect(error).toBeInstanceOf(WaytrackError);
  return error as WaytrackError;
}

async function connectionError(promise: Promise<unknown>): Promise<WaytrackConnectionError> {
  const error = await rejection(promise);
  expect(error).toBeInstanceOf(WaytrackConnectionError);
  return error as WaytrackConnectionError;
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

describe('@waytrack/client against a real server', () => {
  it('creates, retrieves, updates and lists stores', async () => {
    const wt = direct();
    const created = await wt.stores.create({
      name: 'Acme Outdoor',
      domain: 'shop.acme.com',
      platform: 'shopify',
      currency: 'EUR',
      timezone: 'Europe/Berlin',
      attributionWindowDays: 14,
    });
    expect(created).toMatchObject({
      name: 'Acme Outdoor',
      domain: 'shop.acme.com',
      platform: 'shopify',
      currency: 'EUR',
      timezone: 'Europe/Berlin',
      attributionWindowDays: 14,
      status: 'active',
      capiConfigured: false,
    });
    expect(created.id).toMatch(/^st_/);
    expect(await wt.stores.retrieve(created.id)).toEqual(created);

    const updated = await wt.stores.update(created.id, { name: 'Acme Outdoor EU', status: 'inactive', minConfidence: 70 });
    expect(updated).toMatchObject({ id: created.id, name: 'Acme Outdoor EU', status: 'inactive', minConfidence: 70 });
    expect((await wt.stores.retrieve(created.id)).status).toBe('inactive');

    const inactive = await wt.stores.list({ status: 'inactive', limit: 100 });
    expect(inactive.stores.map((s) => s.id)).toContain(created.id);
    expect(inactive.stores.every((s) => s.status === 'inactive')).toBe(true);
    // Every page also names its list `items`, in each library (api.md §6).
    expect(inactive.items).toEqual(inactive.stores);
    const active = await wt.stores.list({ status: 'active', limit: 100 });
    expect(active.stores.map((s) => s.id)).not.toContain(created.id);
  });

  it('track.identify links a browser to an email: a conversion from another device credits its click', async () => {
    const wt = direct();
    const store = await newStore(wt);
    const fbclid = unique('IwAR');
    const visitorId = unique('wt.client');
    const click = await wt.track.click({
      storeId: store.id,
      fbclid,
      landingPage: landing(fbclid),
      visitorId,
      ipAddress: '198.51.100.70',
    });
    const identified = await wt.track.identify({ storeId: store.id, visitorId, email: ' Client.Buyer@Example.com' });
    expect(identified).toMatchObject({ storeId: store.id, identified: true, links: 1, duplicate: false });
    expect(await wt.track.identify({ storeId: store.id, visitorId, email: 'client.buyer@example.com' })).toMatchObject({
      duplicate: true,
    });
    const order = { storeId: store.id, eventType: 'Purchase', orderId: unique('order'), eventValue: 20, currency: 'USD' };
    const conversion = await wt.track.conversion({
      ...order,
      customerData: { email: 'client.buyer@example.com' },
      ipAddress: '203.0.113.70',
    });
    expect(conversion).toMatchObject({ attributed: true, attributedTo: { clickId: click.clickId } });
    const error = await wt.track.identify({ storeId: store.id, email: 'x@example.com' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WaytrackError);
    expect(error).toMatchObject({ code: 'missing_required_field', status: 400, details: { field: 'visitorId' } });
  });

  it('records a click and a conversion attributed to it; the same orderId again is a duplicate', async () => {
    const wt = direct();
    const store = await newStore(wt);
    const fbclid = unique('IwAR');
    const click = await wt.track.click({ storeId: store.id, fbclid, landingPage: landing(fbclid), ipAddress: '203.0.113.7' });
    expect(click).toMatchObject({ fbclid, tracked: true, duplicate: false });
    expect(click.clickId).toMatch(/^clk_/);
    const again = await wt.track.click({ storeId: store.id, fbclid, landingPage: landing(fbclid) });
    expect(again).toMatchObject({ clickId: click.clickId, duplicate: true });

    const order = { storeId: store.id, eventType: 'Purchase', orderId: unique('order'), eventValue: 49.99, currency: 'USD' };
    const conversion = await wt.track.conversion({ ...order, fbclid, customerData: { email: 'Buyer@Example.com' } });
    expect(conversion).toMatchObject({
      eventType: 'Purchase',
      attributed: true,
      attributedTo: { clickId: click.clickId, fbclid, confidenceScore: 100 },
      capiSent: false,
      duplicate: false,
    });
    expect(conversion.conversionId).toMatch(/^conv_/);

    const duplicate = await wt.track.conversion({ ...order, fbclid });
    expect(duplicate).toMatchObject({ conversionId: conversion.conversionId, duplicate: true, attributed: true });
    expect(duplicate.attributedTo).toEqual(conversion.attributedTo);

    const detail = await wt.conversions.retrieve(conversion.conversionId);
    expect(detail).toMatchObject({
      storeId: store.id,
      orderId: order.orderId,
      eventValue: 49.99,
      currency: 'USD',
      livemode: true,
    });
    expect(detail.attribution.signal).toBe('explicit');
    expect(detail.attribution.touchpoints.map((t) => t.clickId)).toEqual([click.clickId]);

    const stored = await wt.clicks.retrieve(click.clickId);
    expect(stored).toMatchObject({ clickId: click.clickId, storeId: store.id, fbclid, isBot: false, livemode: true });
    expect(stored.utm).toMatchObject({ source: 'facebook', campaign: 'bf' });

    const attributed = await wt.conversions.list({ storeId: store.id, attributed: true });
    expect(attributed.conversions.map((c) => c.conversionId)).toEqual([conversion.conversionId]);
    expect((await wt.conversions.list({ storeId: store.id, attributed: false })).conversions).toEqual([]);
  });

  it('track.batch records clicks and conversions in order, one result per event', async () => {
    const wt = direct();
    const store = await newStore(wt);
    const fbclid = unique('IwAR');
    const result = await wt.track.batch([
      { type: 'click', storeId: store.id, fbclid, landingPage: landing(fbclid) },
      {
        type: 'conversion',
        storeId: store.id,
        eventType: 'Purchase',
        orderId: unique('order'),
        eventValue: 5,
        currency: 'USD',
        fbclid,
      },
      { type: 'click', storeId: store.id, fbclid: 'bad fbclid', landingPage: landing('x') },
    ]);
    expect(result).toMatchObject({ received: 3, failed: 1 });
    const [click, conversion, bad] = result.results;
    expect(click).toMatchObject({ index: 0, status: 200, data: { fbclid, duplicate: false } });
    const clickId = click && 'data' in click && 'clickId' in click.data ? click.data.clickId : undefined;
    expect(conversion).toMatchObject({ index: 1, status: 200, data: { attributed: true, attributedTo: { clickId } } });
    expect(bad).toMatchObject({ index: 2, status: 400, error: { code: 'invalid_fbclid', details: { field: 'fbclid' } } });
    // The request as a whole failing throws.
    const error = await apiError(wt.track.batch([]));
    expect(error).toMatchObject({ status: 400, code: 'invalid_request', details: { field: 'events' } });
  });

  it('track.queue sends every maxEvents events, after flushIntervalMs, and on flush(), in order', async () => {
    const wt = direct();
    const store = await newStore(wt);
    const click = (fbclid: string) => ({ type: 'click' as const, storeId: store.id, fbclid, landingPage: landing(fbclid) });
    const batches = () => control.seen().then((seen) => seen.filter((r) => r.path === '/v1/track/batch').length);
    // Through the proxy, which counts the requests.
    const queue = proxied().track.queue({ maxEvents: 3, flushIntervalMs: 60_000 });
    const first = [queue.add(click(unique('q'))), queue.add(click(unique('q')))];
    expect(queue.size).toBe(2);
    expect(await batches()).toBe(0);
    const third = queue.add(click(unique('q'))); // the third: sent at once
    expect(queue.size).toBe(0);
    const entries = await Promise.all([...first, third]);
    expect(entries.map((e) => [e.index, e.status])).toEqual([
      [0, 200],
      [1, 200],
      [2, 200],
    ]);
    expect(await batches()).toBe(1);

    // flush() sends what waits; a conversion added after its click is attributed to it.
    const fbclid = unique('q');
    const clickEntry = queue.add(click(fbclid));
    const order = { storeId: store.id, eventType: 'Purchase', orderId: unique('order'), eventValue: 1, currency: 'USD', fbclid };
    const conversionEntry = queue.add({ type: 'conversion', ...order });
    await queue.flush();
    expect(await batches()).toBe(2);
    expect(await conversionEntry).toMatchObject({ status: 200, data: { attributed: true } });
    expect(await clickEntry).toMatchObject({ status: 200, data: { fbclid } });

    // The timer sends a lone event after flushIntervalMs.
    const timed = proxied().track.queue({ maxEvents: 100, flushIntervalMs: 50 });
    const lone = timed.add(click(unique('q')));
    expect(await lone).toMatchObject({ index: 0, status: 200 });
    expect(await batches()).toBe(3);
    await timed.close();
    expect(() => timed.add(click(unique('q')))).toThrow(/closed/);
  });

  it('track.queue: a batch that cannot be sent rejects its events and calls onError', async () => {
    const failures: unknown[] = [];
    const queue = direct({ baseUrl: 'https://127.0.0.1:9/v1', maxRetries: 0 }).track.queue({
      onError: (error) => failures.push(error),
    });
    const entry = queue.add({ type: 'click', storeId: 'st_x', fbclid: 'x', landingPage: 'https://x.example/' });
    queue.add({ type: 'click', storeId: 'st_x', fbclid: 'y', landingPage: 'https://x.example/' }); // never awaited
    await queue.flush();
    expect(await rejection(entry)).toBeInstanceOf(WaytrackConnectionError);
    expect(failures).toHaveLength(1);
  });

  it('reports metrics, timeseries, breakdown and ad spend', async () => {
    const wt = direct();
    const store = await newStore(wt);
    const today = new Date().toISOString().slice(0, 10); // the store's time zone is UTC
    const fbclid = unique('IwAR');
    await wt.track.click({ storeId: store.id, fbclid, landingPage: landing(fbclid) });
    const sale = { storeId: store.id, eventType: 'Purchase', currency: 'USD' };
    await wt.track.conversion({ ...sale, orderId: unique('o'), eventValue: 10.1, fbclid });
    await wt.track.conversion({ ...sale, orderId: unique('o'), eventValue: 0.2 });
    const spend = await wt.adSpend.upsert(store.id, { entries: [{ date: today, amount: 5, currency: 'USD', campaignId: 'c1' }] });
    expect(spend.entries).toHaveLength(1);
    expect(spend.entries[0]).toMatchObject({ storeId: store.id, date: today, amount: 5, platform: 'meta', campaignId: 'c1' });

    const metrics = await wt.analytics.metrics({ storeId: store.id, startDate: today, endDate: today });
    expect(metrics).toMatchObject({
      totalClicks: 1,
      totalConversions: 2,
      totalRevenue: 10.3,
      attributedConversions: 1,
      attributedRevenue: 10.1,
      conversionRate: 100,
      averageOrderValue: 5.15,
      adSpend: 5,
      roas: 2.02,
      currency: 'USD',
    });

    const series = await wt.analytics.timeseries({ storeId: store.id, startDate: today, endDate: today, interval: 'day' });
    expect(series.buckets).toHaveLength(1);
    expect(series.buckets[0]).toMatchObject({ label: today, clicks: 1, conversions: 2, revenue: 10.3, attributedRevenue: 10.1 });

    const breakdown = await wt.analytics.breakdown({ storeId: store.id, by: 'utm_campaign', startDate: today, endDate: today });
    expect(breakdown.groups).toEqual([expect.objectContaining({ value: 'bf', clicks: 1, attributedRevenue: 10.1 })]);
    expect(await collect(wt.analytics.breakdownAll({ storeId: store.id, by: 'utm_campaign', limit: 1 }))).toHaveLength(1);

    const listed = await wt.adSpend.list(store.id, { startDate: today, endDate: today });
    expect(listed.entries.map((e) => e.id)).toEqual(spend.entries.map((e) => e.id));
  });

  it('connects, lists, syncs and disconnects a spend source; a missing account names its field', async () => {
    const wt = direct();
    const store = await newStore(wt);
    const listed = await wt.stores.spendSources.list(store.id);
    expect(listed.spendSources.map((s) => s.kind)).toEqual(['meta', 'google_ads', 'tiktok']);
    const put = await wt.stores.spendSources.put(store.id, 'tiktok', { advertiserIds: ['7001'], accessToken: 'tt-ts-secret' });
    expect(put).toMatchObject({ kind: 'tiktok', configured: true, accounts: ['7001'] });
    expect(JSON.stringify(put)).not.toContain('tt-ts-secret');
    await wt.stores.spendSources.sync(store.id, 'tiktok');
    expect((await wt.stores.spendSources.delete(store.id, 'tiktok')).configured).toBe(false);
    // The types require adAccountIds; the server refuses a body without it all the same.
    const refused = await wt.stores.spendSources.put(store.id, 'meta', { accessToken: 'x' } as never).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(WaytrackError);
    expect((refused as WaytrackError).details).toMatchObject({ field: 'adAccountIds' });
  });

  it('lists one page, and listAll walks every page (each page requested once)', async () => {
    const wt = proxied();
    const store = await newStore(wt);
    const clickIds: string[] = [];
    const conversionIds: string[] = [];
    for (let i = 0; i < 5; i++) {
      const fbclid = unique('page');
      clickIds.push((await wt.track.click({ storeId: store.id, fbclid, landingPage: landing(fbclid) })).clickId);
      const conversion = await wt.track.conversion({
        storeId: store.id,
        eventType: 'Lead',
        orderId: unique('lead'),
        eventValue: 0,
        currency: 'USD',
      });
      conversionIds.push(conversion.conversionId);
    }

    const page = await wt.clicks.list({ storeId: store.id, limit: 2 });
    expect(page.clicks).toHaveLength(2);
    expect(page.hasMore).toBe(true);
    expect(typeof page.nextCursor).toBe('string');
    const second = await wt.clicks.list({ storeId: store.id, limit: 2, cursor: page.nextCursor ?? undefined });
    expect(second.clicks.map((c) => c.clickId)).not.toContain(page.clicks[0]?.clickId);

    await control.reset();
    const allClicks = await collect(wt.clicks.listAll({ storeId: store.id, limit: 2 }));
    expect(allClicks.map((c) => c.clickId).sort()).toEqual([...clickIds].sort());
    const pageRequests = (await control.seen()).filter((r) => r.method === 'GET' && r.path.startsWith('/v1/clicks?'));
    expect(pageRequests).toHaveLength(3); // 2 + 2 + 1
    expect(pageRequests.filter((r) => r.path.includes('cursor='))).toHaveLength(2);

    const allConversions = await collect(wt.conversions.listAll({ storeId: store.id, limit: 2 }));
    expect(allConversions.map((c) => c.conversionId).sort()).toEqual([...conversionIds].sort());

    // Breaking out of the loop stops the walk: no page after the one in hand is requested.
    await control.reset();
    for await (const click of wt.clicks.listAll({ storeId: store.id, limit: 2 })) {
      expect(clickIds).toContain(click.clickId);
      break;
    }
    expect((await control.seen()).length).toBe(1);

    const dates = ['2026-01-01', '2026-01-02', '2026-01-03'];
    await wt.adSpend.upsert(store.id, { entries: dates.map((date) => ({ date, amount: 1, currency: 'USD' })) });
    const entries = await collect(wt.adSpend.listAll(store.id, { startDate: '2026-01-01', endDate: '2026-01-31', limit: 2 }));
    expect(entries.map((e) => e.date)).toEqual([...dates].reverse());

    const stores = await collect(wt.stores.listAll({ limit: 1 }));
    expect(stores.map((s) => s.id)).toContain(store.id);
    expect(new Set(stores.map((s) => s.id)).size).toBe(stores.length);
  });
});

describe('errors', () => {
  it('401: a bad key is WaytrackError unauthorized, with the request id', async () => {
    const error = await apiError(direct({ apiKey: 'wt_live_0000000000000000000000000000000000' }).stores.list());
    expect(error).toMatchObject({ name: 'WaytrackError', code: 'unauthorized', status: 401 });
    expect(error.requestId).toMatch(/^req_/);
    expect(error.message.length).toBeGreaterThan(0);
  });

  it('404: unknown ids are store_not_found / not_found', async () => {
    const wt = direct();
    expect(await apiError(wt.stores.retrieve('st_00000000000000000000000000'))).toMatchObject({
      code: 'store_not_found',
      status: 404,
    });
    expect(await apiError(wt.conversions.retrieve('conv_00000000000000000000000000'))).toMatchObject({ status: 404 });
    expect(await apiError(wt.clicks.retrieve('clk_00000000000000000000000000'))).toMatchObject({ status: 404 });
  });

  it('400: bad input carries the code and details.field', async () => {
    const wt = direct();
    const store = await newStore(wt);
    const badFbclid = await apiError(
      wt.track.click({ storeId: store.id, fbclid: 'not valid!', landingPage: 'https://shop.example.com/' }),
    );
    expect(badFbclid).toMatchObject({ code: 'invalid_fbclid', status: 400, details: { field: 'fbclid' } });

    // A caller without TypeScript can leave a required field out: the server names it.
    const missing = await apiError(
      wt.track.click({ storeId: store.id, fbclid: 'IwAR_ok' } as unknown as Parameters<typeof wt.track.click>[0]),
    );
    expect(missing).toMatchObject({ code: 'missing_required_field', status: 400, details: { field: 'landingPage' } });

    const nested = await apiError(
      wt.track.conversion({
        storeId: store.id,
        eventType: 'Purchase',
        orderId: unique('o'),
        eventValue: 1,
        currency: 'USD',
        products: [{ productId: 'p1', quantity: 0 }],
      }),
    );
    expect(nested).toMatchObject({ code: 'invalid_request', status: 400, details: { field: 'products[0].quantity' } });
    expect(
      await apiError(wt.analytics.metrics({ storeId: store.id, startDate: '2026-02-01', endDate: '2026-01-01' })),
    ).toMatchObject({
      code: 'invalid_request',
      status: 400,
    });
  });
});

describe('retries', () => {
  it('retries a 503 with the same Idempotency-Key, and gives up after maxRetries', async () => {
    const wt = proxied({ maxRetries: 2 });
    const store = await newStore(wt);
    await control.reset();
    await control.fail({ status: 503, count: 2 });
    const fbclid = unique('retry');
    const click = await wt.track.click({ storeId: store.id, fbclid, landingPage: landing(fbclid) });
    expect(click).toMatchObject({ fbclid, duplicate: false });
    const seen = await control.seen();
    expect(seen.map((r) => `${r.method} ${r.path}`)).toEqual(Array(3).fill('POST /v1/track/click'));
    expect(seen[0]?.idempotencyKey).toMatch(UUID);
    expect(new Set(seen.map((r) => r.idempotencyKey)).size).toBe(1);

    // Another call, another key.
    await control.reset();
    await wt.track.click({ storeId: store.id, fbclid: unique('next'), landingPage: landing('next') });
    expect((await control.seen())[0]?.idempotencyKey).not.toBe(seen[0]?.idempotencyKey);

    await control.reset();
    await control.fail({ status: 503, count: 3 });
    const error = await apiError(wt.stores.list());
    expect(error).toMatchObject({ status: 503, code: 'service_unavailable', requestId: 'req_proxy' });
    expect(await control.seen()).toHaveLength(3);
  });

  it('waits the Retry-After of a 429 before retrying, with the same Idempotency-Key', async () => {
    const wt = proxied();
    const store = await newStore(wt);
    await control.reset();
    await control.fail({ status: 429, count: 1, retryAfter: 1 });
    const started = Date.now();
    const fbclid = unique('limited');
    const click = await wt.track.click({ storeId: store.id, fbclid, landingPage: landing(fbclid) });
    expect(Date.now() - started).toBeGreaterThanOrEqual(950); // backoff alone is ≤ 5 ms here
    expect(click.fbclid).toBe(fbclid);
    const seen = await control.seen();
    expect(seen).toHaveLength(2);
    expect(seen[1]?.idempotencyKey).toBe(seen[0]?.idempotencyKey);
  });

  it('does not wait out a Retry-After beyond a minute: the 429 is thrown', async () => {
    await control.fail({ status: 429, count: 1, retryAfter: MAX_RETRY_AFTER_MS / 1000 + 60 });
    const error = await apiError(proxied().stores.list());
    expect(error.status).toBe(429);
    expect(await control.seen()).toHaveLength(1);
  });

  it('never retries another 4xx', async () => {
    const wt = proxied();
    const store = await newStore(wt);
    await control.reset();
    await apiError(wt.track.click({ storeId: store.id, fbclid: 'bad fbclid', landingPage: landing('x') }));
    await apiError(proxied({ apiKey: 'wt_live_0000000000000000000000000000000000' }).stores.list());
    await apiError(wt.stores.retrieve('st_00000000000000000000000000'));
    expect((await control.seen()).map((r) => r.method)).toEqual(['POST', 'GET', 'GET']);
  });

  it('retries a dropped connection with the same Idempotency-Key', async () => {
    const wt = proxied();
    const store = await newStore(wt);
    await control.reset();
    await control.fail({ status: 0, count: 1 });
    const order = { storeId: store.id, eventType: 'Purchase', orderId: unique('o'), eventValue: 5, currency: 'USD' };
    expect(await wt.track.conversion(order)).toMatchObject({ duplicate: false });
    const seen = await control.seen();
    expect(seen).toHaveLength(2);
    expect(seen[0]?.idempotencyKey).toMatch(UUID);
    expect(seen[1]?.idempotencyKey).toBe(seen[0]?.idempotencyKey);

    await control.reset();
    await control.fail({ status: 0, count: 3 });
    const error = await connectionError(wt.stores.list());
    expect(error.timedOut).toBe(false);
    expect(await control.seen()).toHaveLength(3);
  });

  it('sends an Idempotency-Key on POST and PATCH, a caller-chosen one when given, none on GET', async () => {
    const wt = proxied();
    const store = await newStore(wt);
    await wt.stores.update(store.id, { name: 'Renamed' });
    await wt.stores.retrieve(store.id);
    await control.fail({ status: 503, count: 1 });
    await wt.track.conversion(
      { storeId: store.id, eventType: 'Purchase', orderId: 'order-77', eventValue: 1, currency: 'USD' },
      { idempotencyKey: 'order-77-conversion' },
    );
    const seen = await control.seen();
    expect(seen.map((r) => r.method)).toEqual(['POST', 'PATCH', 'GET', 'POST', 'POST']);
    expect(seen[0]?.idempotencyKey).toMatch(UUID);
    expect(seen[1]?.idempotencyKey).toMatch(UUID);
    expect(seen[2]?.idempotencyKey).toBeNull();
    expect(seen.slice(3).map((r) => r.idempotencyKey)).toEqual(['order-77-conversion', 'order-77-conversion']);
  });

  it('an aborted signal stops the retries', async () => {
    await control.fail({ status: 503, count: 5, retryAfter: 5 });
    const controller = new AbortController();
    const started = Date.now();
    const listing = rejection(proxied().stores.list({}, { signal: controller.signal }));
    // Aborted once the first attempt was answered, while the client waits Retry-After's 5 s (a
    // fixed 300 ms once came before the first attempt reached the proxy on a loaded CI machine).
    while ((await control.seen()).length === 0 && Date.now() - started < 10_000) await new Promise((r) => setTimeout(r, 20));
    const abortedAt = Date.now();
    controller.abort(new Error('caller gave up'));
    const error = await listing;
    expect(error).toEqual(new Error('caller gave up'));
    expect(Date.now() - abortedAt).toBeLessThan(3000);
    expect(await control.seen()).toHaveLength(1);
  });
});

describe('connections and TLS', () => {
  it('nothing listening: WaytrackConnectionError after the retries', async () => {
    const error = await connectionError(direct({ baseUrl: env.WAYTRACK_TEST_DEAD_URL }).stores.list());
    expect(error.name).toBe('WaytrackConnectionError');
    expect(error.timedOut).toBe(false);
    expect(error.message).toMatch(/ECONNREFUSED/);
  });

  /** A TCP port that accepts connections and never says a word (not even the TLS handshake). */
  async function silentServer() {
    const sockets: net.Socket[] = [];
    const server = net.createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    return {
      // An address, not `localhost`: on a busy machine the name's lookup (libuv's thread pool) can
      // outlast the 200 ms attempt, which then ends before it ever connects and is not counted.
      url: `https://127.0.0.1:${port}/v1`,
      connections: () => sockets.length,
      close: () => {
        for (const s of sockets) s.destroy();
        server.close();
      },
    };
  }

  it('times out each attempt after timeoutMs, retries, then throws a timed-out WaytrackConnectionError', async () => {
    const silent = await silentServer();
    try {
      for (const transport of ['node:https (ca)', 'global fetch'] as const) {
        const before = silent.connections();
        const options = { baseUrl: silent.url, timeoutMs: 200, maxRetries: 1 };
        const wt = transport === 'global fetch' ? direct({ ...options, ca: undefined }) : direct(options);
        const started = Date.now();
        const error = await connectionError(wt.stores.list());
        expect(error.timedOut).toBe(true);
        expect(error.message).toContain('200 ms');
        expect(Date.now() - started).toBeGreaterThanOrEqual(390);
        // The silent server counts a connection when this process gets to accept it, which a
        // busy machine may delay past the client's giving up: wait for two, then check it is two.
        await vi.waitFor(() => expect(silent.connections() - before).toBeGreaterThanOrEqual(2), { timeout: 5000 });
        expect(silent.connections() - before).toBe(2);
      }
    } finally {
      silent.close();
    }
  });

  it('without `ca` the self-signed server is refused, once (a certificate error is not retried)', async () => {
    let calls = 0;
    const counting: FetchLike = (url, init) => {
      calls++;
      return fetch(url, init);
    };
    const error = await connectionError(direct({ ca: undefined, fetch: counting, maxRetries: 2 }).stores.list());
    expect(error.message).toMatch(/certificate/i);
    expect(calls).toBe(1);
    await connectionError(direct({ ca: undefined }).stores.list());
  });

  it('accepts the CA as a file path, PEM text or bytes', async () => {
    const pem = readFileSync(env.WAYTRACK_TEST_CA_FILE as string);
    for (const ca of [env.WAYTRACK_TEST_CA_FILE as string, pem.toString('utf8'), pem, new Uint8Array(pem)]) {
      expect((await direct({ ca }).stores.list({ limit: 1 })).hasMore).toBeTypeOf('boolean');
    }
    const missing = await rejection(direct({ ca: '/nonexistent/ca.pem' }).stores.list());
    expect(String(missing)).toContain('could not read the CA certificate file /nonexistent/ca.pem');
  });

  it('sends User-Agent waytrack-node/<version> and the bearer key', async () => {
    await proxied().stores.list();
    const [seen] = await control.seen();
    expect(seen?.userAgent).toBe(`waytrack-node/${VERSION}`);
    expect(seen?.authorization).toBe(`Bearer ${env.WAYTRACK_TEST_LIVE_KEY}`);
    const manifest = JSON.parse(readFileSync(path.join(CLIENT_DIR, 'package.json'), 'utf8')) as { version: string };
    expect(VERSION).toBe(manifest.version);
  });

  it('uses the `fetch` it is given for every request', async () => {
    // A fetch-compatible function over node:https trusting the test CA: what a caller would
    // build with undici's fetch and an Agent of their own.
    const ca = readFileSync(env.WAYTRACK_TEST_CA_FILE as string);
    const urls: string[] = [];
    const ownFetch: FetchLike = (url, init) => {
      urls.push(`${init.method} ${url}`);
      return new Promise((resolve, reject) => {
        const req = https.request(url, { method: init.method, headers: init.headers, ca, signal: init.signal }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk) => {
            body += chunk;
          });
          res.on('end', () => {
            const get = (name: string) => {
              const value = res.headers[name.toLowerCase()];
              return typeof value === 'string' ? value : null;
            };
            resolve({ status: res.statusCode ?? 0, headers: { get }, text: async () => body });
          });
        });
        req.on('error', reject);
        req.end(init.body);
      });
    };
    const wt = direct({ ca: undefined, fetch: ownFetch });
    const store = await newStore(wt);
    expect(await wt.stores.retrieve(store.id)).toEqual(store);
    expect(urls).toEqual([`POST ${env.WAYTRACK_TEST_BASE_URL}/stores`, `GET ${env.WAYTRACK_TEST_BASE_URL}/stores/${store.id}`]);
  });

  it('refuses contradictory or missing options at construction', () => {
    expect(() => new Waytrack({ apiKey: '' })).toThrow(TypeError);
    expect(() => new Waytrack({ apiKey: 'k', ca: 'x.pem', fetch })).toThrow(/either `ca` or `fetch`/);
    expect(() => new Waytrack({ apiKey: 'k', baseUrl: 'ftp://example.com/v1' })).toThrow(TypeError);
    expect(() => new Waytrack({ apiKey: 'k', maxRetries: -1 })).toThrow(/maxRetries/);
  });
});

describe('retry timing (pure)', () => {
  const policy = { maxRetries: 5, baseDelayMs: 100, maxDelayMs: 1000 };

  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-11-22T10:00:00Z');
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Sun, 22 Nov 2026 10:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Sun, 22 Nov 2026 09:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });

  it('backs off exponentially with jitter in [half, full], capped, and never below Retry-After', () => {
    expect(retryDelay(0, policy, undefined, () => 0)).toBe(50);
    expect(retryDelay(0, policy, undefined, () => 1)).toBe(100);
    expect(retryDelay(2, policy, undefined, () => 0)).toBe(200);
    expect(retryDelay(2, policy, undefined, () => 1)).toBe(400);
    expect(retryDelay(10, policy, undefined, () => 1)).toBe(1000);
    expect(retryDelay(0, policy, 2000, () => 1)).toBe(2000);
  });
});

// Engine-independent, and it rebuilds packages/client/dist in place: run in the SQLite pass only,
// so the two engine passes never rebuild it at the same time.
describe.skipIf(ENGINE === 'postgres')('the built package', () => {
  it('loads with require (CommonJS build) and import (ESM build), both export every helper, and both talk to the server', async () => {
    await run('npm', ['run', 'build', '--silent'], { cwd: CLIENT_DIR });
    const call = `new Waytrack({ apiKey: process.env.KEY, baseUrl: process.env.URL, ca: process.env.CA })
      .stores.list({ limit: 1 })
      .then((page) => console.log(JSON.stringify({ file, version: VERSION, hasMore: typeof page.hasMore, ok: new WaytrackError({ code: 'x', status: 400, message: 'm', requestId: null }) instanceof Error,
        exactId: parseJsonExact('{"id":820982911946154508}').id, verify: typeof verifyWebhook })))`;
    const childEnv = {
      ...process.env,
      KEY: env.WAYTRACK_TEST_LIVE_KEY,
      URL: env.WAYTRACK_TEST_BASE_URL,
      CA: env.WAYTRACK_TEST_CA_FILE,
    };
    // Resolved by name from inside the package (self-reference), so package.json "exports" is what is tested.
    const cjs = await run(
      process.execPath,
      [
        '-e',
        `const { Waytrack, WaytrackError, VERSION, parseJsonExact, verifyWebhook } = require('@waytrack/client'); const file = require.resolve('@waytrack/client'); ${call}`,
      ],
      { cwd: CLIENT_DIR, env: childEnv },
    );
    const esm = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { Waytrack, WaytrackError, VERSION, parseJsonExact, verifyWebhook } from '@waytrack/client'; const file = import.meta.resolve('@waytrack/client'); ${call}`,
      ],
      { cwd: CLIENT_DIR, env: childEnv },
    );
    const expected = { version: VERSION, hasMore: 'boolean', ok: true, exactId: '820982911946154508', verify: 'function' };
    expect(JSON.parse(cjs.stdout)).toEqual({ ...expected, file: path.join(CLIENT_DIR, 'dist/cjs/index.js') });
    expect(JSON.parse(esm.stdout)).toEqual({ ...expected, file: `file://${path.join(CLIENT_DIR, 'dist/esm/index.js')}` });
  }, 120_000);
});
