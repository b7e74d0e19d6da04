import type { FastifyPluginAsync } from 'fastify';
import type { Registry } from 'prom-client';
import { Type } from 'typebox';
import type { Database } from '../db/database.js';
import { ok } from '../http/envelope.js';
import { unavailable } from '../http/error-handler.js';
import { describeResponses, errorResponse, errorResponses } from '../http/openapi.js';
import type { RateLimiter } from '../http/rate-limit.js';

const Status = Type.Object({ status: Type.String({ description: 'Always ok', examples: ['ok'] }) });
const Readiness = Type.Object({
  status: Type.String({ description: 'Always ready (an unready instance answers 503)', examples: ['ready'] }),
  rateLimits: Type.Union([Type.Literal('shared'), Type.Literal('instance')], {
    description:
      "`shared` through Redis (REDIS_URL), or `instance`: this instance's own limits (no REDIS_URL, or Redis unreachable)",
  }),
  redis: Type.Union([Type.Literal('ok'), Type.Literal('unreachable'), Type.Literal('not_configured')], {
    description: 'Redis (REDIS_URL): ok, unreachable, or not_configured',
  }),
});

const NO_KEY = 'No key needed; never rate limited. Meant for load balancers, orchestrators and monitoring.';

/** Liveness, readiness and Prometheus metrics: unauthenticated and never rate limited. */
export const healthRoutes: FastifyPluginAsync<{ database: Database; registry: Registry; limiter?: RateLimiter }> = async (
  app,
  { database, registry, limiter },
) => {
  // GET /healthz — the process is alive
  app.get(
    '/healthz',
    {
      schema: {
        tags: ['Operations'],
        operationId: 'getLiveness',
        summary: 'Liveness: the process is up',
        description: `Answers as long as the process runs, whatever the state of the database (see /readyz for that). ${NO_KEY}`,
        response: describeResponses(Status, {
          description: 'The process is alive',
          examples: { alive: { summary: 'Alive', data: { status: 'ok' } } },
          public: true,
          database: false,
        }),
      },
    },
    async (request) => ok(request, { status: 'ok' }),
  );

  // GET /readyz — the database answers, and takes writes (db/write-health.ts)
  app.get(
    '/readyz',
    {
      schema: {
        tags: ['Operations'],
        operationId: 'getReadiness',
        summary: 'Readiness: the database is reachable and takes writes (and whether rate limits are shared)',
        description: `200 when this instance can serve requests: the database answers and takes writes. 503 \`service_unavailable\` while it cannot; the instance recovers by itself when the database returns. Redis being away does not make it unready (rate limits fall back to the instance's own). ${NO_KEY}`,
        response: describeResponses(Readiness, {
          description: 'Ready to serve',
          examples: {
            single: {
              summary: 'One instance, its own rate limits',
              data: { status: 'ready', rateLimits: 'instance', redis: 'not_configured' },
            },
            shared: { summary: 'Rate limits shared through Redis', data: { status: 'ready', rateLimits: 'shared', redis: 'ok' } },
          },
          public: true,
        }),
      },
    },
    async (request) => {
      try {
        await database.ping();
      } catch (error) {
        throw unavailable(error, 'this instance cannot serve requests until it is back');
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
    {
      schema: {
        tags: ['Operations'],
        operationId: 'getPrometheusMetrics',
        summary: 'Prometheus metrics',
        description:
          'The Prometheus text exposition (request durations by route, forwarding to Meta, rollup backlog, process metrics). Never rate limited. With METRICS_TOKEN set it needs `Authorization: Bearer <METRICS_TOKEN>`; with METRICS_PORT set it is served on that port only (and not here).',
        response: {
          200: {
            description: 'The metrics, in the Prometheus text format 0.0.4',
            content: {
              'text/plain': {
                schema: {
                  type: 'string',
                  examples: [
                    '# HELP waytrack_rollup_backlog_rows Clicks and conversions stored but not yet folded into the analytics rollups\n# TYPE waytrack_rollup_backlog_rows gauge\nwaytrack_rollup_backlog_rows{table="clicks"} 0\n',
                  ],
                },
              },
            },
          },
          401: errorResponse('METRICS_TOKEN is set and the request does not carry it (code `unauthorized`)', {
            tokenNeeded: {
              summary: 'No or another token',
              code: 'unauthorized',
              message: 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>',
            },
          }),
          ...errorResponses({ public: true, database: false }),
        },
      },
    },
    async (_request, reply) => {
      reply.type(registry.contentType);
      return registry.metrics();
    },
  );
};
