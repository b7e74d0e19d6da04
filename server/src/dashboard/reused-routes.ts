import type { FastifyPluginAsync, RouteOptions } from 'fastify';
import { analyticsRoutes } from '../routes/analytics.js';
import type { RouteDeps } from '../routes/common.js';
import { conversionRoutes } from '../routes/conversions.js';
import { destinationRoutes } from '../routes/destinations.js';
import { forwardingRoutes } from '../routes/forwarding.js';
import { reconciliationRoutes } from '../routes/reconciliation.js';
import { spendSourceRoutes } from '../routes/spend-sources.js';
import { storeRoutes } from '../routes/stores.js';
import { type WebhookRouteDeps, webhookRoutes } from '../routes/webhooks.js';

/**
 * The /v1 routes the dashboard's pages use, served under /dashboard/api by the very same route
 * modules: one schema, one handler, one domain function for both. Only these are served there
 * (the rest, tracking above all, answer 404): the pages need no more.
 */
export const REUSED_ROUTES = [
  'GET /stores',
  'GET /stores/:id',
  'POST /stores',
  'PATCH /stores/:id',
  'GET /stores/:id/destinations',
  // One documented route per platform (routes/destinations.ts), each served here.
  'PUT /stores/:id/destinations/meta',
  'DELETE /stores/:id/destinations/meta',
  'PUT /stores/:id/destinations/google_ads',
  'DELETE /stores/:id/destinations/google_ads',
  'PUT /stores/:id/destinations/tiktok',
  'DELETE /stores/:id/destinations/tiktok',
  'PUT /stores/:id/destinations/microsoft',
  'DELETE /stores/:id/destinations/microsoft',
  'PUT /stores/:id/destinations/pinterest',
  'DELETE /stores/:id/destinations/pinterest',
  'PUT /stores/:id/destinations/snapchat',
  'DELETE /stores/:id/destinations/snapchat',
  'PUT /stores/:id/destinations/reddit',
  'DELETE /stores/:id/destinations/reddit',
  'PUT /stores/:id/destinations/linkedin',
  'DELETE /stores/:id/destinations/linkedin',
  'POST /stores/:id/destinations/:kind/test',
  // Spend sources (api.md §11): one documented PUT per platform, like destinations.
  'GET /stores/:id/spend-sources',
  'PUT /stores/:id/spend-sources/meta',
  'PUT /stores/:id/spend-sources/google_ads',
  'PUT /stores/:id/spend-sources/tiktok',
  'DELETE /stores/:id/spend-sources/:kind',
  'POST /stores/:id/spend-sources/:kind/sync',
  'GET /analytics/metrics',
  'GET /analytics/timeseries',
  'GET /analytics/match-quality',
  'GET /analytics/cohorts',
  'GET /analytics/channels',
  'GET /analytics/tracking-health',
  'GET /conversions',
  'GET /conversions/:id',
  'POST /conversions/:id/resend',
  'GET /stores/:id/reconciliation',
  'GET /webhooks',
  'POST /webhooks',
  'DELETE /webhooks/:id',
  'GET /webhooks/:id/deliveries',
  'POST /webhooks/:id/deliveries/:deliveryId/resend',
] as const;

const reused = new Set<string>(REUSED_ROUTES);

function markRoute(route: RouteOptions & { prefix?: string }): void {
  const method = route.method === 'HEAD' ? 'GET' : route.method;
  const path = route.url.slice(route.prefix?.length ?? 0);
  if (typeof method === 'string' && reused.has(`${method} ${path}`)) route.config = { ...route.config, dashboard: 'session' };
  // Documented once, under /v1.
  route.schema = { ...route.schema, hide: true };
}

export const reusedRoutes: FastifyPluginAsync<WebhookRouteDeps> = async (
  app,
  { database, cursors, secrets, forwarding, spendSync, webhooks, webhookPolicy },
) => {
  app.addHook('onRoute', markRoute);
  // Exactly the dependencies: Fastify reads other option names (prefix) as its own.
  const deps: RouteDeps = { database, cursors, secrets, forwarding, spendSync };
  await app.register(storeRoutes, deps);
  await app.register(destinationRoutes, deps);
  await app.register(analyticsRoutes, deps);
  await app.register(conversionRoutes, deps);
  await app.register(forwardingRoutes, deps);
  await app.register(reconciliationRoutes, deps);
  await app.register(spendSourceRoutes, deps);
  await app.register(webhookRoutes, { ...deps, webhooks, webhookPolicy });
};
