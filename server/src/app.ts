import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyServerOptions } from 'fastify';
import { Dispatcher, type DispatcherTuning } from './capi/dispatcher.js';
import { loadSecretsKey, SecretBox } from './capi/secrets.js';
import type { Config } from './config.js';
import type { Database } from './db/database.js';
import { getOrCreateSecret } from './db/repositories/settings.js';
import { authenticate, KeyStore } from './http/auth.js';
import { errorBody } from './http/envelope.js';
import { registerErrorHandling, toApiError } from './http/error-handler.js';
import { idempotency } from './http/idempotency.js';
import { CursorCodec } from './http/pagination.js';
import { MemoryRateLimiter, type RateLimiter } from './http/rate-limit.js';
import { HSTS, requireForwardedHttps } from './http/transport.js';
import { dropEmptyValues, validatorCompiler } from './http/validation.js';
import { newId } from './ids.js';
import { createMetrics, LOG_REDACT, rollupBacklogGauge } from './observability.js';
import { analyticsRoutes } from './routes/analytics.js';
import { clickRoutes } from './routes/clicks.js';
import { conversionRoutes } from './routes/conversions.js';
import { forwardingRoutes } from './routes/forwarding.js';
import { healthRoutes } from './routes/health.js';
import { spendRoutes } from './routes/spend.js';
import { storeRoutes } from './routes/stores.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The Conversions API dispatcher of this app (started with it, stopped when it closes). */
    forwarding: Dispatcher;
  }
  interface FastifyContextConfig {
    /** Keep null values in the body (PATCH uses null to clear a field). */
    keepNulls?: boolean;
  }
}

export const BODY_LIMIT = 1024 * 1024;

export interface AppDeps {
  config: Config;
  database: Database;
  limiter?: RateLimiter;
  keys?: KeyStore;
  https?: { key: string | Buffer; cert: string | Buffer };
  logger?: FastifyServerOptions['logger'];
  /** Seals secrets at rest; default: from SECRETS_KEY or the key file in DATA_DIR. */
  secrets?: SecretBox;
  /** Dispatcher timings (tests shorten backoff, lease and polling to milliseconds). */
  forwarding?: Partial<DispatcherTuning>;
}

/** Builds the Fastify app: no listening, no globals, so tests build their own. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, database } = deps;
  const app = Fastify({
    ...(deps.https ? { https: deps.https } : {}),
    logger: deps.logger ?? { level: config.logLevel, redact: LOG_REDACT },
    genReqId: () => newId('request'),
    requestIdHeader: false,
    bodyLimit: BODY_LIMIT,
    trustProxy: config.trustProxy,
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true },
    frameworkErrors: (error, request, reply) => {
      const apiError = toApiError(error);
      (reply as FastifyReply).code(apiError.status).send(errorBody(request, apiError));
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  app.removeContentTypeParser('text/plain');
  registerErrorHandling(app);

  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('Request-Id', request.id);
    reply.header('Strict-Transport-Security', HSTS);
    return payload;
  });
  if (config.trustProxy) app.addHook('onRequest', requireForwardedHttps);
  app.addHook('preValidation', async (request) => {
    if (!request.routeOptions.config.keepNulls) dropEmptyValues(request.body);
    dropEmptyValues(request.query);
  });

  const registry = createMetrics(app);
  rollupBacklogGauge(registry, database);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Waytrack API',
        version: '1.0.0',
        description:
          'Conversion tracking and attribution: record ad clicks and conversions, attribute each conversion to the click that caused it, forward it to Meta, and report store metrics.',
      },
      servers: [{ url: '/' }],
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'wt_live_… or wt_test_… API key' } },
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });
  const limiter = deps.limiter ?? new MemoryRateLimiter();
  await app.register(healthRoutes, { database, registry, limiter });

  const keys = deps.keys ?? new KeyStore(database);
  const cursors = new CursorCodec(await getOrCreateSecret(database, 'cursor_secret'));
  const idem = idempotency(database);
  const secrets = deps.secrets ?? new SecretBox(loadSecretsKey(config));
  const forwarding = new Dispatcher({
    database,
    secrets,
    graphUrl: config.metaGraphUrl,
    graphVersion: config.metaGraphVersion,
    syncWaitMs: config.capiSyncWaitMs,
    registry,
    log: app.log,
    tuning: deps.forwarding,
  });
  // The dispatcher runs with the app: it starts when the app is ready and stops on close,
  // before the server closes the database (server.ts), so every attempt in flight is recorded.
  app.decorate('forwarding', forwarding);
  app.addHook('onReady', async () => forwarding.start());
  app.addHook('onClose', async () => forwarding.stop());

  await app.register(
    async (v1) => {
      v1.addHook(
        'onRequest',
        authenticate({
          keys,
          limiter,
          keyPolicy: { rps: config.rateLimitRps, burst: config.rateLimitBurst },
          ipPolicy: { rps: config.ipRateLimitRps, burst: config.ipRateLimitRps * 2 },
        }),
      );
      v1.addHook('preHandler', idem.preHandler);
      v1.addHook('onSend', idem.onSend);

      // GET /v1/openapi.json — the OpenAPI 3.1 document (raw, not enveloped: tools read it as is)
      v1.get('/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => app.swagger());

      const routeDeps = { database, cursors, secrets, forwarding };
      await v1.register(clickRoutes, routeDeps);
      await v1.register(conversionRoutes, routeDeps);
      await v1.register(forwardingRoutes, routeDeps);
      await v1.register(storeRoutes, routeDeps);
      await v1.register(analyticsRoutes, routeDeps);
      await v1.register(spendRoutes, routeDeps);
    },
    { prefix: '/v1' },
  );
  return app;
}
