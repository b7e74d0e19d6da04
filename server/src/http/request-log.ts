import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Probes polled every few seconds by load balancers and scrapers: logged at debug level while they succeed. */
const PROBES = new Set(['/healthz', '/readyz', '/metrics']);

/** The envelope's error code of each error response, read as it is sent. */
const errorCodes = new WeakMap<FastifyRequest, string>();

function errorCodeOf(payload: unknown): string | undefined {
  const text = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : undefined;
  // Error envelopes are small; anything else (a stream, a large or non-JSON body) has no code.
  if (text === undefined || text.length > 65_536 || !text.startsWith('{')) return undefined;
  try {
    const code = (JSON.parse(text) as { error?: { code?: unknown } }).error?.code;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}

/**
 * One log line per request, written when the response is sent (Fastify's own "incoming
 * request" and "request completed" lines are switched off in app.ts): method, the route's
 * pattern (`/v1/stores/:id`, never the URL, which may carry ids and query values), status,
 * response time in milliseconds, the request id (`reqId`, from the request's logger) and, for
 * an error, the envelope's `code`. Never headers, query strings or bodies: they carry keys,
 * Idempotency-Keys and customer data. The line is at info level whatever the status: failures
 * worth attention have a line of their own from the error handler (500 with its stack, 503 as
 * one warning).
 */
export function registerRequestLog(app: FastifyInstance): void {
  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    if (reply.statusCode >= 400) {
      const code = errorCodeOf(payload);
      if (code) errorCodes.set(request, code);
    }
    return payload;
  });
  app.addHook('onResponse', async (request: FastifyRequest, reply: FastifyReply) =>
    writeLine(request, reply, request.routeOptions.url ?? 'unmatched', errorCodes.get(request)),
  );
}

/**
 * The line of a request refused before routing (a malformed URL: Fastify's frameworkErrors),
 * where no hook runs: written when its response has been sent. `code` is the envelope's.
 */
export function logRefusedBeforeRouting(request: FastifyRequest, reply: FastifyReply, code: string): void {
  reply.raw.once('finish', () => writeLine(request, reply, 'unmatched', code));
}

function writeLine(request: FastifyRequest, reply: FastifyReply, route: string, code: string | undefined): void {
  const status = reply.statusCode;
  const elapsed = reply.elapsedTime;
  const line = {
    method: request.method,
    route,
    status,
    responseTimeMs: Number.isFinite(elapsed) ? Math.round(elapsed * 10) / 10 : undefined,
    ...(status >= 400 && { code }),
  };
  const message = `${request.method} ${route} ${status}`;
  if (status < 400 && PROBES.has(route)) request.log.debug(line, message);
  else request.log.info(line, message);
}
