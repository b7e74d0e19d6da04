import type { FastifyInstance } from 'fastify';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Database } from './db/database.js';
import { queueSize } from './db/repositories/rollup-queue.js';

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

/**
 * Rows stored but not yet folded into the analytics rollups: near zero while the background
 * fold keeps up (an analytics read folds the rest first, so results never lag; a growing
 * backlog only makes reads slower).
 */
export function rollupBacklogGauge(registry: Registry, database: Database): void {
  new Gauge({
    name: 'waytrack_rollup_backlog_rows',
    help: 'Clicks and conversions stored but not yet folded into the analytics rollups',
    labelNames: ['table'],
    registers: [registry],
    async collect() {
      try {
        const queued = await queueSize(database.read);
        this.set({ table: 'clicks' }, queued.click);
        this.set({ table: 'conversions' }, queued.conversion);
      } catch {
        // The database is unreachable: readiness reports that; the gauge keeps its last value.
      }
    },
  });
}

/** Log redaction: keys and cookies never reach the logs (bodies, which hold PII, are never logged). */
export const LOG_REDACT = ['req.headers.authorization', 'req.headers.cookie', 'req.headers["idempotency-key"]'];
