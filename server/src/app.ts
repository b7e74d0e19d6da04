import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyServerOptions, LogController } from 'fastify';
import type { Config } from './config.js';
import { dashboard } from './dashboard/plugin.js';
import type { Database } from './db/database.js';
import { getOrCreateSecret } from './db/repositories/settings.js';
import { Dispatcher, type DispatcherTuning } from './destinations/dispatcher.js';
import { authenticate, KeyStore } from './http/auth.js';
import { capConnectionsPerClient } from './http/connection-limits.js';
import { answerError, registerErrorHandling, toApiError } from './http/error-handler.js';
import { idempotency } from './http/idempotency.js';
import { registerJsonBody } from './http/json-body.js';
import { LazySchemas } from './http/lazy-schemas.js';
import { DOCS_UI, DOCUMENT } from './http/openapi.js';
import { CursorCodec } from './http/pagination.js';
import { MemoryRateLimiter, type RateLimiter } from './http/rate-limit.js';
import { logRefusedBeforeRouting, registerRequestLog } from './http/request-log.js';
import {
  answerClientError,
  answerPlainHttpOnTlsPort,
  HSTS,
  refuseEncodedBodies,
  requireForwardedHttps,
} from './http/transport.js';
import { prepareInput, validatorCompiler } from './http/validation.js';
import { newId } from './ids.js';
import { createMetrics, guardMetricsRoute, LOG_REDACT, rollupBacklogGauge } from './observability.js';
import { analyticsRoutes } from './routes/analytics.js';
import { batchRoutes } from './routes/batch.js';
import { checkoutRoutes } from './routes/checkout.js';
import { clickRoutes } from './routes/clicks.js';
import { conversionRoutes } from './routes/conversions.js';
import { destinationRoutes } from './routes/destinations.js';
import { forwardingRoutes } from './routes/forwarding.js';
import { healthRoutes } from './routes/health.js';
import { identifyRoutes } from './routes/identify.js';
import { reconciliationRoutes } from './routes/reconciliation.js';
import { refundRoutes } from './routes/refunds.js';
import { shopWebhookRoutes } from './routes/shop-webhooks.js';
import { shopifyPixelRoutes } from './routes/shopify-pixel.js';
import { spendRoutes } from './routes/spend.js';
import { spendSourceRoutes } from './routes/spend-sources.js';
import { storeRoutes } from './routes/stores.js';
import { tagRoutes } from './routes/tag.js';
import { webhookRoutes } from './routes/webhooks.js';
import { loadSecretsKey, SecretBox } from './secrets.js';
import { SpendSyncer, type SpendSyncTuning } from './spend/sync.js';
import { WebhookDispatcher, type WebhookTuning } from './webhooks/dispatcher.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The outbox dispatcher of every destination (started with the app, stopped when it closes). */
    forwarding: Dispatcher;
    /** The same dispatcher (one outbox for Meta and the others), under the name it had for the others. */
    destinations: Dispatcher;
    /** The webhooks-out dispatcher (webhooks/dispatcher.ts). */
    webhooks: WebhookDispatcher;
    /** The spend sync (spend/sync.ts). */
    spendSync: SpendSyncer;
  }
  interface FastifyContextConfig {
    /** Keep null values in the body (PATCH uses null to clear a field). */
    keepNulls?: boolean;
    /** The route prepares its body itself (prepareInput per event of a batch, each with its own errors). */
    preparesOwnBody?: boolean;
    /** Paths a wildcard route matches but does not serve (it calls notFound): a 404 there, never a 405. */
    notServing?: RegExp;
  }
}

/** The dispatcher's tuning from the two sets tests give (they named Meta's and the others' dispatchers before there was one). */
function tuningOf(deps: AppDeps): Partial<DispatcherTuning> {
  const { requestTimeoutMs: metaTimeout, ...forwarding } = deps.forwarding ?? {};
  const { requestTimeoutMs: othersTimeout, ...destinations } = deps.destinations ?? {};
  return {
    ...destinations,
    ...forwarding,
    ...(othersTimeout !== undefined && { requestTimeoutMs: othersTimeout }),
    ...(metaTimeout !== undefined && { timeouts: { meta: metaTimeout } }),
  };
}

export const BODY_LIMIT = 1024 * 1024;

/**
 * Bounds on what a client may hold open (slow and abusive clients): a request (headers and
 * body) must arrive within `requestMs`, its headers within `headersMs` (and the TLS handshake
 * before them within `headersMs` too: a connection that never completes it would otherwise be
 * held for Node's default 120 s); an idle keep-alive connection is closed after `keepAliveMs`;
 * beyond `maxConnections` open connections new ones are refused, well below the process's file
 * descriptors, so the database and every connection already served keep working; and one
 * client (IPv4 address or IPv6 /64) may hold at most `maxConnectionsPerIp` of them (0: no cap),
 * so that it cannot take them all.
 */
export interface ConnectionLimits {
  requestMs: number;
  headersMs: number;
  keepAliveMs: number;
  maxConnections: number;
  maxConnectionsPerIp: number;
}

/** The limits configured (REQUEST_TIMEOUT_MS, HEADERS_TIMEOUT_MS, … with their defaults in config.ts). */
function connectionLimitsOf(config: Config): ConnectionLimits {
  return {
    requestMs: config.requestTimeoutMs,
    headersMs: config.headersTimeoutMs,
    keepAliveMs: config.keepAliveTimeoutMs,
    maxConnections: config.maxConnections,
    maxConnectionsPerIp: config.maxConnectionsPerIp,
  };
}

export interface AppDeps {
  config: Config;
  database: Database;
  limiter?: RateLimiter;
  keys?: KeyStore;
  https?: { key: string | Buffer; cert: string | Buffer };
  logger?: FastifyServerOptions['logger'];
  /** Seals secrets at rest; default: from SECRETS_KEY or the key file in DATA_DIR. */
  secrets?: SecretBox;
  /** Dispatcher timings (tests shorten backoff, lease and polling to milliseconds); `requestTimeoutMs` is Meta's. */
  forwarding?: Partial<DispatcherTuning>;
  /** More timings of the same dispatcher (`forwarding` wins where both set one); `requestTimeoutMs` is the other platforms'. */
  destinations?: Partial<DispatcherTuning>;
  /** Webhooks-out dispatcher timings and trusted CAs (tests shorten polling and trust their receiver). */
  webhooks?: Partial<WebhookTuning>;
  /** Spend sync timings (tests shorten the lease and polling). */
  spendSync?: Partial<SpendSyncTuning>;
  /** Connection limits (tests shorten the timeouts). */
  limits?: Partial<ConnectionLimits>;
}

/** Builds the Fastify app: no listening, no globals, so tests build their own. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, database } = deps;
  const limits = { ...connectionLimitsOf(config), ...deps.limits };
  const schemas = new LazySchemas();
  const app = Fastify({
    // Timed-out requests are found by a sweep every connectionsCheckingInterval.
    ...(deps.https
      ? {
          https: {
            ...deps.https,
            connectionsCheckingInterval: Math.min(1000, limits.requestMs),
            handshakeTimeout: limits.headersMs,
          },
        }
      : {}),
    requestTimeout: limits.requestMs,
    keepAliveTimeout: limits.keepAliveMs,
    logger: deps.logger ?? { level: config.logLevel, redact: LOG_REDACT },
    // One line per request, at response time (http/request-log.ts), instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: () => newId('request'),
    requestIdHeader: false,
    bodyLimit: BODY_LIMIT,
    trustProxy: config.trustProxy,
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true },
    frameworkErrors: (error, request, reply) => {
      logRefusedBeforeRouting(request, reply as FastifyReply, toApiError(error).code);
      return answerError(error, request, reply as FastifyReply);
    },
    clientErrorHandler: answerClientError,
    schemaController: { compilersFactory: { buildSerializer: schemas.serializers() } },
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.server.headersTimeout = limits.headersMs;
  app.server.maxConnections = limits.maxConnections;
  capConnectionsPerClient(app.server, limits.maxConnectionsPerIp);
  if (deps.https) answerPlainHttpOnTlsPort(app.server);

  app.setValidatorCompiler(schemas.validators(validatorCompiler));
  // Listening before every route's schemas are compiled (http/lazy-schemas.ts), then compiling them.
  app.addHook('onListen', async () => schemas.warm());
  app.addHook('onClose', async () => schemas.stop());
  app.removeContentTypeParser('text/plain');
  registerJsonBody(app);
  registerErrorHandling(app);

  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('Request-Id', request.id);
    reply.header('Strict-Transport-Security', HSTS);
    return payload;
  });
  if (config.trustProxy) app.addHook('onRequest', requireForwardedHttps);
  app.addHook('onRequest', refuseEncodedBodies);
  app.addHook('preValidation', async (request) => {
    if (!request.routeOptions.config.preparesOwnBody) {
      prepareInput(request.body, { keepNulls: request.routeOptions.config.keepNulls, schema: request.routeOptions.schema?.body });
    }
    prepareInput(request.query, { query: true });
    // Path ids reach the database too (a NUL in one was a 500 on PostgreSQL).
    prepareInput(request.params, { keepNulls: true });
  });

  registerRequestLog(app);
  const registry = createMetrics(app);
  rollupBacklogGauge(registry, database);
  guardMetricsRoute(app, config); // before healthRoutes registers /metrics
  // The reference documentation (http/openapi.ts): GET /v1/openapi.json and /docs.
  await app.register(swagger, DOCUMENT);
  await app.register(swaggerUi, DOCS_UI);
  const limiter = deps.limiter ?? new MemoryRateLimiter();
  await app.register(healthRoutes, { database, registry, limiter });
  await app.register(tagRoutes);
  await app.register(shopifyPixelRoutes);

  const keys = deps.keys ?? new KeyStore(database);
  const cursors = new CursorCodec(await getOrCreateSecret(database, 'cursor_secret'));
  const idem = idempotency(database);
  const secrets = deps.secrets ?? new SecretBox(loadSecretsKey(config));
  // One dispatcher for every destination's outbox: it runs with the app, starts when the app is
  // ready and stops on close, before the server closes the database (server.ts), so every
  // attempt in flight is recorded.
  const forwarding = new Dispatcher({
    database,
    secrets,
    env: config,
    syncWaitMs: config.capiSyncWaitMs,
    alertAfterMs: config.destinationAlertAfterS * 1000,
    registry,
    log: app.log,
    tuning: tuningOf(deps),
  });
  const destinations = forwarding;
  const webhooks = new WebhookDispatcher({
    database,
    secrets,
    retryScale: config.webhookRetryScale,
    allowPrivate: config.webhooksAllowPrivate,
    log: app.log,
    tuning: deps.webhooks,
  });
  app.decorate('forwarding', forwarding);
  app.decorate('destinations', destinations);
  app.decorate('webhooks', webhooks);
  const spendSync = new SpendSyncer({
    database,
    secrets,
    env: config,
    intervalS: config.spendSyncIntervalS,
    restateDays: config.spendRestateDays,
    log: app.log,
    tuning: deps.spendSync,
  });
  app.decorate('spendSync', spendSync);
  app.addHook('onReady', async () => {
    forwarding.start();
    webhooks.start();
    spendSync.start();
  });
  app.addHook('onClose', async () => {
    await forwarding.stop();
    await webhooks.stop();
    await spendSync.stop();
  });
  // One resolver for the check at registration and the one at connect time (tests replace DNS).
  const webhookPolicy = {
    allowPrivate: config.webhooksAllowPrivate,
    resolve: deps.webhooks?.resolve,
    maxEndpoints: config.webhookMaxEndpoints,
  };
  await app.register(dashboard, { database, cursors, secrets, forwarding, spendSync, limiter, webhooks, webhookPolicy });

  await app.register(
    async (v1) => {
      v1.addHook(
        'onRequest',
        authenticate({
          keys,
          limiter,
          keyPolicy: { rps: config.rateLimitRps, burst: config.rateLimitBurst },
          ipPolicy: { rps: config.ipRateLimitRps, burst: config.ipRateLimitRps * 2 },
          shopWebhookPolicy: { rps: config.shopWebhookRateLimitRps, burst: config.shopWebhookRateLimitBurst },
        }),
      );
      v1.addHook('preHandler', idem.preHandler);
      v1.addHook('onSend', idem.onSend);

      // GET /v1/openapi.json — the OpenAPI 3.1 document (raw, not enveloped: tools read it as is)
      v1.get('/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => app.swagger());

      const routeDeps = { database, cursors, secrets, forwarding, spendSync };
      await v1.register(clickRoutes, routeDeps);
      await v1.register(identifyRoutes, routeDeps);
      await v1.register(conversionRoutes, routeDeps);
      await v1.register(checkoutRoutes, routeDeps);
      await v1.register(batchRoutes, routeDeps);
      await v1.register(refundRoutes, routeDeps);
      await v1.register(shopWebhookRoutes, routeDeps);
      await v1.register(forwardingRoutes, routeDeps);
      await v1.register(storeRoutes, routeDeps);
      await v1.register(destinationRoutes, routeDeps);
      await v1.register(analyticsRoutes, routeDeps);
      await v1.register(spendRoutes, routeDeps);
      await v1.register(spendSourceRoutes, routeDeps);
      await v1.register(reconciliationRoutes, routeDeps);
      await v1.register(webhookRoutes, { ...routeDeps, webhooks, webhookPolicy });
    },
    { prefix: '/v1' },
  );
  return app;
}
