import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyRequest, FastifyServerOptions, onRequestHookHandler } from 'fastify';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Config } from './config.js';
import type { Database } from './db/database.js';
import { QUEUE_SIZE } from './db/repositories/rollup-queue.js';
import { errorBody } from './http/envelope.js';
import { ApiError } from './http/errors.js';
import { newId } from './ids.js';
import { LogOutput } from './stdio.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** This app's Prometheus registry (served at /metrics, here or on METRICS_PORT). */
    metrics: Registry;
  }
}

/** A Prometheus registry per app instance (tests build many apps in one process). */
export function createMetrics(app: FastifyInstance): Registry {
  const registry = new Registry();
  app.decorate('metrics', registry);
  collectDefaultMetrics({ register: registry, prefix: 'waytrack_' });
  const duration = new Histogram({
    name: 'waytrack_http_request_duration_seconds',
    help: 'HTTP request latency by method, route pattern and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const errors = new Counter({
    name: 'waytrack_http_errors_total',
    help: 'Error responses (HTTP status 400 and above) by HTTP status',
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
    help: 'Clicks, conversions and refunds stored but not yet folded into the analytics rollups',
    labelNames: ['table'],
    registers: [registry],
    async collect() {
      try {
        // Off the event loop: during a long fold (an upgrade's first build) the count takes seconds.
        const queued = await database.background(QUEUE_SIZE, undefined);
        this.set({ table: 'clicks' }, queued.click);
        this.set({ table: 'conversions' }, queued.conversion);
        this.set({ table: 'refunds' }, queued.refund);
      } catch {
        // The database is unreachable: readiness reports that; the gauge keeps its last value.
      }
    },
  });
}

/** Log redaction: keys and cookies never reach the logs (bodies, which hold PII, are never logged). */
export const LOG_REDACT = ['req.headers.authorization', 'req.headers.cookie', 'req.headers["idempotency-key"]'];

/**
 * The server's logger: one JSON object per line (for journald, Docker and log shippers), or,
 * when standard output is a terminal, the same lines made readable by pino-pretty (one line
 * each, local time, colours). Loaded only for a terminal. The JSON lines go through a
 * `LogOutput` (stdio.ts): a slow or vanished reader of standard output never blocks or stops
 * the server.
 */
export async function serverLogger(
  config: Pick<Config, 'logLevel'>,
  stdout: NodeJS.WritableStream & { isTTY?: boolean } = process.stdout,
): Promise<NonNullable<FastifyServerOptions['logger']>> {
  const options = { level: config.logLevel, redact: LOG_REDACT };
  if (!stdout.isTTY) return { ...options, stream: new LogOutput(1) };
  const { default: pretty } = await import('pino-pretty');
  const stream = pretty({
    destination: stdout, // a terminal: written synchronously
    colorize: true,
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname',
  });
  return { ...options, stream };
}

/** Compares without revealing, by its timing, how much of the token a guess got right. */
function tokenMatches(header: string | undefined, token: string): boolean {
  const match = /^Bearer +(\S+) *$/i.exec(header ?? '');
  if (!match) return false;
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(match[1] as string), digest(token));
}

const METRICS_TOKEN_NEEDED = () =>
  new ApiError('unauthorized', 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>', undefined, {
    'WWW-Authenticate': 'Bearer realm="metrics"',
  });

/**
 * Who may read `/metrics` on the API port (the route itself is in routes/health.ts): with
 * METRICS_PORT it is not served there at all (404, and left out of the API reference); with
 * METRICS_TOKEN only a request bearing the token reads it (401 otherwise). Register before the
 * route (an onRoute hook sees only routes registered after it).
 */
export function guardMetricsRoute(app: FastifyInstance, config: Pick<Config, 'metricsPort' | 'metricsToken'>): void {
  const { metricsPort, metricsToken } = config;
  if (metricsPort === undefined && metricsToken === undefined) return;
  const guard: onRequestHookHandler = async (request: FastifyRequest) => {
    if (metricsPort !== undefined) throw new ApiError('not_found', `No route ${request.method} /metrics`);
    if (metricsToken !== undefined && !tokenMatches(request.headers.authorization, metricsToken)) throw METRICS_TOKEN_NEEDED();
  };
  app.addHook('onRoute', (route) => {
    if (route.url !== '/metrics') return;
    const own = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    route.onRequest = [guard, ...own];
    if (metricsPort !== undefined) route.schema = { ...route.schema, hide: true };
  });
}

export interface MetricsListener {
  /** Where it listens (`http://127.0.0.1:9464/metrics`). */
  url: string;
  close(): Promise<void>;
}

/**
 * METRICS_PORT: a small plain-HTTP listener that serves `GET /metrics` and nothing else
 * (METRICS_TOKEN applies here too). It shares nothing with the API's listener, so a scraper
 * on a private address never needs the API's certificate or its route.
 */
export async function listenForMetrics(
  registry: Registry,
  config: Pick<Config, 'metricsPort' | 'metricsHost' | 'metricsToken'>,
): Promise<MetricsListener> {
  const answerError = (res: ServerResponse, error: ApiError) => {
    const requestId = newId('request');
    const body = errorBody({ id: requestId } as FastifyRequest, error);
    res.writeHead(error.status, { 'Content-Type': 'application/json; charset=utf-8', 'Request-Id': requestId, ...error.headers });
    res.end(JSON.stringify(body));
  };
  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    const pathname = (req.url ?? '/').split('?')[0]?.replace(/\/+$/, '');
    if (pathname !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      return answerError(
        res,
        new ApiError('not_found', `No route ${req.method} ${pathname || '/'} (this port serves GET /metrics)`),
      );
    }
    if (config.metricsToken !== undefined && !tokenMatches(req.headers.authorization, config.metricsToken)) {
      return answerError(res, METRICS_TOKEN_NEEDED());
    }
    const text = await registry.metrics();
    res.writeHead(200, { 'Content-Type': registry.contentType });
    res.end(req.method === 'HEAD' ? undefined : text);
  };
  const server: Server = createServer((req, res) => {
    serve(req, res).catch(() => {
      if (!res.headersSent) answerError(res, new ApiError('internal_error', 'The metrics could not be collected'));
      else res.destroy();
    });
  });
  server.requestTimeout = 10_000;
  server.headersTimeout = 5_000;
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.metricsPort, config.metricsHost, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.metricsPort;
  const host = config.metricsHost.includes(':') ? `[${config.metricsHost}]` : config.metricsHost;
  return {
    url: `http://${host}:${port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
