import type { Server } from 'node:http';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { hasAccounts } from './accounts/accounts.js';
import { FOLD_EVERY_MS, startRollupRefresher } from './analytics/rollups.js';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { testLeaseMs } from './crash-point.js';
import { tightenDataDir } from './data-dir.js';
import type { BackgroundErrorHandler, Database } from './db/database.js';
import { openDatabase as openEngine } from './db/open.js';
import { purgeExpiredIdempotencyKeys } from './db/repositories/idempotency.js';
import { RedisRateLimiter } from './http/redis-rate-limit.js';
import { createPlainHttpRejector } from './http/transport.js';
import { listenForMetrics, type MetricsListener, serverLogger } from './observability.js';
import { startRetention } from './retention.js';
import { loadTls } from './tls.js';

export function openDatabase(config: Config, onError?: BackgroundErrorHandler): Database {
  const { databaseUrl, preparedStatements, dataDir } = config;
  return openEngine({ databaseUrl, preparedStatements, dataDir, onError });
}

export interface RunningServer {
  app: FastifyInstance;
  url: string;
  close(): Promise<void>;
}

export interface StartOptions {
  /** The logger (tests pass a stream); default: JSON lines, or readable ones on a terminal. */
  logger?: FastifyServerOptions['logger'];
}

/** `waytrack serve`: migrate, then serve HTTPS (and the optional HTTP rejector) until stopped. */
export async function startServer(
  config: Config,
  print: (line: string) => void = console.log,
  options: StartOptions = {},
): Promise<RunningServer> {
  let app: FastifyInstance | undefined;
  // Before anything is opened or created in DATA_DIR: earlier versions created files 0644.
  const loose = tightenDataDir(config.dataDir);
  // Background database work reports failures here, each with what failed; it retries by itself.
  const database = openDatabase(config, (err, message) => app?.log.warn({ err }, message));
  // Migrating (and starting the database's threads) and loading, or first creating, the TLS
  // certificate wait on different things: side by side.
  const [applied, tls] = await Promise.all([database.migrate(), loadTls(config)]);
  // REDIS_URL: one bucket per key shared by every instance (per instance while Redis is away).
  const limiter = config.redisUrl
    ? new RedisRateLimiter(config.redisUrl, {
        log: { warn: (message) => app?.log.warn(message), info: (message) => app?.log.info(message) },
      })
    : undefined;
  const leaseMs = testLeaseMs();
  app = await buildApp({
    config,
    database,
    limiter,
    https: { key: tls.key, cert: tls.cert },
    logger: options.logger ?? (await serverLogger(config)),
    ...(leaseMs !== undefined && { destinations: { leaseMs }, webhooks: { leaseMs }, spendSync: { leaseMs } }),
  });
  const log = app.log;
  if (loose.length > 0) {
    const failed = loose.filter((entry) => entry.error);
    log.warn(
      { dataDir: config.dataDir, files: loose },
      failed.length === 0
        ? 'DATA_DIR was readable by other users: its files are now 0600 and its directories 0700'
        : 'DATA_DIR is readable by other users and could not all be tightened (see files[].error): make it owned by the user Waytrack runs as, files 0600 and directories 0700',
    );
  }
  if (applied.length > 0) log.info({ migrations: applied }, `applied ${applied.length} database migrations`);
  else log.info('database schema is up to date');
  await app.listen({ port: config.port, host: config.host });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `https://${host}:${port}`;

  let plain: Server | undefined;
  if (config.httpPort !== undefined) {
    const rejector = createPlainHttpRejector();
    await new Promise<void>((resolve, reject) => {
      rejector.once('error', reject);
      rejector.listen(config.httpPort, config.host, () => resolve());
    });
    plain = rejector;
  }

  // METRICS_PORT: /metrics on a listener of its own (and not on the API port, app.ts).
  let metrics: MetricsListener | undefined;
  if (config.metricsPort !== undefined) metrics = await listenForMetrics(app.metrics, config);

  // Analytics rollups follow the stored rows in the background, so analytics reads rarely wait.
  const rollups = startRollupRefresher(database, {
    onError: (err) => app.log.warn({ err }, 'analytics rollups could not be refreshed; retrying'),
    log: app.log,
    foldEveryMs: config.databaseUrl ? FOLD_EVERY_MS.postgres : FOLD_EVERY_MS.sqlite,
  });

  // RETENTION_DAYS: events older than that are deleted in bounded batches.
  const retention =
    config.retentionDays === undefined
      ? undefined
      : startRetention(database, {
          days: config.retentionDays,
          onError: (err) => app.log.warn({ err }, 'expired events could not be deleted; retrying'),
          onDeleted: (deleted) => app.log.info(deleted, 'expired events deleted'),
        });

  const sweeper = setInterval(
    () => {
      void database.write((trx) => purgeExpiredIdempotencyKeys(trx, Date.now())).catch(() => {});
    },
    10 * 60 * 1000,
  );
  sweeper.unref();

  if (!(await hasAccounts(database))) {
    print('No account yet. Create the first one (it prints a live and a test API key):');
    print('  npx waytrack account create --email you@example.com');
    print('Then set its dashboard password: npx waytrack account password --email you@example.com');
  }
  if (tls.selfSignedPath) print(`Using a self-signed certificate for localhost: ${tls.selfSignedPath}`);
  if (plain) print(`Plain HTTP on port ${config.httpPort} answers every request with 403 https_required`);
  if (metrics) print(`Prometheus metrics: ${metrics.url}`);
  print(`Dashboard: ${url}/dashboard`);
  // Printed last: scripts wait for this line to know the server is ready.
  print(`Waytrack API listening on ${url}/v1 (docs: ${url}/docs)`);

  let closing: Promise<void> | undefined;
  return {
    app,
    url,
    close() {
      closing ??= (async () => {
        clearInterval(sweeper);
        await retention?.stop();
        await rollups.stop();
        if (plain) await new Promise<void>((resolve) => plain.close(() => resolve()));
        await metrics?.close();
        await app.close(); // stops accepting, drains in-flight requests
        await database.close(); // flushes queued writes, then closes
        await limiter?.close();
      })();
      return closing;
    },
  };
}
