import type { FastifyInstance } from 'fastify';
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

/** A Prometheus registry per app instance (tests build many apps in one process). */
export function createMetrics(app: FastifyInstance): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'waytrack_' });
  const duration = new Histogram({
    name: 'waytrack_http_request_duration_seconds',
    help: 'HTTP request latency by route and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const errors = new Counter({
    name: 'waytrack_http_errors_total',
    help: 'Error responses by code',
    labelNames: ['status'],
    registers: [registry],
  });
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const status = String(reply.statusCode);
    duration.observe({ method: request.method, route, status }, reply.elapsedTime / 1000);
    if (reply.statusCode >= 400) errors.inc({ status });
  });
  return registry;
}

/** Log redaction: keys and cookies never reach the logs (bodies, which hold PII, are never logged). */
export const LOG_REDACT = ['req.headers.authorization', 'req.headers.cookie', 'req.headers["idempotency-key"]'];
