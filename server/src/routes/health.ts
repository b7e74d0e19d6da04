import type { FastifyPluginAsync } from 'fastify';
import type { Registry } from 'prom-client';
import { Type } from 'typebox';
import type { Database } from '../db/database.js';
import { ok } from '../http/envelope.js';
import { ApiError } from '../http/errors.js';
import { responses } from './common.js';

const Status = Type.Object({ status: Type.String({ examples: ['ok'] }) });

/** Liveness, readiness and Prometheus metrics: unauthenticated and never rate limited. */
export const healthRoutes: FastifyPluginAsync<{ database: Database; registry: Registry }> = async (
  app,
  { database, registry },
) => {
  // GET /healthz — the process is alive
  app.get(
    '/healthz',
    { schema: { tags: ['Operations'], summary: 'Liveness', response: responses(200, Status) } },
    async (request) => ok(request, { status: 'ok' }),
  );

  // GET /readyz — the database answers
  app.get(
    '/readyz',
    { schema: { tags: ['Operations'], summary: 'Readiness: the database is reachable', response: responses(200, Status) } },
    async (request) => {
      try {
        await database.ping();
      } catch {
        throw new ApiError('service_unavailable', 'The database is unreachable');
      }
      return ok(request, { status: 'ready' });
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
