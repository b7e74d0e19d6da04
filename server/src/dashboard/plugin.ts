import fastifyCookie from '@fastify/cookie';
import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import { KeyUsage } from '../accounts/key-usage.js';
import { getOrCreateSecret } from '../db/repositories/settings.js';
import type { RateLimiter } from '../http/rate-limit.js';
import type { WebhookRouteDeps } from '../routes/webhooks.js';
import { dashboardGuard } from './guard.js';
import { keyRoutes } from './key-routes.js';
import { reusedRoutes } from './reused-routes.js';
import { sessionRoutes } from './session-routes.js';
import { dashboardStatic } from './static.js';

export interface DashboardOptions extends WebhookRouteDeps {
  limiter: RateLimiter;
  /** The built dashboard; default dashboard/dist of the repository. */
  dir?: string;
}

/** The JSON the pages call: cookie sessions only, every route behind one guard. */
const dashboardApi: FastifyPluginAsync<DashboardOptions> = async (api, options) => {
  const { database, limiter, cursors, secrets, forwarding, spendSync, webhooks, webhookPolicy } = options;
  // Signed with a secret in the database: every instance sharing it accepts the same cookies.
  await api.register(fastifyCookie, { secret: await getOrCreateSecret(database, 'dashboard_cookie_secret') });
  api.addHook('onRequest', dashboardGuard(database));
  await api.register(sessionRoutes, { database, limiter });
  await api.register(keyRoutes, { database });
  await api.register(reusedRoutes, { database, cursors, secrets, forwarding, spendSync, webhooks, webhookPolicy });
};

/**
 * The dashboard (api.md §5): the app at /dashboard and its JSON at /dashboard/api. Registered
 * at the root, before /v1, for one thing only the root can do: note when each API key was last
 * used (the API keys page shows it), after the answer has gone.
 */
export const dashboard = fp<DashboardOptions>(
  async (app, options) => {
    const usage = new KeyUsage(options.database, (error) => app.log.warn({ err: error }, 'could not record API key use'));
    app.addHook('onResponse', async (request) => {
      if (request.auth?.keyId && request.dashboardSession === undefined) usage.record(request.auth.keyId);
    });
    app.addHook('onClose', () => usage.settle());
    const { dir, ...deps } = options;
    await app.register(dashboardApi, { ...deps, prefix: '/dashboard/api' });
    await app.register(dashboardStatic, { dir });
  },
  { name: 'waytrack-dashboard' },
);
