// The dashboard's security suite (api.md §5): every /dashboard/api route refuses a request
// without a session, with an ended or forged one, with a Bearer key, and (for changes) without
// the CSRF token or from another site; another account's ids are not found; the session cookie
// is not accepted on /v1. A new dashboard route joins the suite by adding one row to ROUTES.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../src/accounts/accounts.js';
import { SESSION_COOKIE } from '../../src/dashboard/cookie.js';
import { REUSED_ROUTES } from '../../src/dashboard/reused-routes.js';
import { IDLE_TIMEOUT_MS } from '../../src/dashboard/sessions.js';
import { decide, type RateLimiter } from '../../src/http/rate-limit.js';
import { call, clickBody, conversionBody, createTestContext, expectError, makeStore, type TestContext } from '../helpers.js';
import { Receiver } from '../webhooks/receiver.js';
import { type DashboardSession, dashboardCall, signIn, withPassword } from './session.js';

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/** The owner's data, written through /v1 with the owner's live key. */
interface Seed {
  storeId: string;
  conversionId: string;
  /** A webhook endpoint of the owner's, and one delivery attempt to it. */
  webhookId: string;
  deliveryId: string;
}

interface RouteCase {
  method: Method;
  path: string;
  url: (s: Seed) => string;
  body?: (s: Seed) => unknown;
  status: 200 | 201 | 202;
  /** Another account's signed-in owner: not found, or not listed. */
  otherAccount: (app: FastifyInstance, outsider: DashboardSession, seed: Seed) => Promise<void>;
}

const notFound =
  (code: 'store_not_found' | 'not_found') =>
  (r: () => RouteCase) =>
  async (app: FastifyInstance, outsider: DashboardSession, seed: Seed) => {
    const c = r();
    expectError(await dashboardCall(app, c.method, c.url(seed), { session: outsider, body: c.body?.(seed) }), 404, code);
  };

async function listed(app: FastifyInstance, session: DashboardSession, url: string, items: string, id: string) {
  const res = await dashboardCall(app, 'GET', url, { session });
  expect(res.status).toBe(200);
  return (res.body.data[items] as Record<string, string>[]).map((item) => item[id]);
}

const byKey = new Map<string, RouteCase>();
const route = (method: Method, path: string) => () => byKey.get(`${method} ${path}`) as RouteCase;

let ctx: TestContext;
/** A key of the owner's for the revoke case, made fresh for each call that should succeed. */
let revocable: () => Promise<string>;
/** A webhook endpoint of the owner's for the delete case, made fresh for each call that should succeed. */
let deletable: () => Promise<string>;
let receiver: Receiver;

const ROUTES: RouteCase[] = [
  {
    method: 'GET',
    path: '/keys',
    url: () => '/dashboard/api/keys',
    status: 200,
    async otherAccount(app, outsider) {
      const keys = await listed(app, outsider, '/dashboard/api/keys', 'keys', 'keyId');
      const own = await ctx.database.read.selectFrom('api_keys').select('id').where('account_id', '=', ctx.a.accountId).execute();
      expect(keys.length).toBeGreaterThan(0);
      for (const { id } of own) expect(keys).not.toContain(id);
    },
  },
  {
    method: 'POST',
    path: '/keys',
    url: () => '/dashboard/api/keys',
    body: () => ({ name: 'Suite key', mode: 'test', scopes: ['clicks:write'] }),
    status: 201,
    // The key belongs to whoever created it.
    async otherAccount(app, outsider) {
      const res = await dashboardCall(app, 'POST', '/dashboard/api/keys', {
        session: outsider,
        body: { name: 'Outsider key', mode: 'live', scopes: ['*'] },
      });
      const row = await ctx.database.read
        .selectFrom('api_keys')
        .select('account_id')
        .where('id', '=', res.body.data.keyId)
        .executeTakeFirst();
      expect(row?.account_id).toBe(ctx.b.accountId);
    },
  },
  {
    method: 'POST',
    path: '/keys/:id/revoke',
    url: () => '/dashboard/api/keys/PLACEHOLDER/revoke',
    status: 200,
    async otherAccount(app, outsider) {
      const keyId = await revocable();
      expectError(
        await dashboardCall(app, 'POST', `/dashboard/api/keys/${keyId}/revoke`, { session: outsider }),
        404,
        'not_found',
      );
      const row = await ctx.database.read.selectFrom('api_keys').select('revoked_at').where('id', '=', keyId).executeTakeFirst();
      expect(row?.revoked_at).toBeNull();
    },
  },
  {
    method: 'GET',
    path: '/stores',
    url: () => '/dashboard/api/stores?limit=100',
    status: 200,
    async otherAccount(app, outsider, seed) {
      expect(await listed(app, outsider, '/dashboard/api/stores?limit=100', 'stores', 'id')).not.toContain(seed.storeId);
    },
  },
  {
    method: 'GET',
    path: '/stores/:id',
    url: (s) => `/dashboard/api/stores/${s.storeId}`,
    status: 200,
    otherAccount: notFound('store_not_found')(route('GET', '/stores/:id')),
  },
  {
    method: 'POST',
    path: '/stores',
    url: () => '/dashboard/api/stores',
    body: () => ({ name: 'Dashboard store', domain: 'dash.example.com', platform: 'custom' }),
    status: 201,
    async otherAccount(app, outsider, seed) {
      const res = await dashboardCall(app, 'POST', '/dashboard/api/stores', {
        session: outsider,
        body: { name: 'Theirs', domain: 'theirs.example.com', platform: 'wix' },
      });
      expect(res.status).toBe(201);
      expect(res.body.data.id).not.toBe(seed.storeId);
      expectError(await call(app, 'GET', `/v1/stores/${res.body.data.id}`, { key: ctx.a.live }), 404, 'store_not_found');
    },
  },
  {
    method: 'PATCH',
    path: '/stores/:id',
    url: (s) => `/dashboard/api/stores/${s.storeId}`,
    body: () => ({ name: 'Renamed by the owner' }),
    status: 200,
    otherAccount: notFound('store_not_found')(route('PATCH', '/stores/:id')),
  },
  {
    method: 'GET',
    path: '/stores/:id/destinations',
    url: (s) => `/dashboard/api/stores/${s.storeId}/destinations`,
    status: 200,
    otherAccount: notFound('store_not_found')(route('GET', '/stores/:id/destinations')),
  },
  {
    // Meta's DELETE always answers (it clears the store's fields); the PUT below sets them again.
    method: 'DELETE',
    path: '/stores/:id/destinations/meta',
    url: (s) => `/dashboard/api/stores/${s.storeId}/destinations/meta`,
    status: 200,
    otherAccount: notFound('store_not_found')(route('DELETE', '/stores/:id/destinations/meta')),
  },
  {
    method: 'PUT',
    path: '/stores/:id/destinations/meta',
    url: (s) => `/dashboard/api/stores/${s.storeId}/destinations/meta`,
    body: () => ({ pixelId: '123456789012345', accessToken: 'EAAB-test-token' }),
    status: 200,
    otherAccount: notFound('store_not_found')(route('PUT', '/stores/:id/destinations/meta')),
  },
  {
    // After the PUT above: Meta is configured; the check meets the app's Graph address (nothing
    // listens there) and answers ok: false, a 200.
    method: 'POST',
    path: '/stores/:id/destinations/:kind/test',
    url: (s) => `/dashboard/api/stores/${s.storeId}/destinations/meta/test`,
    status: 200,
    otherAccount: notFound('store_not_found')(route('POST', '/stores/:id/destinations/:kind/test')),
  },
  {
    method: 'PUT',
    path: '/stores/:id/destinations/google_ads',
    url: (s) => `/dashboard/api/stores/${s.storeId}/destinations/google_ads`,
    body: () => ({
      customerId: '1234567890',
      conversionAction: 'customers/1234567890/conversionActions/1',
      api: 'google_ads_api',
      developerToken: 'dev-token',
      oauth: { clientId: 'client', clientSecret: 'secret', refreshToken: 'refresh' },
    }),
    status: 200,
    otherAccount: notFound('store_not_found')(route('PUT', '/stores/:id/destinations/google_ads')),
  },
  {
    // After the PUT above: there is a Google Ads destination to remove (the PUT's rows run first).
    method: 'DELETE',
    path: '/stores/:id/destinations/google_ads',
    url: (s) => `/dashboard/api/stores/${s.storeId}/destinations/google_ads`,
    status: 200,
    otherAccount: notFound('store_not_found')(route('DELETE', '/stores/:id/destinations/google_ads')),
  },
  {
    method: 'PUT',
    path: '/stores/:id/destinations/tiktok',
    url: (s) => `/dashboard/api/stores/${s.storeId}/destinations/tiktok`,
    body: () => ({ pixelCode: 'C4SECURITY0123456789', accessToken: 'tiktok-security-token' }),
    status: 200,
    otherAccount: notFound('store_not_found')(route('PUT', '/stores/:id/destinations/tiktok')),
  },
  {
    method: 'DELETE',
    path: '/stores/:id/destinations/tiktok',
    url: (s) => `/dashboard/api/stores/${s.storeId}/destinations/tiktok`,
    status: 200,
    otherAccount: notFound('store_not_found')(route('DELETE', '/stores/:id/destinations/tiktok')),
  },
  {
    method: 'PUT',
    path: '/stores/:id/destinations/microsoft',
    url: (s) => `/dashboard/api/stores/${s.storeId}/destinations/microsoft`,
    body: () => ({ tagId: '343210987', accessToken: 'microsoft-security-token' }),
    status: 200,
    otherAccount: notFound('store_not_found')(route('PUT', '/stores/:id/destinations/microsoft')),
  },
  {
    method: 'DELETE',
    path: '/stores/:id/destinations/microsoft',
    url: (s) => `/dashboard/api/stores/${s.storeId}/destinations/microsoft`,
    status: 200,
    otherAccount: notFound('store_not_found')(route('DELETE', '/stores/:id/destinations/microsoft')),
  },
  {
    method: 'PUT',
    path: '/stores/:id/destinations/pinterest',
    url: (s) => `/dashboard/api/stores/${s.storeId}/destinations/pinterest`,
    body: () => ({ adAccountId: '549755885175', accessToken: 'pinterest-security-token' }),
    status: 200,
    otherAccount: notFound('store_not_found')(route('PUT', '/stores/:id/destinations/pinterest')),
  },
  {
    method: 'DELETE',
    path: '/stores/:id/destinations/pinterest',
    url: (s) => `/dashboard/api/stores/${s.storeId}/destinations/pinterest`,
    status: 200,
    otherAccount: notFound('store_not_found')(route('DELETE', '/stores/:id/destinations/pinterest')),
  },
  {
    method: 'PUT',
    path: '/stores/:id/destinations/snapchat',
    url: (s) => `/dashboard/api/stores/${s.storeId}/destinations/snapchat`,
    body: () => ({ pixelId: '5bf81ee1-15b1-4dc1-b636-d7dae49b950e', accessToken: 'snapchat-security-token' }),
    status: 200,
    otherAccount: notFound('store_not_found')(route('PUT', '/stores/:id/destinations/snapchat')),
  },
  {
    method: 'DELETE',
    path: '/stores/:id/destinations/snapchat',
    url: (s) => `/dashboard/api/stores/${s.storeId}/destinations/snapchat`,
    status: 200,
    otherAccount: notFound('store_not_found')(route('DELETE', '/stores/:id/destinations/snapchat')),
  },
  {
    method: 'PUT',
    path: '/stores/:id/destinations/reddit',
    url: (s) => `/dashboard/api/stores/${s.storeId}/destinations/reddit`,
    body: () => ({ adAccountId: 'a2_abc123xyz', accessToken: 'reddit-security-token' }),
    status: 200,
    otherAccount: notFound('store_not_found')(route('PUT', '/stores/:id/destinations/reddit')),
  },
  {
    method: 'DELETE',
    path: '/stores/:id/destinations/reddit',
    url: (s) => `/dashboard/api/stores/${s.storeId}/destinations/reddit`,
    status: 200,
    otherAccount: notFound('store_not_found')(route('DELETE', '/stores/:id/destinations/reddit')),
  },
  {
    method: 'PUT',
    path: '/stores/:id/destinations/linkedin',
    url: (s) => `/dashboard/api/stores/${s.storeId}/destinations/linkedin`,
    body: () => ({ conversionRuleId: 'urn:lla:llaPartnerConversion:123456', accessToken: 'linkedin-security-token' }),
    status: 200,
    otherAccount: notFound('store_not_found')(route('PUT', '/stores/:id/destinations/linkedin')),
  },
  {
    method: 'DELETE',
    path: '/stores/:id/destinations/linkedin',
    url: (s) => `/dashboard/api/stores/${s.storeId}/destinations/linkedin`,
    status: 200,
    otherAccount: notFound('store_not_found')(route('DELETE', '/stores/:id/destinations/linkedin')),
  },
  {
    method: 'GET',
    path: '/stores/:id/spend-sources',
    url: (s) => `/dashboard/api/stores/${s.storeId}/spend-sources`,
    status: 200,
    otherAccount: notFound('store_not_found')(route('GET', '/stores/:id/spend-sources')),
  },
  {
    method: 'PUT',
    path: '/stores/:id/spend-sources/meta',
    url: (s) => `/dashboard/api/stores/${s.storeId}/spend-sources/meta`,
    body: () => ({ adAccountIds: ['act_1234567890'], accessToken: 'meta-spend-security-token' }),
    status: 200,
    otherAccount: notFound('store_not_found')(route('PUT', '/stores/:id/spend-sources/meta')),
  },
  {
    method: 'PUT',
    path: '/stores/:id/spend-sources/google_ads',
    url: (s) => `/dashboard/api/stores/${s.storeId}/spend-sources/google_ads`,
    body: () => ({
      customerIds: ['1234567890'],
      developerToken: 'dev-token',
      oauth: { clientId: 'client', clientSecret: 'secret', refreshToken: 'refresh' },
    }),
    status: 200,
    otherAccount: notFound('store_not_found')(route('PUT', '/stores/:id/spend-sources/google_ads')),
  },
  {
    method: 'PUT',
    path: '/stores/:id/spend-sources/tiktok',
    url: (s) => `/dashboard/api/stores/${s.storeId}/spend-sources/tiktok`,
    body: () => ({ advertiserIds: ['7001'], accessToken: 'tiktok-spend-security-token' }),
    status: 200,
    otherAccount: notFound('store_not_found')(route('PUT', '/stores/:id/spend-sources/tiktok')),
  },
  {
    method: 'POST',
    path: '/stores/:id/spend-sources/:kind/sync',
    url: (s) => `/dashboard/api/stores/${s.storeId}/spend-sources/meta/sync`,
    status: 202,
    otherAccount: notFound('store_not_found')(route('POST', '/stores/:id/spend-sources/:kind/sync')),
  },
  {
    method: 'DELETE',
    path: '/stores/:id/spend-sources/:kind',
    url: (s) => `/dashboard/api/stores/${s.storeId}/spend-sources/tiktok`,
    status: 200,
    otherAccount: notFound('store_not_found')(route('DELETE', '/stores/:id/spend-sources/:kind')),
  },
  {
    method: 'GET',
    path: '/analytics/metrics',
    url: (s) => `/dashboard/api/analytics/metrics?storeId=${s.storeId}`,
    status: 200,
    otherAccount: notFound('store_not_found')(route('GET', '/analytics/metrics')),
  },
  {
    method: 'GET',
    path: '/analytics/cohorts',
    url: (s) => `/dashboard/api/analytics/cohorts?storeId=${s.storeId}`,
    status: 200,
    otherAccount: notFound('store_not_found')(route('GET', '/analytics/cohorts')),
  },
  {
    method: 'GET',
    path: '/analytics/channels',
    url: (s) => `/dashboard/api/analytics/channels?storeId=${s.storeId}`,
    status: 200,
    otherAccount: notFound('store_not_found')(route('GET', '/analytics/channels')),
  },
  {
    method: 'GET',
    path: '/analytics/tracking-health',
    url: (s) => `/dashboard/api/analytics/tracking-health?storeId=${s.storeId}`,
    status: 200,
    otherAccount: notFound('store_not_found')(route('GET', '/analytics/tracking-health')),
  },
  {
    method: 'GET',
    path: '/analytics/timeseries',
    url: (s) => `/dashboard/api/analytics/timeseries?storeId=${s.storeId}`,
    status: 200,
    otherAccount: notFound('store_not_found')(route('GET', '/analytics/timeseries')),
  },
  {
    method: 'GET',
    path: '/analytics/match-quality',
    url: (s) => `/dashboard/api/analytics/match-quality?storeId=${s.storeId}`,
    status: 200,
    otherAccount: notFound('store_not_found')(route('GET', '/analytics/match-quality')),
  },
  {
    method: 'GET',
    path: '/conversions',
    url: () => '/dashboard/api/conversions?limit=100',
    status: 200,
    async otherAccount(app, outsider, seed) {
      expect(await listed(app, outsider, '/dashboard/api/conversions?limit=100', 'conversions', 'conversionId')).not.toContain(
        seed.conversionId,
      );
    },
  },
  {
    method: 'GET',
    path: '/conversions/:id',
    url: (s) => `/dashboard/api/conversions/${s.conversionId}`,
    status: 200,
    otherAccount: notFound('not_found')(route('GET', '/conversions/:id')),
  },
  {
    method: 'POST',
    path: '/conversions/:id/resend',
    url: (s) => `/dashboard/api/conversions/${s.conversionId}/resend`,
    status: 200,
    otherAccount: notFound('not_found')(route('POST', '/conversions/:id/resend')),
  },
  {
    method: 'GET',
    path: '/stores/:id/reconciliation',
    url: (s) => `/dashboard/api/stores/${s.storeId}/reconciliation`,
    status: 200,
    otherAccount: notFound('store_not_found')(route('GET', '/stores/:id/reconciliation')),
  },
  {
    method: 'GET',
    path: '/webhooks',
    url: () => '/dashboard/api/webhooks?limit=100',
    status: 200,
    async otherAccount(app, outsider, seed) {
      expect(await listed(app, outsider, '/dashboard/api/webhooks?limit=100', 'webhooks', 'id')).not.toContain(seed.webhookId);
    },
  },
  {
    method: 'POST',
    path: '/webhooks',
    url: () => '/dashboard/api/webhooks',
    body: () => ({ url: receiver.url('/suite'), events: ['refund.recorded'] }),
    status: 201,
    // The endpoint belongs to whoever created it.
    async otherAccount(app, outsider) {
      const res = await dashboardCall(app, 'POST', '/dashboard/api/webhooks', {
        session: outsider,
        body: { url: receiver.url('/outsider'), events: ['refund.recorded'] },
      });
      expect(res.status).toBe(201);
      const own = await call(app, 'GET', '/v1/webhooks?limit=100', { key: ctx.a.live });
      expect(own.body.data.webhooks.map((w: { id: string }) => w.id)).not.toContain(res.body.data.id);
    },
  },
  {
    method: 'DELETE',
    path: '/webhooks/:id',
    url: () => '/dashboard/api/webhooks/PLACEHOLDER',
    status: 200,
    async otherAccount(app, outsider) {
      const id = await deletable();
      expectError(await dashboardCall(app, 'DELETE', `/dashboard/api/webhooks/${id}`, { session: outsider }), 404, 'not_found');
      const own = await call(app, 'GET', '/v1/webhooks?limit=100', { key: ctx.a.live });
      expect(own.body.data.webhooks.map((w: { id: string }) => w.id)).toContain(id);
    },
  },
  {
    method: 'GET',
    path: '/webhooks/:id/deliveries',
    url: (s) => `/dashboard/api/webhooks/${s.webhookId}/deliveries`,
    status: 200,
    otherAccount: notFound('not_found')(route('GET', '/webhooks/:id/deliveries')),
  },
  {
    method: 'POST',
    path: '/webhooks/:id/deliveries/:deliveryId/resend',
    url: (s) => `/dashboard/api/webhooks/${s.webhookId}/deliveries/${s.deliveryId}/resend`,
    status: 201,
    otherAccount: notFound('not_found')(route('POST', '/webhooks/:id/deliveries/:deliveryId/resend')),
  },
  {
    method: 'DELETE',
    path: '/session',
    url: () => '/dashboard/api/session',
    status: 200,
    // Signing out ends one's own session only.
    async otherAccount(app, outsider) {
      const owner = await signIn(app, 'owner-a@example.com');
      const res = await dashboardCall(app, 'DELETE', '/dashboard/api/session', { session: outsider });
      expect(res.status).toBe(200);
      expect((await dashboardCall(app, 'GET', '/dashboard/api/session', { session: owner })).body.data.signedIn).toBe(true);
    },
  },
];
for (const r of ROUTES) byKey.set(`${r.method} ${r.path}`, r);

let seed: Seed;
let owner: DashboardSession;

/** Sign-in limits are session.test.ts's subject: here the owners sign in as often as the suite needs. */
const unlimited: RateLimiter = { consume: async (_bucket, policy) => decide(true, policy.burst, policy) };

/** A fresh session when the case ends it (sign-out), the shared one otherwise. */
const sessionFor = async (r: RouteCase) => (r.path === '/session' ? signIn(ctx.app, 'owner-a@example.com') : owner);
/** The revoke and delete cases name a key or an endpoint made for the call. */
const urlFor = async (r: RouteCase) =>
  r.path === '/keys/:id/revoke'
    ? r.url(seed).replace('PLACEHOLDER', await revocable())
    : r.path === '/webhooks/:id'
      ? r.url(seed).replace('PLACEHOLDER', await deletable())
      : r.url(seed);

beforeAll(async () => {
  receiver = await Receiver.start();
  ctx = await createTestContext({
    env: { CAPI_SYNC_WAIT_MS: '0', WEBHOOKS_ALLOW_PRIVATE: 'true' },
    limiter: unlimited,
    webhooks: { pollMs: 20, ca: receiver.cert },
  });
  await withPassword(ctx.database, 'owner-a@example.com');
  await withPassword(ctx.database, 'owner-b@example.com');
  const storeId = await makeStore(ctx.app, ctx.a.live);
  const click = clickBody(storeId);
  await call(ctx.app, 'POST', '/v1/track/click', { key: ctx.a.live, body: click });
  const conversion = await call(ctx.app, 'POST', '/v1/track/conversion', {
    key: ctx.a.live,
    body: conversionBody(storeId, { fbclid: click.fbclid }),
  });
  // Forwarding configured afterwards: the (skipped) conversion can be resent.
  await call(ctx.app, 'PATCH', `/v1/stores/${storeId}`, {
    key: ctx.a.live,
    body: { pixelId: '123456789012345', capiAccessToken: 'EAAB-test-token' },
  });
  // An endpoint that gets store.updated, and its first attempt (the rename below).
  const webhook = await call(ctx.app, 'POST', '/v1/webhooks', {
    key: ctx.a.live,
    body: { url: receiver.url('/seed'), events: ['store.updated'] },
  });
  const webhookId = webhook.body.data.id as string;
  await call(ctx.app, 'PATCH', `/v1/stores/${storeId}`, { key: ctx.a.live, body: { name: 'Seeded for webhooks' } });
  let deliveryId: string | undefined;
  for (const deadline = Date.now() + 20_000; !deliveryId && Date.now() < deadline; ) {
    await new Promise((r) => setTimeout(r, 25));
    const listed = await call(ctx.app, 'GET', `/v1/webhooks/${webhookId}/deliveries`, { key: ctx.a.live });
    deliveryId = listed.body.data.deliveries[0]?.id;
  }
  if (!deliveryId) throw new Error('the seeded webhook endpoint got no delivery');
  seed = { storeId, conversionId: conversion.body.data.conversionId, webhookId, deliveryId };
  deletable = async () => {
    const res = await call(ctx.app, 'POST', '/v1/webhooks', {
      key: ctx.a.live,
      body: { url: receiver.url('/to-delete'), events: ['refund.recorded'] },
    });
    return res.body.data.id as string;
  };
  revocable = async () => (await createKey(ctx.database, { accountId: ctx.a.accountId, mode: 'live', name: 'to revoke' })).keyId;
  owner = await signIn(ctx.app, 'owner-a@example.com');
});
afterAll(async () => {
  await ctx?.close();
  await receiver?.close();
});

describe.each(ROUTES)('$method /dashboard/api$path', (r) => {
  it('answers the signed-in owner', async () => {
    const session = await sessionFor(r);
    const res = await dashboardCall(ctx.app, r.method, await urlFor(r), { session, body: r.body?.(seed) });
    expect(res.status, JSON.stringify(res.body)).toBe(r.status);
    expect(res.body.success).toBe(true);
  });

  it('refuses a request without a session cookie', async () => {
    const res = await dashboardCall(ctx.app, r.method, await urlFor(r), { body: r.body?.(seed) });
    expect(expectError(res, 401, 'unauthorized').message).toBe('Sign in to use the dashboard');
  });

  it('refuses a forged or unsigned session cookie', async () => {
    const token = owner.cookie.slice(owner.cookie.indexOf('=') + 1);
    for (const cookie of [`${SESSION_COOKIE}=${token.slice(0, token.lastIndexOf('.'))}`, `${SESSION_COOKIE}=${token}x`]) {
      const res = await dashboardCall(ctx.app, r.method, await urlFor(r), {
        session: { cookie, csrfToken: owner.csrfToken },
        body: r.body?.(seed),
      });
      expectError(res, 401, 'unauthorized');
    }
  });

  it('refuses an expired session', async () => {
    const session = await signIn(ctx.app, 'owner-a@example.com');
    await ctx.database.write((trx) =>
      trx
        .updateTable('dashboard_sessions')
        .set({ last_seen_at: Date.now() - IDLE_TIMEOUT_MS })
        .where('csrf_token', '=', session.csrfToken)
        .execute(),
    );
    const res = await dashboardCall(ctx.app, r.method, await urlFor(r), { session, body: r.body?.(seed) });
    expect(expectError(res, 401, 'unauthorized').message).toMatch(/session has ended/);
  });

  it('refuses a Bearer key, alone or beside a valid session', async () => {
    for (const session of [undefined, owner]) {
      const res = await dashboardCall(ctx.app, r.method, await urlFor(r), {
        session,
        body: r.body?.(seed),
        headers: { authorization: `Bearer ${ctx.a.live}` },
      });
      expectError(res, 401, 'unauthorized');
    }
  });

  it('shows nothing of another account', async () => {
    const outsider = await signIn(ctx.app, 'owner-b@example.com');
    await r.otherAccount(ctx.app, outsider, seed);
  });
});

describe.each(ROUTES.filter((r) => r.method !== 'GET'))('$method /dashboard/api$path changes', (r) => {
  it('refuses a change without the CSRF token, with a wrong one, or from another site', async () => {
    const session = await sessionFor(r);
    const url = await urlFor(r);
    const missing = await dashboardCall(ctx.app, r.method, url, { session, csrf: false, body: r.body?.(seed) });
    expect(expectError(missing, 403, 'forbidden').details).toEqual({ field: 'X-CSRF-Token', reason: 'required_field_missing' });
    const wrong = await dashboardCall(ctx.app, r.method, url, {
      session,
      csrf: false,
      body: r.body?.(seed),
      headers: { 'x-csrf-token': `${session.csrfToken.slice(1)}x` },
    });
    expect(expectError(wrong, 403, 'forbidden').details).toEqual({ field: 'X-CSRF-Token', reason: 'unknown_value' });
    // Another signed-in owner's token is no better.
    const theirs = await signIn(ctx.app, 'owner-b@example.com');
    const foreign = await dashboardCall(ctx.app, r.method, url, {
      session,
      csrf: false,
      body: r.body?.(seed),
      headers: { 'x-csrf-token': theirs.csrfToken },
    });
    expectError(foreign, 403, 'forbidden');
    const crossSite = await dashboardCall(ctx.app, r.method, url, {
      session,
      body: r.body?.(seed),
      headers: { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
    });
    expectError(crossSite, 403, 'forbidden');
    // The session survived all of it.
    expect((await dashboardCall(ctx.app, 'GET', '/dashboard/api/session', { session })).body.data.signedIn).toBe(true);
  });
});

describe('GET /dashboard/api/session', () => {
  // The page asks it before anything else: "nobody is signed in" is its answer, not an error.
  it('answers signedIn: false without a session, with a forged one or an expired one', async () => {
    const expired = await signIn(ctx.app, 'owner-a@example.com');
    await ctx.database.write((trx) =>
      trx.updateTable('dashboard_sessions').set({ last_seen_at: 0 }).where('csrf_token', '=', expired.csrfToken).execute(),
    );
    const token = owner.cookie.slice(owner.cookie.indexOf('=') + 1);
    for (const session of [undefined, expired, { cookie: `${SESSION_COOKIE}=${token}x`, csrfToken: '' }]) {
      const res = await dashboardCall(ctx.app, 'GET', '/dashboard/api/session', { session });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({ signedIn: false });
    }
  });

  it("answers who is signed in: the owner's own account, and their CSRF token", async () => {
    const outsider = await signIn(ctx.app, 'owner-b@example.com');
    const res = await dashboardCall(ctx.app, 'GET', '/dashboard/api/session', { session: outsider });
    expect(res.body.data).toEqual({
      signedIn: true,
      accountId: ctx.b.accountId,
      email: 'owner-b@example.com',
      csrfToken: outsider.csrfToken,
    });
  });

  it('refuses a Bearer key', async () => {
    const res = await dashboardCall(ctx.app, 'GET', '/dashboard/api/session', {
      headers: { authorization: `Bearer ${ctx.a.live}` },
    });
    expectError(res, 401, 'unauthorized');
  });
});

describe('the session cookie and /v1', () => {
  it('a session cookie is not accepted on /v1', async () => {
    const requests: Array<[Method, string, unknown?]> = [
      ['GET', '/v1/stores'],
      ['GET', `/v1/stores/${seed.storeId}`],
      ['GET', `/v1/conversions/${seed.conversionId}`],
      ['POST', '/v1/track/click', clickBody(seed.storeId)],
      ['POST', '/v1/stores', { name: 'Via cookie', domain: 'cookie.example.com', platform: 'custom' }],
    ];
    for (const [method, url, body] of requests) {
      const res = await call(ctx.app, method as 'GET', url, {
        body,
        headers: { cookie: owner.cookie, 'x-csrf-token': owner.csrfToken },
      });
      expectError(res, 401, 'unauthorized');
    }
  });

  it('serves under /dashboard/api only the /v1 routes the pages use', async () => {
    const notServed: Array<[Method, string, unknown?]> = [
      ['POST', '/dashboard/api/track/click', clickBody(seed.storeId)],
      ['POST', '/dashboard/api/track/conversion', conversionBody(seed.storeId)],
      ['GET', '/dashboard/api/clicks'],
      ['GET', `/dashboard/api/stores/${seed.storeId}/ad-spend`],
      ['POST', `/dashboard/api/conversions/${seed.conversionId}/reattribute`],
      ['GET', `/dashboard/api/analytics/breakdown?storeId=${seed.storeId}&by=utm_source`],
      ['GET', '/dashboard/api/openapi.json'],
      ['GET', '/dashboard/api/nothing-here'],
    ];
    for (const [method, url, body] of notServed) {
      expectError(await dashboardCall(ctx.app, method, url, { session: owner, body }), 404, 'not_found');
    }
    expect(REUSED_ROUTES.length).toBe(ROUTES.filter((r) => !r.path.startsWith('/session') && !r.path.startsWith('/keys')).length);
  });

  it('documents the /v1 routes once: nothing under /dashboard appears in the OpenAPI document', async () => {
    const doc = await call(ctx.app, 'GET', '/v1/openapi.json');
    const paths = Object.keys(doc.body.paths);
    expect(paths).toContain('/v1/stores');
    expect(paths.filter((p) => p.startsWith('/dashboard'))).toEqual([]);
  });
});

describe('mode', () => {
  it('the Waytrack-Mode header picks the data: test mode does not see live conversions or metrics', async () => {
    const live = await listed(ctx.app, owner, '/dashboard/api/conversions?limit=100', 'conversions', 'conversionId');
    expect(live).toContain(seed.conversionId);
    const testRes = await dashboardCall(ctx.app, 'GET', '/dashboard/api/conversions?limit=100', { session: owner, mode: 'test' });
    expect(testRes.body.data.conversions).toEqual([]);
    expectError(
      await dashboardCall(ctx.app, 'GET', `/dashboard/api/conversions/${seed.conversionId}`, { session: owner, mode: 'test' }),
      404,
      'not_found',
    );
    const metrics = (mode: 'live' | 'test') =>
      dashboardCall(ctx.app, 'GET', `/dashboard/api/analytics/metrics?storeId=${seed.storeId}`, { session: owner, mode });
    expect((await metrics('live')).body.data).toMatchObject({ totalClicks: 1, totalConversions: 1, livemode: true });
    expect((await metrics('test')).body.data).toMatchObject({ totalClicks: 0, totalConversions: 0, livemode: false });
  });

  it('refuses a mode that is neither live nor test', async () => {
    const res = await dashboardCall(ctx.app, 'GET', '/dashboard/api/conversions', {
      session: owner,
      headers: { 'waytrack-mode': 'prod' },
    });
    expect(expectError(res, 400, 'invalid_request').details).toEqual({ field: 'Waytrack-Mode', reason: 'unknown_value' });
  });
});
