import type { FastifyPluginAsync } from 'fastify';
import type { Registry } from 'prom-client';
import { Type } from 'typebox';
import type { Database } from '../db/database.js';
import { ok } from '../http/envelope.js';
import { ApiError } from '../http/errors.js';
import type { RateLimiter } from '../http/rate-limit.js';
import { responses } from './common.js';

const Status = Type.Object({ status: Type.String({ examples: ['ok'] }) });
const Readiness = Type.Object({
  status: Type.String({ examples: ['ready'] }),
  rateLimits: Type.Union([Type.Literal('shared'), Type.Literal('instance')], {
    description:
      "`shared` through Redis (REDIS_URL), or `instance`: this instance's own limits (no REDIS_URL, or Redis unreachable)",
  }),
  redis: Type.Union([Type.Literal('ok'), Type.Literal('unreachable'), Type.Literal('not_configured')]),
});

/** Liveness, readiness and Prometheus metrics: unauthenticated and never rate limited. */
export const healthRoutes: FastifyPluginAsync<{ database: Database; registry: Registry; limiter?: RateLimiter }> = async (
  app,
  { database, registry, limiter },
) => {
  // GET /healthz — the process is alive
  app.get(
    '/healthz',
    { schema: { tags: ['Operations'], summary: 'Liveness', response: responses(200, Status) } },
    async (request) => ok(request, { status: 'ok' }),
  );

  // GET /readyz — the database answers, and takes writes (db/write-health.ts)
  app.get(
    '/readyz',
    {
      schema: {
        tags: ['Operations'],
        summary: 'Readiness: the database is reachable and takes writes (and whether rate limits are shared)',
        response: responses(200, Readiness),
      },
    },
    async (request) => {
      try {
        await database.ping();
      } catch {
        throw new ApiError('service_unavailable', 'The database is unreachable');
      }
      // Redis down does not make the instance unready: it limits on its own meanwhile.
      const shared = limiter?.status?.();
      return ok(request, {
        status: 'ready',
        rateLimits: shared?.shared ? ('shared' as const) : ('instance' as const),
        redis: shared === undefined ? ('not_configured' as const) : shared.shared ? ('ok' as const) : ('unreachable' as const),
      });
    },
  );

  // GET /metrics — Prometheus text exposition (not enveloped: scrapers expect the raw format)
  app.get(
    '/metrics',
    { schema: { tags: ['Operations'], summary: 'Prometheus metrics', produces: ['text/plain'] } },
    async (_request, reply) => {
      reply.type(registry.contentType);
      return registry.metrics();
    },
  );
};
