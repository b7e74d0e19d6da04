// The shared security suite (architecture.md, "Tests by purpose"): every /v1 route is checked for
// missing, malformed, unknown and revoked keys, missing scope, another account's ids and the
// other mode's data. A new route joins the suite by adding one row to ROUTES.
import { createHmac } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, revokeKey } from '../../src/accounts/accounts.js';
import { grants, hashApiKey, SCOPES, type Scope } from '../../src/accounts/keys.js';
import { createPublishableKey } from '../../src/accounts/publishable.js';
import { buildApp } from '../../src/app.js';
import { KEY_CACHE_TTL_MS, KeyStore } from '../../src/http/auth.js';
import {
  type ApiResponse,
  call,
  clickBody,
  conversionBody,
  createTestContext,
  expectError,
  makeStore,
  type TestContext,
} from '../helpers.js';

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/** Data written through the API with one key: a store, an attributed click and conversion, ad spend. */
interface Seed {
  storeId: string;
  fbclid: string;
  clickId: string;
  orderId: string;
  conversionId: string;
  spendId: string;
  spendDate: string;
  /** Set by the webhook rows' `prepare` (webhookSeed): an endpoint of the owner and one attempt. */
  webhookId?: string;
  deliveryId?: string;
}

/** What a tenancy or mode check is given. */
interface Probe {
  app: FastifyInstance;
  /** The key that wrote `seed`. */
  owner: string;
  /** The key that must not see `seed`'s events (another account, or the other mode). */
  outsider: string;
  seed: Seed;
}

interface RouteCase {
  method: Method;
  /** As written in api.md, for test names. */
  path: string;
  scope: Scope;
  url: (s: Seed) => string;
  body?: (s: Seed) => unknown;
  /** Status of a successful call. */
  status: 200 | 201 | 202;
  /** Brings `seed` into the state the successful call needs (run as its owner, before it). */
  prepare?: (app: FastifyInstance, owner: string, seed: Seed) => Promise<void>;
  /** Another account's key cannot read or touch `seed`. */
  otherAccount: (p: Probe) => Promise<void>;
  /** A key of the other mode does not see `seed`'s clicks, conversions, metrics or spend. */
  otherMode: (p: Probe) => Promise<void>;
  /**
   * Checks the answer to a key with every scope but `scope`, when it is not the request's 403
   * (POST /v1/track/batch: the key may still send other events; the event is that event's 403).
   */
  missingScope?: (res: ApiResponse) => void;
}

const today = () => new Date().toISOString().slice(0, 10);

async function ok(res: ApiResponse, status = 200): Promise<ApiResponse> {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
  expect(res.body.success).toBe(true);
  expect(res.headers['request-id']).toBe(res.body.meta.requestId);
  return res;
}

async function seedWith(app: FastifyInstance, key: string): Promise<Seed> {
  const storeId = await makeStore(app, key);
  const click = clickBody(storeId);
  const clickRes = await ok(await call(app, 'POST', '/v1/track/click', { key, body: click }));
  const conversion = conversionBody(storeId, { fbclid: click.fbclid });
  const conversionRes = await ok(await call(app, 'POST', '/v1/track/conversion', { key, body: conversion }));
  expect(conversionRes.body.data.attributed).toBe(true);
  const spendRes = await ok(
    await call(app, 'POST', `/v1/stores/${storeId}/ad-spend`, {
      key,
      body: { entries: [{ date: today(), amount: 25, currency: 'USD' }] },
    }),
  );
  return {
    storeId,
    fbclid: click.fbclid,
    clickId: clickRes.body.data.clickId,
    orderId: conversion.orderId,
    conversionId: conversionRes.body.data.conversionId,
    spendId: spendRes.body.data.entries[0].id,
    spendDate: today(),
  };
}

/**
 * An endpoint of `key`'s account and mode with one recorded attempt (store.updated, sent to a
 * name that never resolves, so it fails at once), for the webhook rows.
 */
async function webhookSeed(app: FastifyInstance, key: string): Promise<{ webhookId: string; deliveryId: string }> {
  const storeId = await makeStore(app, key);
  const body = { url: 'https://hooks.invalid/security', events: ['store.updated'] };
  const webhookId = (await ok(await call(app, 'POST', '/v1/webhooks', { key, body }), 201)).body.data.id as string;
  await ok(await call(app, 'PATCH', `/v1/stores/${storeId}`, { key, body: { name: 'Webhook seed' } }));
  app.webhooks.wake();
  for (let i = 0; i < 100; i++) {
    const res = await ok(await call(app, 'GET', `/v1/webhooks/${webhookId}/deliveries`, { key }));
    const first = res.body.data.deliveries[0] as { id: string } | undefined;
    if (first) return { webhookId, deliveryId: first.id };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('no delivery attempt recorded');
}

const prepareWebhook = async (app: FastifyInstance, owner: string, seed: Seed) => {
  Object.assign(seed, await webhookSeed(app, owner));
};

/** The outsider gets `code` when it names the seed's store or resource. */
const rejectsForeignId =
  (route: () => RouteCase, code: 'store_not_found' | 'not_found') =>
  async ({ app, outsider, seed }: Probe) => {
    const r = route();
    expectError(await call(app, r.method, r.url(seed), { key: outsider, body: r.body?.(seed) }), 404, code);
  };

/** GET `url` as `key` and return the ids of the listed items. */
async function listIds(app: FastifyInstance, key: string, url: string, items: string, id: string): Promise<string[]> {
  const res = await ok(await call(app, 'GET', url, { key }));
  return (res.body.data[items] as Record<string, string>[]).map((item) => item[id] as string);
}

const byPath = new Map<string, RouteCase>();
const route = (method: Method, path: string) => () => byPath.get(`${method} ${path}`) as RouteCase;

const ROUTES: RouteCase[] = [
  {
    method: 'POST',
    path: '/v1/track/click',
    scope: 'clicks:write',
    url: () => '/v1/track/click',
    body: (s) => clickBody(s.storeId, { fbclid: s.fbclid }),
    status: 200,
    otherAccount: rejectsForeignId(route('POST', '/v1/track/click'), 'store_not_found'),
    // The same fbclid in the other mode is a new click, not a duplicate of the owner's.
    async otherMode({ app, outsider, seed }) {
      const res = await ok(
        await call(app, 'POST', '/v1/track/click', { key: outsider, body: clickBody(seed.storeId, { fbclid: seed.fbclid }) }),
      );
      expect(res.body.data.duplicate).toBe(false);
      expect(res.body.data.clickId).not.toBe(seed.clickId);
    },
  },
  {
    method: 'POST',
    path: '/v1/track/identify',
    scope: 'clicks:write',
    url: () => '/v1/track/identify',
    body: (s) => ({ storeId: s.storeId, visitorId: 'wt.security', email: 'security@example.com' }),
    status: 200,
    otherAccount: rejectsForeignId(route('POST', '/v1/track/identify'), 'store_not_found'),
    // The owner's link is the owner's mode's: the same link in the other mode is a new one.
    async otherMode({ app, owner, outsider, seed }) {
      const body = { storeId: seed.storeId, visitorId: 'wt.security-mode', email: 'security@example.com' };
      await ok(await call(app, 'POST', '/v1/track/identify', { key: owner, body }));
      const res = await ok(await call(app, 'POST', '/v1/track/identify', { key: outsider, body }));
      expect(res.body.data.duplicate).toBe(false);
    },
  },
  {
    method: 'POST',
    path: '/v1/track/checkout',
    scope: 'clicks:write',
    url: () => '/v1/track/checkout',
    body: (s) => ({ storeId: s.storeId, orderId: '820982911946154508', eventValue: 59.9, currency: 'USD', fbclid: s.fbclid }),
    status: 200,
    otherAccount: rejectsForeignId(route('POST', '/v1/track/checkout'), 'store_not_found'),
    // The same order in the other mode is a new conversion, which the owner's click cannot attribute.
    async otherMode({ app, owner, outsider, seed }) {
      const body = {
        storeId: seed.storeId,
        orderId: '820982911946154599',
        eventValue: 59.9,
        currency: 'USD',
        fbclid: seed.fbclid,
      };
      const first = await ok(await call(app, 'POST', '/v1/track/checkout', { key: owner, body }));
      const res = await ok(await call(app, 'POST', '/v1/track/checkout', { key: outsider, body }));
      expect(res.body.data.duplicate).toBe(false);
      expect(res.body.data.conversionId).not.toBe(first.body.data.conversionId);
      expect(res.body.data.attributed).toBe(false);
    },
  },
  {
    method: 'POST',
    path: '/v1/track/conversion',
    scope: 'conversions:write',
    url: () => '/v1/track/conversion',
    body: (s) => conversionBody(s.storeId),
    status: 200,
    otherAccount: rejectsForeignId(route('POST', '/v1/track/conversion'), 'store_not_found'),
    // Same orderId → a new conversion; the owner's click (named by fbclid) cannot attribute it.
    async otherMode({ app, outsider, seed }) {
      const body = conversionBody(seed.storeId, { orderId: seed.orderId, fbclid: seed.fbclid });
      const res = await ok(await call(app, 'POST', '/v1/track/conversion', { key: outsider, body }));
      expect(res.body.data.duplicate).toBe(false);
      expect(res.body.data.conversionId).not.toBe(seed.conversionId);
      expect(res.body.data.attributed).toBe(false);
      expect(res.body.data.attributedTo).toBeUndefined();
    },
  },
  {
    method: 'POST',
    path: '/v1/track/batch',
    scope: 'clicks:write',
    url: () => '/v1/track/batch',
    body: (s) => ({ events: [{ type: 'click', ...clickBody(s.storeId, { fbclid: s.fbclid }) }] }),
    status: 200,
    // Another account's store is the event's store_not_found (the request itself is answered).
    async otherAccount({ app, outsider, seed }) {
      const body = { events: [{ type: 'click', ...clickBody(seed.storeId) }] };
      const res = await ok(await call(app, 'POST', '/v1/track/batch', { key: outsider, body }));
      expect(res.body.data.results[0]).toMatchObject({ status: 404, error: { code: 'store_not_found' } });
    },
    async otherMode({ app, outsider, seed }) {
      const body = { events: [{ type: 'click', ...clickBody(seed.storeId, { fbclid: seed.fbclid }) }] };
      const res = await ok(await call(app, 'POST', '/v1/track/batch', { key: outsider, body }));
      expect(res.body.data.results[0].data.duplicate).toBe(false);
      expect(res.body.data.results[0].data.clickId).not.toBe(seed.clickId);
    },
    missingScope(res) {
      expect(res.status).toBe(200);
      expect(res.body.data.results[0]).toMatchObject({
        status: 403,
        error: { code: 'forbidden', details: { requiredScope: 'clicks:write' } },
      });
    },
  },
  {
    method: 'GET',
    path: '/v1/stores',
    scope: 'stores:read',
    url: () => '/v1/stores?limit=100',
    status: 200,
    async otherAccount({ app, owner, outsider, seed }) {
      expect(await listIds(app, owner, '/v1/stores?limit=100', 'stores', 'id')).toContain(seed.storeId);
      expect(await listIds(app, outsider, '/v1/stores?limit=100', 'stores', 'id')).not.toContain(seed.storeId);
    },
    // Stores are configuration, shared by both modes.
    async otherMode({ app, outsider, seed }) {
      expect(await listIds(app, outsider, '/v1/stores?limit=100', 'stores', 'id')).toContain(seed.storeId);
    },
  },
  {
    method: 'GET',
    path: '/v1/stores/:id',
    scope: 'stores:read',
    url: (s) => `/v1/stores/${s.storeId}`,
    status: 200,
    otherAccount: rejectsForeignId(route('GET', '/v1/stores/:id'), 'store_not_found'),
    async otherMode({ app, outsider, seed }) {
      const res = await ok(await call(app, 'GET', `/v1/stores/${seed.storeId}`, { key: outsider }));
      expect(res.body.data.id).toBe(seed.storeId);
    },
  },
  {
    method: 'POST',
    path: '/v1/stores',
    scope: 'stores:write',
    url: () => '/v1/stores',
    body: () => ({ name: 'Security Suite Store', domain: 'security.example.com', platform: 'custom' }),
    status: 201,
    // A store created by one account does not exist for another.
    async otherAccount({ app, owner, outsider }) {
      const created = await ok(
        await call(app, 'POST', '/v1/stores', {
          key: owner,
          body: { name: 'Mine', domain: 'mine.example.com', platform: 'wix' },
        }),
        201,
      );
      const id = created.body.data.id as string;
      expectError(await call(app, 'GET', `/v1/stores/${id}`, { key: outsider }), 404, 'store_not_found');
      expect(await listIds(app, outsider, '/v1/stores?limit=100', 'stores', 'id')).not.toContain(id);
    },
    // A store created in one mode is visible and usable in the other.
    async otherMode({ app, owner, outsider }) {
      const created = await ok(
        await call(app, 'POST', '/v1/stores', {
          key: owner,
          body: { name: 'Shared', domain: 'shared.example.com', platform: 'wix' },
        }),
        201,
      );
      const id = created.body.data.id as string;
      expect((await ok(await call(app, 'GET', `/v1/stores/${id}`, { key: outsider }))).body.data.name).toBe('Shared');
    },
  },
  {
    method: 'PATCH',
    path: '/v1/stores/:id',
    scope: 'stores:write',
    url: (s) => `/v1/stores/${s.storeId}`,
    body: () => ({ name: 'Renamed Store' }),
    status: 200,
    // Another account's attempt fails and changes nothing.
    async otherAccount({ app, owner, outsider, seed }) {
      await rejectsForeignId(route('PATCH', '/v1/stores/:id'), 'store_not_found')({ app, owner, outsider, seed });
      const after = await ok(await call(app, 'GET', `/v1/stores/${seed.storeId}`, { key: owner }));
      expect(after.body.data.name).toBe('Acme Outdoor');
    },
    async otherMode({ app, owner, outsider, seed }) {
      await ok(await call(app, 'PATCH', `/v1/stores/${seed.storeId}`, { key: outsider, body: { name: 'Renamed Store' } }));
      expect((await ok(await call(app, 'GET', `/v1/stores/${seed.storeId}`, { key: owner }))).body.data.name).toBe(
        'Renamed Store',
      );
    },
  },
  {
    method: 'GET',
    path: '/v1/analytics/metrics',
    scope: 'analytics:read',
    url: (s) => `/v1/analytics/metrics?storeId=${s.storeId}`,
    status: 200,
    otherAccount: rejectsForeignId(route('GET', '/v1/analytics/metrics'), 'store_not_found'),
    async otherMode({ app, owner, outsider, seed }) {
      const url = `/v1/analytics/metrics?storeId=${seed.storeId}`;
      const mine = (await ok(await call(app, 'GET', url, { key: owner }))).body.data;
      expect(mine).toMatchObject({
        totalClicks: 1,
        totalConversions: 1,
        attributedConversions: 1,
        totalRevenue: 49.99,
        adSpend: 25,
      });
      const theirs = (await ok(await call(app, 'GET', url, { key: outsider }))).body.data;
      expect(theirs).toMatchObject({
        totalClicks: 0,
        totalConversions: 0,
        totalRevenue: 0,
        attributedConversions: 0,
        attributedRevenue: 0,
        conversionRate: 0,
        averageOrderValue: 0,
        adSpend: 0,
        roas: null,
      });
    },
  },
  {
    method: 'GET',
    path: '/v1/analytics/timeseries',
    scope: 'analytics:read',
    url: (s) => `/v1/analytics/timeseries?storeId=${s.storeId}`,
    status: 200,
    otherAccount: rejectsForeignId(route('GET', '/v1/analytics/timeseries'), 'store_not_found'),
    async otherMode({ app, owner, outsider, seed }) {
      const url = `/v1/analytics/timeseries?storeId=${seed.storeId}`;
      type Bucket = { clicks: number; conversions: number; revenue: number; attributedConversions: number };
      const sum = (buckets: Bucket[]) =>
        buckets.reduce(
          (t, b) => ({
            clicks: t.clicks + b.clicks,
            conversions: t.conversions + b.conversions,
            revenue: t.revenue + b.revenue,
            attributedConversions: t.attributedConversions + b.attributedConversions,
          }),
          { clicks: 0, conversions: 0, revenue: 0, attributedConversions: 0 },
        );
      const mine = (await ok(await call(app, 'GET', url, { key: owner }))).body.data;
      expect(sum(mine.buckets)).toEqual({ clicks: 1, conversions: 1, revenue: 49.99, attributedConversions: 1 });
      const theirs = (await ok(await call(app, 'GET', url, { key: outsider }))).body.data;
      expect(theirs.buckets).toHaveLength(30);
      expect(sum(theirs.buckets)).toEqual({ clicks: 0, conversions: 0, revenue: 0, attributedConversions: 0 });
    },
  },
  {
    method: 'GET',
    path: '/v1/analytics/match-quality',
    scope: 'analytics:read',
    url: (s) => `/v1/analytics/match-quality?storeId=${s.storeId}`,
    status: 200,
    otherAccount: rejectsForeignId(route('GET', '/v1/analytics/match-quality'), 'store_not_found'),
    async otherMode({ app, owner, outsider, seed }) {
      // A conversion Meta receives (the store gets Meta first), so the owner's view has an entry.
      const patch = { pixelId: '123456789012345', capiAccessToken: 'EAAsecurity', capiTestEventCode: 'TEST1' };
      await ok(await call(app, 'PATCH', `/v1/stores/${seed.storeId}`, { key: owner, body: patch }));
      const body = conversionBody(seed.storeId, { orderId: `mq-${seed.orderId}` });
      await ok(await call(app, 'POST', '/v1/track/conversion', { key: owner, body }));
      const url = `/v1/analytics/match-quality?storeId=${seed.storeId}`;
      const mine = (await ok(await call(app, 'GET', url, { key: owner }))).body.data;
      expect(mine.destinations.meta.conversions).toBe(1);
      const theirs = (await ok(await call(app, 'GET', url, { key: outsider }))).body.data;
      expect(theirs.destinations).toEqual({});
    },
  },
  {
    method: 'GET',
    path: '/v1/analytics/cohorts',
    scope: 'analytics:read',
    url: (s) => `/v1/analytics/cohorts?storeId=${s.storeId}`,
    status: 200,
    otherAccount: rejectsForeignId(route('GET', '/v1/analytics/cohorts'), 'store_not_found'),
    async otherMode({ app, owner, outsider, seed }) {
      const body = conversionBody(seed.storeId, { orderId: `co-${seed.orderId}`, customerData: { email: 'co@example.com' } });
      await ok(await call(app, 'POST', '/v1/track/conversion', { key: owner, body }));
      const url = `/v1/analytics/cohorts?storeId=${seed.storeId}`;
      const customers = (data: { cohorts: Array<{ customers: number }> }) => data.cohorts.reduce((n, c) => n + c.customers, 0);
      expect(customers((await ok(await call(app, 'GET', url, { key: owner }))).body.data)).toBe(1);
      expect(customers((await ok(await call(app, 'GET', url, { key: outsider }))).body.data)).toBe(0);
    },
  },
  {
    method: 'GET',
    path: '/v1/analytics/channels',
    scope: 'analytics:read',
    url: (s) => `/v1/analytics/channels?storeId=${s.storeId}`,
    status: 200,
    otherAccount: rejectsForeignId(route('GET', '/v1/analytics/channels'), 'store_not_found'),
    async otherMode({ app, owner, outsider, seed }) {
      const body = conversionBody(seed.storeId, { orderId: `ch-${seed.orderId}` });
      await ok(await call(app, 'POST', '/v1/track/conversion', { key: owner, body }));
      const url = `/v1/analytics/channels?storeId=${seed.storeId}`;
      const conversions = (data: { channels: Array<{ conversions: number }> }) =>
        data.channels.reduce((n, c) => n + c.conversions, 0);
      expect(conversions((await ok(await call(app, 'GET', url, { key: owner }))).body.data)).toBeGreaterThan(0);
      expect(conversions((await ok(await call(app, 'GET', url, { key: outsider }))).body.data)).toBe(0);
    },
  },
  {
    method: 'GET',
    path: '/v1/analytics/tracking-health',
    scope: 'analytics:read',
    url: (s) => `/v1/analytics/tracking-health?storeId=${s.storeId}`,
    status: 200,
    otherAccount: rejectsForeignId(route('GET', '/v1/analytics/tracking-health'), 'store_not_found'),
    async otherMode({ app, owner, outsider, seed }) {
      const entries = [
        { date: new Date().toISOString().slice(0, 10), amount: 5, currency: 'USD', campaignId: `th-${seed.orderId}` },
      ];
      await ok(await call(app, 'POST', `/v1/stores/${seed.storeId}/ad-spend`, { key: owner, body: { entries } }));
      const url = `/v1/analytics/tracking-health?storeId=${seed.storeId}`;
      const spent = (data: { items: Array<{ type: string; campaignId?: string }> }) =>
        data.items.filter((i) => i.type === 'spend_without_clicks' && i.campaignId === `th-${seed.orderId}`).length;
      expect(spent((await ok(await call(app, 'GET', url, { key: owner }))).body.data)).toBe(1);
      expect(spent((await ok(await call(app, 'GET', url, { key: outsider }))).body.data)).toBe(0);
    },
  },
  {
    method: 'GET',
    path: '/v1/analytics/breakdown',
    scope: 'analytics:read',
    url: (s) => `/v1/analytics/breakdown?storeId=${s.storeId}&by=campaign_id`,
    status: 200,
    otherAccount: rejectsForeignId(route('GET', '/v1/analytics/breakdown'), 'store_not_found'),
    async otherMode({ app, owner, outsider, seed }) {
      const url = `/v1/analytics/breakdown?storeId=${seed.storeId}&by=campaign_id&model=linear`;
      const mine = (await ok(await call(app, 'GET', url, { key: owner }))).body.data;
      expect(mine.groups).toEqual([
        {
          value: '123',
          clicks: 1,
          attributedConversions: 1,
          attributedRevenue: 49.99,
          refunds: 0,
          netRevenue: 49.99,
          conversionRate: 100,
          spend: 0,
          roas: null,
        },
      ]);
      const theirs = (await ok(await call(app, 'GET', url, { key: outsider }))).body.data;
      expect(theirs).toMatchObject({ groups: [], hasMore: false, nextCursor: null });
    },
  },
  {
    method: 'GET',
    path: '/v1/conversions',
    scope: 'conversions:read',
    url: (s) => `/v1/conversions?storeId=${s.storeId}`,
    status: 200,
    // Filtering by a foreign store is refused, and the unfiltered list never shows foreign items.
    async otherAccount({ app, owner, outsider, seed }) {
      await rejectsForeignId(route('GET', '/v1/conversions'), 'store_not_found')({ app, owner, outsider, seed });
      expect(await listIds(app, owner, '/v1/conversions?limit=100', 'conversions', 'conversionId')).toContain(seed.conversionId);
      expect(await listIds(app, outsider, '/v1/conversions?limit=100', 'conversions', 'conversionId')).not.toContain(
        seed.conversionId,
      );
    },
    async otherMode({ app, owner, outsider, seed }) {
      const url = `/v1/conversions?storeId=${seed.storeId}`;
      expect(await listIds(app, owner, url, 'conversions', 'conversionId')).toEqual([seed.conversionId]);
      expect(await listIds(app, outsider, url, 'conversions', 'conversionId')).toEqual([]);
    },
  },
  {
    method: 'GET',
    path: '/v1/conversions/:id',
    scope: 'conversions:read',
    url: (s) => `/v1/conversions/${s.conversionId}`,
    status: 200,
    otherAccount: rejectsForeignId(route('GET', '/v1/conversions/:id'), 'not_found'),
    async otherMode({ app, owner, outsider, seed }) {
      await ok(await call(app, 'GET', `/v1/conversions/${seed.conversionId}`, { key: owner }));
      expectError(await call(app, 'GET', `/v1/conversions/${seed.conversionId}`, { key: outsider }), 404, 'not_found');
    },
  },
  {
    method: 'POST',
    path: '/v1/conversions/:id/reattribute',
    scope: 'conversions:write',
    url: (s) => `/v1/conversions/${s.conversionId}/reattribute`,
    status: 200,
    otherAccount: rejectsForeignId(route('POST', '/v1/conversions/:id/reattribute'), 'not_found'),
    async otherMode({ app, owner, outsider, seed }) {
      await ok(await call(app, 'POST', `/v1/conversions/${seed.conversionId}/reattribute`, { key: owner }));
      const res = await call(app, 'POST', `/v1/conversions/${seed.conversionId}/reattribute`, { key: outsider });
      expectError(res, 404, 'not_found');
    },
  },
  {
    method: 'POST',
    path: '/v1/conversions/:id/resend',
    scope: 'conversions:write',
    url: (s) => `/v1/conversions/${s.conversionId}/resend`,
    status: 200,
    // The seed conversion was skipped (no forwarding then); configured now, it can be resent.
    async prepare(app, owner, seed) {
      const body = { pixelId: '123456789012345', capiAccessToken: 'EAAB-security-suite' };
      await ok(await call(app, 'PATCH', `/v1/stores/${seed.storeId}`, { key: owner, body }));
    },
    // Another account cannot requeue the owner's conversion, which stays as it was.
    async otherAccount({ app, owner, outsider, seed }) {
      await rejectsForeignId(route('POST', '/v1/conversions/:id/resend'), 'not_found')({ app, owner, outsider, seed });
      const after = await ok(await call(app, 'GET', `/v1/conversions/${seed.conversionId}`, { key: owner }));
      expect(after.body.data.capi).toMatchObject({ status: 'skipped', attempts: 0, reason: 'not_configured' });
    },
    async otherMode({ app, owner, outsider, seed }) {
      expectError(await call(app, 'POST', `/v1/conversions/${seed.conversionId}/resend`, { key: outsider }), 404, 'not_found');
      const after = await ok(await call(app, 'GET', `/v1/conversions/${seed.conversionId}`, { key: owner }));
      expect(after.body.data.capi).toMatchObject({ status: 'skipped', attempts: 0, reason: 'not_configured' });
    },
  },
  {
    method: 'GET',
    path: '/v1/clicks',
    scope: 'clicks:read',
    url: (s) => `/v1/clicks?storeId=${s.storeId}`,
    status: 200,
    async otherAccount({ app, owner, outsider, seed }) {
      await rejectsForeignId(route('GET', '/v1/clicks'), 'store_not_found')({ app, owner, outsider, seed });
      expect(await listIds(app, owner, '/v1/clicks?limit=100', 'clicks', 'clickId')).toContain(seed.clickId);
      expect(await listIds(app, outsider, '/v1/clicks?limit=100', 'clicks', 'clickId')).not.toContain(seed.clickId);
    },
    async otherMode({ app, owner, outsider, seed }) {
      const url = `/v1/clicks?storeId=${seed.storeId}`;
      expect(await listIds(app, owner, url, 'clicks', 'clickId')).toEqual([seed.clickId]);
      expect(await listIds(app, outsider, url, 'clicks', 'clickId')).toEqual([]);
    },
  },
  {
    method: 'GET',
    path: '/v1/clicks/:id',
    scope: 'clicks:read',
    url: (s) => `/v1/clicks/${s.clickId}`,
    status: 200,
    otherAccount: rejectsForeignId(route('GET', '/v1/clicks/:id'), 'not_found'),
    async otherMode({ app, owner, outsider, seed }) {
      await ok(await call(app, 'GET', `/v1/clicks/${seed.clickId}`, { key: owner }));
      expectError(await call(app, 'GET', `/v1/clicks/${seed.clickId}`, { key: outsider }), 404, 'not_found');
    },
  },
  {
    method: 'POST',
    path: '/v1/stores/:id/ad-spend',
    scope: 'spend:write',
    url: (s) => `/v1/stores/${s.storeId}/ad-spend`,
    body: (s) => ({ entries: [{ date: s.spendDate, amount: 99, currency: 'USD' }] }),
    status: 200,
    // Another account cannot overwrite the owner's entry.
    async otherAccount({ app, owner, outsider, seed }) {
      await rejectsForeignId(route('POST', '/v1/stores/:id/ad-spend'), 'store_not_found')({ app, owner, outsider, seed });
      const entries = (await ok(await call(app, 'GET', `/v1/stores/${seed.storeId}/ad-spend`, { key: owner }))).body.data.entries;
      expect(entries.map((e: { id: string; amount: number }) => [e.id, e.amount])).toEqual([[seed.spendId, 25]]);
    },
    // The same (date, platform, campaign) in the other mode is a separate entry.
    async otherMode({ app, owner, outsider, seed }) {
      const body = { entries: [{ date: seed.spendDate, amount: 99, currency: 'USD' }] };
      const res = await ok(await call(app, 'POST', `/v1/stores/${seed.storeId}/ad-spend`, { key: outsider, body }));
      expect(res.body.data.entries[0].id).not.toBe(seed.spendId);
      const entries = (await ok(await call(app, 'GET', `/v1/stores/${seed.storeId}/ad-spend`, { key: owner }))).body.data.entries;
      expect(entries.map((e: { id: string; amount: number }) => [e.id, e.amount])).toEqual([[seed.spendId, 25]]);
    },
  },
  {
    method: 'GET',
    path: '/v1/stores/:id/ad-spend',
    scope: 'analytics:read',
    url: (s) => `/v1/stores/${s.storeId}/ad-spend`,
    status: 200,
    otherAccount: rejectsForeignId(route('GET', '/v1/stores/:id/ad-spend'), 'store_not_found'),
    async otherMode({ app, owner, outsider, seed }) {
      const url = `/v1/stores/${seed.storeId}/ad-spend`;
      expect(await listIds(app, owner, url, 'entries', 'id')).toEqual([seed.spendId]);
      expect(await listIds(app, outsider, url, 'entries', 'id')).toEqual([]);
    },
  },
  {
    method: 'GET',
    path: '/v1/stores/:id/reconciliation',
    scope: 'analytics:read',
    url: (s) => `/v1/stores/${s.storeId}/reconciliation`,
    status: 200,
    otherAccount: rejectsForeignId(route('GET', '/v1/stores/:id/reconciliation'), 'store_not_found'),
    // The owner's conversion is counted in its own mode only.
    async otherMode({ app, owner, outsider, seed }) {
      const received = async (key: string) =>
        (await ok(await call(app, 'GET', `/v1/stores/${seed.storeId}/reconciliation`, { key }))).body.data.days.reduce(
          (sum: number, day: { received: number }) => sum + day.received,
          0,
        );
      expect(await received(owner)).toBe(1);
      expect(await received(outsider)).toBe(0);
    },
  },
  {
    method: 'POST',
    path: '/v1/track/refund',
    scope: 'conversions:write',
    url: () => '/v1/track/refund',
    body: (s) => ({ storeId: s.storeId, orderId: s.orderId, refundId: `re_${Math.random()}`, amount: 1, currency: 'USD' }),
    status: 200,
    otherAccount: rejectsForeignId(route('POST', '/v1/track/refund'), 'store_not_found'),
    // The owner's order does not exist in the other mode: nothing to refund there.
    async otherMode({ app, owner, outsider, seed }) {
      const body = { storeId: seed.storeId, orderId: seed.orderId, refundId: 're_other_mode', amount: 1, currency: 'USD' };
      expectError(await call(app, 'POST', '/v1/track/refund', { key: outsider, body }), 404, 'conversion_not_found');
      const conversion = await ok(await call(app, 'GET', `/v1/conversions/${seed.conversionId}`, { key: owner }));
      expect(conversion.body.data.refundedTotal).toBe(0);
    },
  },
  {
    method: 'GET',
    path: '/v1/stores/:id/destinations',
    scope: 'stores:read',
    url: (s) => `/v1/stores/${s.storeId}/destinations`,
    status: 200,
    otherAccount: rejectsForeignId(route('GET', '/v1/stores/:id/destinations'), 'store_not_found'),
    // Destinations are store configuration, shared by both modes.
    async otherMode({ app, outsider, seed }) {
      await ok(await call(app, 'GET', `/v1/stores/${seed.storeId}/destinations`, { key: outsider }));
    },
  },
  {
    method: 'POST',
    path: '/v1/stores/:id/destinations/:kind/test',
    scope: 'stores:write',
    url: (s) => `/v1/stores/${s.storeId}/destinations/meta/test`,
    status: 200,
    // The check reaches the app's Graph address (a port nothing listens on): an answer with ok false.
    async prepare(app, owner, seed) {
      const body = { pixelId: '98765432101', accessToken: 'meta-security-token' };
      await ok(await call(app, 'PUT', `/v1/stores/${seed.storeId}/destinations/meta`, { key: owner, body }));
    },
    otherAccount: rejectsForeignId(route('POST', '/v1/stores/:id/destinations/:kind/test'), 'store_not_found'),
    // Destinations are store configuration, shared by both modes: the other mode's key checks the same one.
    async otherMode({ app, owner, outsider, seed }) {
      const body = { pixelId: '98765432101', accessToken: 'meta-security-token' };
      await ok(await call(app, 'PUT', `/v1/stores/${seed.storeId}/destinations/meta`, { key: owner, body }));
      const res = await ok(await call(app, 'POST', `/v1/stores/${seed.storeId}/destinations/meta/test`, { key: outsider }));
      expect(res.body.data.ok).toBe(false);
      expect(JSON.stringify(res.body.data)).not.toContain('meta-security-token');
    },
  },
  // One row per documented operation: PUT and DELETE of each destination kind.
  ...(
    [
      [
        'tiktok',
        { pixelCode: 'C4SECURITY0123456789', accessToken: 'tiktok-security-token' },
        'C4SECURITY0123456789',
        'tiktok-security-token',
      ],
      ['reddit', { adAccountId: 'a2_security9', accessToken: 'reddit-security-token' }, 'a2_security9', 'reddit-security-token'],
      [
        'linkedin',
        { conversionRuleId: '987654', accessToken: 'linkedin-security-token' },
        'urn:lla:llaPartnerConversion:987654',
        'linkedin-security-token',
      ],
      ['meta', { pixelId: '98765432101', accessToken: 'meta-security-token' }, '98765432101', 'meta-security-token'],
      ['microsoft', { tagId: '343210987', accessToken: 'microsoft-security-token' }, '343210987', 'microsoft-security-token'],
      [
        'snapchat',
        { pixelId: 'snap-security-pixel', accessToken: 'snapchat-security-token' },
        'snap-security-pixel',
        'snapchat-security-token',
      ],
      [
        'pinterest',
        { adAccountId: '549755885175', accessToken: 'pinterest-security-token' },
        '549755885175',
        'pinterest-security-token',
      ],
      [
        'google_ads',
        {
          customerId: '9876543210',
          conversionAction: 'customers/9876543210/conversionActions/1',
          api: 'google_ads_api',
          developerToken: 'google-security-token',
          oauth: { clientId: 'client', clientSecret: 'google-client-secret', refreshToken: 'google-refresh' },
        },
        '9876543210',
        'google-security-token',
      ],
    ] as const
  ).flatMap(([kind, settings, mark, secret]): RouteCase[] => [
    {
      method: 'PUT',
      path: `/v1/stores/:id/destinations/${kind}`,
      scope: 'stores:write',
      url: (s) => `/v1/stores/${s.storeId}/destinations/${kind}`,
      body: () => settings,
      status: 200,
      // Another account's attempt fails and configures nothing.
      async otherAccount({ app, owner, outsider, seed }) {
        await rejectsForeignId(
          route('PUT', `/v1/stores/:id/destinations/${kind}`),
          'store_not_found',
        )({ app, owner, outsider, seed });
        const list = await ok(await call(app, 'GET', `/v1/stores/${seed.storeId}/destinations`, { key: owner }));
        expect(JSON.stringify(list.body.data)).not.toContain(mark);
      },
      async otherMode({ app, owner, outsider, seed }) {
        const body = settings;
        await ok(await call(app, 'PUT', `/v1/stores/${seed.storeId}/destinations/${kind}`, { key: outsider, body }));
        const list = await ok(await call(app, 'GET', `/v1/stores/${seed.storeId}/destinations`, { key: owner }));
        expect(JSON.stringify(list.body.data)).toContain(mark);
        expect(JSON.stringify(list.body.data)).not.toContain(secret);
      },
    },
    {
      method: 'DELETE',
      path: `/v1/stores/:id/destinations/${kind}`,
      scope: 'stores:write',
      url: (s) => `/v1/stores/${s.storeId}/destinations/${kind}`,
      status: 200,
      async prepare(app, owner, seed) {
        const body = settings;
        await ok(await call(app, 'PUT', `/v1/stores/${seed.storeId}/destinations/${kind}`, { key: owner, body }));
      },
      // Another account cannot remove the owner's destination.
      async otherAccount({ app, owner, outsider, seed }) {
        const body = settings;
        await ok(await call(app, 'PUT', `/v1/stores/${seed.storeId}/destinations/${kind}`, { key: owner, body }));
        await rejectsForeignId(
          route('DELETE', `/v1/stores/:id/destinations/${kind}`),
          'store_not_found',
        )({
          app,
          owner,
          outsider,
          seed,
        });
        const list = await ok(await call(app, 'GET', `/v1/stores/${seed.storeId}/destinations`, { key: owner }));
        expect(JSON.stringify(list.body.data)).toContain(mark);
      },
      async otherMode({ app, owner, outsider, seed }) {
        const body = settings;
        await ok(await call(app, 'PUT', `/v1/stores/${seed.storeId}/destinations/${kind}`, { key: owner, body }));
        await ok(await call(app, 'DELETE', `/v1/stores/${seed.storeId}/destinations/${kind}`, { key: outsider }));
        const list = await ok(await call(app, 'GET', `/v1/stores/${seed.storeId}/destinations`, { key: owner }));
        expect(JSON.stringify(list.body.data)).not.toContain(mark);
      },
    },
  ]),
  // Spend sources (api.md §11): store configuration, shared by both modes, like destinations.
  {
    method: 'GET',
    path: '/v1/stores/:id/spend-sources',
    scope: 'stores:read',
    url: (s) => `/v1/stores/${s.storeId}/spend-sources`,
    status: 200,
    otherAccount: rejectsForeignId(route('GET', '/v1/stores/:id/spend-sources'), 'store_not_found'),
    async otherMode({ app, outsider, seed }) {
      await ok(await call(app, 'GET', `/v1/stores/${seed.storeId}/spend-sources`, { key: outsider }));
    },
  },
  ...(
    [
      [
        'meta',
        { adAccountIds: ['act_90017'], accessToken: 'meta-spend-security-token' },
        'act_90017',
        'meta-spend-security-token',
      ],
      [
        'tiktok',
        { advertiserIds: ['90018'], accessToken: 'tiktok-spend-security-token' },
        '90018',
        'tiktok-spend-security-token',
      ],
      [
        'google_ads',
        {
          customerIds: ['9001900190'],
          developerToken: 'google-spend-security-token',
          oauth: { clientId: 'client', clientSecret: 'google-spend-secret', refreshToken: 'google-spend-refresh' },
        },
        '9001900190',
        'google-spend-security-token',
      ],
    ] as const
  ).map(
    ([kind, settings, mark, secret]): RouteCase => ({
      method: 'PUT',
      path: `/v1/stores/:id/spend-sources/${kind}`,
      scope: 'stores:write',
      url: (s) => `/v1/stores/${s.storeId}/spend-sources/${kind}`,
      body: () => settings,
      status: 200,
      async otherAccount({ app, owner, outsider, seed }) {
        await rejectsForeignId(
          route('PUT', `/v1/stores/:id/spend-sources/${kind}`),
          'store_not_found',
        )({ app, owner, outsider, seed });
        const list = await ok(await call(app, 'GET', `/v1/stores/${seed.storeId}/spend-sources`, { key: owner }));
        expect(JSON.stringify(list.body.data)).not.toContain(mark);
      },
      async otherMode({ app, owner, outsider, seed }) {
        await ok(await call(app, 'PUT', `/v1/stores/${seed.storeId}/spend-sources/${kind}`, { key: outsider, body: settings }));
        const list = await ok(await call(app, 'GET', `/v1/stores/${seed.storeId}/spend-sources`, { key: owner }));
        expect(JSON.stringify(list.body.data)).toContain(mark);
        expect(JSON.stringify(list.body.data)).not.toContain(secret);
      },
    }),
  ),
  {
    method: 'DELETE',
    path: '/v1/stores/:id/spend-sources/:kind',
    scope: 'stores:write',
    url: (s) => `/v1/stores/${s.storeId}/spend-sources/meta`,
    status: 200,
    async prepare(app, owner, seed) {
      const body = { adAccountIds: ['act_90017'], accessToken: 'meta-spend-security-token' };
      await ok(await call(app, 'PUT', `/v1/stores/${seed.storeId}/spend-sources/meta`, { key: owner, body }));
    },
    async otherAccount({ app, owner, outsider, seed }) {
      const body = { adAccountIds: ['act_90017'], accessToken: 'meta-spend-security-token' };
      await ok(await call(app, 'PUT', `/v1/stores/${seed.storeId}/spend-sources/meta`, { key: owner, body }));
      await rejectsForeignId(
        route('DELETE', '/v1/stores/:id/spend-sources/:kind'),
        'store_not_found',
      )({ app, owner, outsider, seed });
      const list = await ok(await call(app, 'GET', `/v1/stores/${seed.storeId}/spend-sources`, { key: owner }));
      expect(JSON.stringify(list.body.data)).toContain('act_90017');
    },
    async otherMode({ app, owner, outsider, seed }) {
      const body = { adAccountIds: ['act_90017'], accessToken: 'meta-spend-security-token' };
      await ok(await call(app, 'PUT', `/v1/stores/${seed.storeId}/spend-sources/meta`, { key: owner, body }));
      await ok(await call(app, 'DELETE', `/v1/stores/${seed.storeId}/spend-sources/meta`, { key: outsider }));
      const list = await ok(await call(app, 'GET', `/v1/stores/${seed.storeId}/spend-sources`, { key: owner }));
      expect(JSON.stringify(list.body.data)).not.toContain('act_90017');
    },
  },
  {
    method: 'POST',
    path: '/v1/stores/:id/spend-sources/:kind/sync',
    scope: 'stores:write',
    url: (s) => `/v1/stores/${s.storeId}/spend-sources/meta/sync`,
    status: 202,
    async prepare(app, owner, seed) {
      const body = { adAccountIds: ['act_90017'], accessToken: 'meta-spend-security-token' };
      await ok(await call(app, 'PUT', `/v1/stores/${seed.storeId}/spend-sources/meta`, { key: owner, body }));
    },
    otherAccount: rejectsForeignId(route('POST', '/v1/stores/:id/spend-sources/:kind/sync'), 'store_not_found'),
    async otherMode({ app, owner, outsider, seed }) {
      const body = { adAccountIds: ['act_90017'], accessToken: 'meta-spend-security-token' };
      await ok(await call(app, 'PUT', `/v1/stores/${seed.storeId}/spend-sources/meta`, { key: owner, body }));
      const res = await ok(await call(app, 'POST', `/v1/stores/${seed.storeId}/spend-sources/meta/sync`, { key: outsider }), 202);
      expect(JSON.stringify(res.body.data)).not.toContain('meta-spend-security-token');
    },
  },
  {
    method: 'POST',
    path: '/v1/webhooks',
    scope: 'webhooks:write',
    url: () => '/v1/webhooks',
    body: () => ({ url: 'https://hooks.invalid/created', events: ['refund.recorded'] }),
    status: 201,
    // An endpoint belongs to the account of the key that made it: the owner's list does not show it.
    async otherAccount({ app, owner, outsider }) {
      const body = { url: 'https://hooks.invalid/outsider', events: ['refund.recorded'] };
      const made = (await ok(await call(app, 'POST', '/v1/webhooks', { key: outsider, body }), 201)).body.data.id;
      expect(await listIds(app, owner, '/v1/webhooks?limit=100', 'webhooks', 'id')).not.toContain(made);
    },
    async otherMode({ app, owner, outsider }) {
      const body = { url: 'https://hooks.invalid/other-mode', events: ['refund.recorded'] };
      const made = (await ok(await call(app, 'POST', '/v1/webhooks', { key: outsider, body }), 201)).body.data.id;
      expect(await listIds(app, owner, '/v1/webhooks?limit=100', 'webhooks', 'id')).not.toContain(made);
    },
  },
  {
    method: 'GET',
    path: '/v1/webhooks',
    scope: 'webhooks:read',
    url: () => '/v1/webhooks',
    status: 200,
    prepare: prepareWebhook,
    async otherAccount({ app, owner, outsider }) {
      const { webhookId } = await webhookSeed(app, owner);
      expect(await listIds(app, owner, '/v1/webhooks?limit=100', 'webhooks', 'id')).toContain(webhookId);
      expect(await listIds(app, outsider, '/v1/webhooks?limit=100', 'webhooks', 'id')).not.toContain(webhookId);
    },
    async otherMode({ app, owner, outsider }) {
      const { webhookId } = await webhookSeed(app, owner);
      expect(await listIds(app, outsider, '/v1/webhooks?limit=100', 'webhooks', 'id')).not.toContain(webhookId);
    },
    // webhooks:write also lets a key list (api.md §9): every scope but webhooks:read still lists.
    missingScope: (res) => expect(res.status).toBe(200),
  },
  {
    method: 'DELETE',
    path: '/v1/webhooks/:id',
    scope: 'webhooks:write',
    url: (s) => `/v1/webhooks/${s.webhookId}`,
    status: 200,
    prepare: prepareWebhook,
    async otherAccount({ app, owner, outsider }) {
      const { webhookId } = await webhookSeed(app, owner);
      expectError(await call(app, 'DELETE', `/v1/webhooks/${webhookId}`, { key: outsider }), 404, 'not_found');
      expect(await listIds(app, owner, '/v1/webhooks?limit=100', 'webhooks', 'id')).toContain(webhookId);
    },
    async otherMode({ app, owner, outsider }) {
      const { webhookId } = await webhookSeed(app, owner);
      expectError(await call(app, 'DELETE', `/v1/webhooks/${webhookId}`, { key: outsider }), 404, 'not_found');
      expect(await listIds(app, owner, '/v1/webhooks?limit=100', 'webhooks', 'id')).toContain(webhookId);
    },
  },
  {
    method: 'PATCH',
    path: '/v1/webhooks/:id',
    scope: 'webhooks:write',
    url: (s) => `/v1/webhooks/${s.webhookId}`,
    body: () => ({ enabled: false }),
    status: 200,
    prepare: prepareWebhook,
    async otherAccount({ app, owner, outsider }) {
      const { webhookId } = await webhookSeed(app, owner);
      const url = `/v1/webhooks/${webhookId}`;
      expectError(await call(app, 'PATCH', url, { key: outsider, body: { enabled: false } }), 404, 'not_found');
      const list = await ok(await call(app, 'GET', '/v1/webhooks?limit=100', { key: owner }));
      expect(list.body.data.webhooks.find((w: { id: string }) => w.id === webhookId).status).toBe('enabled');
    },
    async otherMode({ app, owner, outsider }) {
      const { webhookId } = await webhookSeed(app, owner);
      const url = `/v1/webhooks/${webhookId}`;
      expectError(await call(app, 'PATCH', url, { key: outsider, body: { enabled: false } }), 404, 'not_found');
    },
  },
  {
    method: 'GET',
    path: '/v1/webhooks/:id/deliveries',
    scope: 'webhooks:read',
    url: (s) => `/v1/webhooks/${s.webhookId}/deliveries`,
    status: 200,
    prepare: prepareWebhook,
    async otherAccount({ app, owner, outsider }) {
      const { webhookId } = await webhookSeed(app, owner);
      expectError(await call(app, 'GET', `/v1/webhooks/${webhookId}/deliveries`, { key: outsider }), 404, 'not_found');
    },
    async otherMode({ app, owner, outsider }) {
      const { webhookId } = await webhookSeed(app, owner);
      expectError(await call(app, 'GET', `/v1/webhooks/${webhookId}/deliveries`, { key: outsider }), 404, 'not_found');
    },
    // webhooks:write also lets a key list: past the scope check (to the lookup of an endpoint it does not have).
    missingScope: (res) => expect(res.body.error?.code).not.toBe('forbidden'),
  },
  {
    method: 'POST',
    path: '/v1/webhooks/:id/deliveries/:deliveryId/resend',
    scope: 'webhooks:write',
    url: (s) => `/v1/webhooks/${s.webhookId}/deliveries/${s.deliveryId}/resend`,
    status: 201,
    prepare: prepareWebhook,
    async otherAccount({ app, owner, outsider }) {
      const { webhookId, deliveryId } = await webhookSeed(app, owner);
      const url = `/v1/webhooks/${webhookId}/deliveries/${deliveryId}/resend`;
      expectError(await call(app, 'POST', url, { key: outsider }), 404, 'not_found');
    },
    async otherMode({ app, owner, outsider }) {
      const { webhookId, deliveryId } = await webhookSeed(app, owner);
      const url = `/v1/webhooks/${webhookId}/deliveries/${deliveryId}/resend`;
      expectError(await call(app, 'POST', url, { key: outsider }), 404, 'not_found');
    },
  },
];
for (const r of ROUTES) byPath.set(`${r.method} ${r.path}`, r);

const WELL_FORMED_UNKNOWN_KEY = `wt_live_${'A1b2C3d4E5'.repeat(4)}`;
const WELL_FORMED_UNKNOWN_PUBLISHABLE_KEY = `wt_pk_live_${'A1b2C3d4E5'.repeat(4)}`;

describe('every /v1 route, each with two accounts of its own', () => {
  // One app and database for every row: each row's accounts are new (ctx.withNewAccounts), and
  // what the rows write is as far apart as the data of two customers, which is what these tests
  // check. A database and an app per row cost ~0.3 s each, 60 times over, on PostgreSQL.
  let shared: TestContext;
  beforeAll(async () => {
    shared = await createTestContext();
  });
  afterAll(async () => shared?.close());

  describe.each(ROUTES)('$method $path', (r) => {
    let ctx: TestContext;
    /**
     * Data of account a's live key that requests refused before their handler runs (no key, a bad,
     * unknown or revoked key, a missing scope) name: such a request changes nothing, so they share it.
     */
    let refusedSeed: Seed;
    beforeAll(async () => {
      ctx = await shared.withNewAccounts();
      refusedSeed = await seedWith(ctx.app, ctx.a.live);
    });

    /** Calls the route as `r` describes it, against data the account a live key wrote. */
    async function send(headers: Record<string, string>, seed = refusedSeed): Promise<ApiResponse> {
      return call(ctx.app, r.method, r.url(seed), { headers, body: r.body?.(seed) });
    }

    it('succeeds with a key holding exactly its scope', async () => {
      const seed = await seedWith(ctx.app, ctx.a.live);
      await r.prepare?.(ctx.app, ctx.a.live, seed);
      const key = await ctx.keyWithScopes([r.scope]);
      const res = await call(ctx.app, r.method, r.url(seed), { key, body: r.body?.(seed) });
      await ok(res, r.status);
    });

    it('401 without an Authorization header', async () => {
      const error = expectError(await send({}), 401, 'unauthorized');
      expect(error.message).toMatch(/Authorization/);
    });

    it.each([
      ['Basic', `Basic ${Buffer.from('user:pass').toString('base64')}`],
      ['Token', `Token ${WELL_FORMED_UNKNOWN_KEY}`],
      ['bare key', WELL_FORMED_UNKNOWN_KEY],
      ['empty Bearer', 'Bearer '],
    ])('401 with a non-Bearer Authorization header (%s)', async (_name, authorization) => {
      expectError(await send({ authorization }), 401, 'unauthorized');
    });

    it.each([
      ['not a key', 'not-a-key'],
      ['too short a secret', 'wt_live_abc123'],
      ['unknown mode', `wt_prod_${'A1b2C3d4E5'.repeat(4)}`],
      ['non-base62 secret', `wt_live_${'A1b2C3d4E5'.repeat(3)}-_-_-_`],
      ['publishable, too short a secret', 'wt_pk_live_abc123'],
      ['publishable, unknown mode', `wt_pk_prod_${'A1b2C3d4E5'.repeat(4)}`],
    ])('401 with a malformed key (%s)', async (_name, key) => {
      expectError(await send({ authorization: `Bearer ${key}` }), 401, 'unauthorized');
    });

    it('401 with a well-formed unknown key', async () => {
      expectError(await send({ authorization: `Bearer ${WELL_FORMED_UNKNOWN_KEY}` }), 401, 'unauthorized');
    });

    it('401 with a well-formed unknown publishable key', async () => {
      const headers = { authorization: `Bearer ${WELL_FORMED_UNKNOWN_PUBLISHABLE_KEY}`, origin: 'https://shop.acme.test' };
      expectError(await send(headers), 401, 'unauthorized');
    });

    // api.md §6, §13: a publishable key (made for web pages) works on POST /v1/track/click,
    // /v1/track/identify and /v1/track/checkout only, and only from its store's pages; everywhere else it is refused even from those pages.
    it("a publishable key of the seed's store: 403 unless the tag's POST from the store's page", async () => {
      const seed = await seedWith(ctx.app, ctx.a.live);
      const { key } = await createPublishableKey(ctx.database, ctx.a.accountId, { storeId: seed.storeId, mode: 'live' });
      const storePage = { authorization: `Bearer ${key}`, origin: 'https://shop.acme.test' };
      if (r.path === '/v1/track/click' || r.path === '/v1/track/identify' || r.path === '/v1/track/checkout') {
        // The tag's body: the IP comes from the connection, not from the page.
        const { ipAddress: _ip, ...body } = (r.body?.(seed) ?? {}) as Record<string, unknown>;
        await ok(await call(ctx.app, r.method, r.url(seed), { headers: storePage, body }));
        const error = expectError(
          await call(ctx.app, r.method, r.url(seed), { headers: { ...storePage, origin: 'https://evil.example' }, body }),
          403,
          'forbidden',
        );
        expect(error.details).toEqual({ reason: 'origin_not_allowed' });
      } else {
        const error = expectError(await send(storePage, seed), 403, 'forbidden');
        expect(error.details).toEqual({ reason: 'publishable_key_not_allowed' });
      }
    });

    it('401 with another key of the right account mangled in one character', async () => {
      const last = ctx.a.live.at(-1) === 'a' ? 'b' : 'a';
      expectError(await send({ authorization: `Bearer ${ctx.a.live.slice(0, -1)}${last}` }), 401, 'unauthorized');
    });

    it('401 with a revoked key', async () => {
      // Revoked before its first use, so no cached lookup can hide the revocation.
      const { keyId, key } = await createKey(ctx.database, { accountId: ctx.a.accountId, mode: 'live', scopes: ['*'] });
      await revokeKey(ctx.database, keyId);
      const error = expectError(await send({ authorization: `Bearer ${key}` }), 401, 'unauthorized');
      expect(error.message).toMatch(/revoked/);
    });

    it(`403 forbidden with details.requiredScope for a key lacking ${r.scope}`, async () => {
      const key = await ctx.keyWithScopes(SCOPES.filter((s) => s !== r.scope));
      const res = await send({ authorization: `Bearer ${key}` });
      if (r.missingScope) return r.missingScope(res);
      const error = expectError(res, 403, 'forbidden');
      expect(error.details).toEqual({ requiredScope: r.scope });
    });

    // api.md §1: every scope 403 names details.requiredScope — where one of several scopes would do
    // (POST /v1/track/batch, the webhook lists), the first, with details.requiredScopes beside it —
    // whether the request or one batch event is refused. Keys holding one other scope each; a scope
    // that also opens the route reaches its handler with data it cannot change.
    it('every forbidden answer names details.requiredScope, a scope the key lacks', async () => {
      const seen: string[] = [];
      for (const held of SCOPES.filter((s) => s !== r.scope)) {
        const res = await send({ authorization: `Bearer ${await ctx.keyWithScopes([held])}` });
        const entries = (res.status === 200 ? (res.body.data?.results ?? []) : [res.body]) as Array<{
          error?: { code: string; details?: { requiredScope?: Scope; requiredScopes?: Scope[] } };
        }>;
        for (const { error } of entries) {
          if (error?.code !== 'forbidden') continue;
          const { requiredScope, requiredScopes } = error.details ?? {};
          expect(SCOPES, `${held}: ${JSON.stringify(error)}`).toContain(requiredScope);
          expect(grants([held], requiredScope as Scope), held).toBe(false);
          if (requiredScopes) expect(requiredScopes[0], held).toBe(requiredScope);
          seen.push(held);
        }
      }
      expect(seen.length).toBeGreaterThan(0);
    });

    it("another account's key cannot see or touch the data", async () => {
      const seed = await seedWith(ctx.app, ctx.b.live);
      await r.otherAccount({ app: ctx.app, owner: ctx.b.live, outsider: ctx.a.live, seed });
    });

    it('the same account in the other mode cannot see the data (live → test and test → live)', async () => {
      for (const [owner, outsider] of [
        [ctx.a.live, ctx.a.test],
        [ctx.a.test, ctx.a.live],
      ] as const) {
        const seed = await seedWith(ctx.app, owner);
        await r.otherMode({ app: ctx.app, owner, outsider, seed });
      }
    });
  });
});

/**
 * Routes a shop calls without an API key (api.md §9): the store's webhook secret authenticates
 * them by a signature over the raw body. Instead of the key checks above: no signature, a wrong
 * one, a key instead of one, another store's or another account's secret → 401, nothing stored.
 */
interface SignedRoute {
  path: string;
  url: (storeId: string) => string;
  header: string;
  /** The store field holding the secret. */
  secretField: 'shopifyWebhookSecret' | 'woocommerceWebhookSecret';
  /** Headers and body of a paid order with this id. */
  delivery: (orderId: number) => { headers: Record<string, string>; raw: string };
}

const SIGNED_ROUTES: SignedRoute[] = [
  {
    path: '/v1/webhooks/shopify/:storeId',
    url: (id) => `/v1/webhooks/shopify/${id}`,
    header: 'x-shopify-hmac-sha256',
    secretField: 'shopifyWebhookSecret',
    delivery: (orderId) => ({
      headers: { 'content-type': 'application/json', 'x-shopify-topic': 'orders/paid', 'x-shopify-webhook-id': `w${orderId}` },
      raw: JSON.stringify({ id: orderId, total_price: '10.00', currency: 'USD', processed_at: new Date().toISOString() }),
    }),
  },
  {
    path: '/v1/webhooks/woocommerce/:storeId',
    url: (id) => `/v1/webhooks/woocommerce/${id}`,
    header: 'x-wc-webhook-signature',
    secretField: 'woocommerceWebhookSecret',
    delivery: (orderId) => ({
      headers: {
        'content-type': 'application/json',
        'x-wc-webhook-topic': 'order.updated',
        'x-wc-webhook-delivery-id': `d${orderId}`,
      },
      raw: JSON.stringify({ id: orderId, status: 'processing', total: '10.00', currency: 'USD' }),
    }),
  },
];

describe.each(SIGNED_ROUTES)('POST $path (signed by the store’s secret, no key)', (r) => {
  let ctx: TestContext;
  const hmac = (raw: string, secret: string) => createHmac('sha256', secret).update(raw).digest('base64');
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(async () => ctx.close());

  async function storedOrders(orderId: number): Promise<number> {
    const rows = await ctx.database.read.selectFrom('conversions').select('id').where('order_id', '=', String(orderId)).execute();
    return rows.length;
  }

  it('succeeds signed with the store’s secret', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live, { [r.secretField]: 'secret-a' });
    const { headers, raw } = r.delivery(101);
    const res = await call(ctx.app, 'POST', r.url(storeId), {
      rawBody: raw,
      headers: { ...headers, [r.header]: hmac(raw, 'secret-a') },
    });
    await ok(res);
    expect(await storedOrders(101)).toBe(1);
  });

  it('401 and nothing stored: no signature, a wrong one, an API key instead, another store’s or account’s secret', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live, { [r.secretField]: 'secret-a' });
    const otherStore = await makeStore(ctx.app, ctx.a.live, { [r.secretField]: 'secret-other' });
    const otherAccountStore = await makeStore(ctx.app, ctx.b.live, { [r.secretField]: 'secret-b' });
    const { headers, raw } = r.delivery(202);
    const attempts: Array<[string, Record<string, string>]> = [
      [storeId, {}],
      [storeId, { authorization: `Bearer ${ctx.a.live}` }],
      [storeId, { [r.header]: hmac(raw, 'secret-other') }],
      [storeId, { [r.header]: hmac(`${raw} `, 'secret-a') }],
      [otherStore, { [r.header]: hmac(raw, 'secret-a') }],
      [otherAccountStore, { [r.header]: hmac(raw, 'secret-a') }],
      ['st_does_not_exist', { [r.header]: hmac(raw, 'secret-a') }],
    ];
    for (const [id, extra] of attempts) {
      expectError(
        await call(ctx.app, 'POST', r.url(id), { rawBody: raw, headers: { ...headers, ...extra } }),
        401,
        'unauthorized',
      );
    }
    expect(await storedOrders(202)).toBe(0);
    const deliveries = await ctx.database.read.selectFrom('shop_webhook_deliveries').select('delivery_id').execute();
    // A delivery is keyed by `<topic>:<resource id>:<body hash>` (shops/webhooks.ts eventKey).
    expect(deliveries.filter((d) => d.delivery_id.split(':')[1] === '202')).toEqual([]);
  });

  it('an inactive store is store_not_found even when signed', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live, { [r.secretField]: 'secret-a' });
    await call(ctx.app, 'PATCH', `/v1/stores/${storeId}`, { key: ctx.a.live, body: { status: 'inactive' } });
    const { headers, raw } = r.delivery(303);
    const signed = { ...headers, [r.header]: hmac(raw, 'secret-a') };
    expectError(await call(ctx.app, 'POST', r.url(storeId), { rawBody: raw, headers: signed }), 404, 'store_not_found');
    expect(await storedOrders(303)).toBe(0);
  });
});

describe('the suite covers every /v1 route of the OpenAPI document', () => {
  it('has one row per documented operation', async () => {
    const ctx = await createTestContext();
    try {
      const doc = (await call(ctx.app, 'GET', '/v1/openapi.json')).body;
      const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
        .filter(([path]) => path.startsWith('/v1/'))
        .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`));
      const rows = [...ROUTES.map((x) => `${x.method} ${x.path}`), ...SIGNED_ROUTES.map((x) => `POST ${x.path}`)];
      expect(rows.sort()).toEqual(documented.sort());
    } finally {
      await ctx.close();
    }
  });
});

describe('key revocation reaches a running app within the cache TTL', () => {
  /** A KeyStore whose clock the test moves, so the TTL is crossed without sleeping. */
  class ClockedKeyStore extends KeyStore {
    now = Date.now();
    override lookupHash(hash: string) {
      return super.lookupHash(hash, this.now);
    }
  }

  it('the cache TTL is inside the 5 s api.md allows', () => {
    expect(KEY_CACHE_TTL_MS).toBeGreaterThan(0);
    expect(KEY_CACHE_TTL_MS).toBeLessThanOrEqual(5_000);
  });

  it('a key revoked after use is 401 once the TTL has passed', async () => {
    const ctx = await createTestContext();
    const keys = new ClockedKeyStore(ctx.database);
    const app = await buildApp({ config: ctx.config, database: ctx.database, logger: false, keys });
    try {
      const { keyId, key } = await createKey(ctx.database, { accountId: ctx.a.accountId, mode: 'live', scopes: ['*'] });
      await ok(await call(app, 'GET', '/v1/stores', { key }));
      await revokeKey(ctx.database, keyId);
      keys.now += KEY_CACHE_TTL_MS + 1;
      expectError(await call(app, 'GET', '/v1/stores', { key }), 401, 'unauthorized');
    } finally {
      await app.close();
      await ctx.close();
    }
  });

  it('the key store keeps only the SHA-256 of a key', async () => {
    const ctx = await createTestContext();
    try {
      const rows = await ctx.database.read.selectFrom('api_keys').selectAll().execute();
      const stored = JSON.stringify(rows);
      expect(stored).not.toContain(ctx.a.live);
      expect(stored).not.toContain(ctx.a.test);
      expect(stored).toContain(hashApiKey(ctx.a.live));
    } finally {
      await ctx.close();
    }
  });
});
