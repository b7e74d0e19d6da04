import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DiskFullError, isUnavailableError } from '../db/database.js';
import { errorBody } from './envelope.js';
import { ApiError } from './errors.js';
import { fromSchemaErrors } from './validation.js';

/** Framework errors (from Fastify's body parsing) → our codes. */
function fromFramework(error: FastifyError): ApiError | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('payload_too_large', 'The request body is larger than 1 MiB');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('invalid_request', 'The request body must be JSON sent with Content-Type: application/json', {
        field: 'Content-Type',
        reason: 'unsupported_media_type',
      });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('invalid_request', 'The request body is empty; send a JSON object', { reason: 'malformed_json' });
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError('invalid_request', 'The request body is not valid JSON', { reason: 'malformed_json' });
    case 'FST_ERR_ROUTE_MISSING_CONTENT_TYPE':
      return new ApiError('invalid_request', 'This method needs a JSON body sent with Content-Type: application/json', {
        field: 'Content-Type',
        reason: 'unsupported_media_type',
      });
    case 'FST_ERR_BAD_URL':
      return new ApiError('invalid_request', 'The request path is not a valid URL (bad percent-encoding)', {
        field: 'path',
        reason: 'invalid_format',
      });
    case 'FST_ERR_MAX_PARAM_LENGTH':
      // No id is that long: nothing can be found under it.
      return new ApiError('not_found', 'No object has an id that long (ids are at most 100 characters)');
    default:
      break;
  }
  if (error instanceof SyntaxError || (error.statusCode === 400 && /JSON|prototype|constructor/i.test(error.message))) {
    return new ApiError('invalid_request', 'The request body is not valid JSON', { reason: 'malformed_json' });
  }
  if (error.statusCode === 413) return new ApiError('payload_too_large', 'The request body is larger than 1 MiB');
  // Any other request Fastify refused (its errors carry a 4xx status and a plain message).
  if (typeof error.code === 'string' && error.code.startsWith('FST_') && error.statusCode && error.statusCode < 500) {
    return new ApiError('invalid_request', error.message, { reason: 'malformed_request' });
  }
  return undefined;
}

/** Turns anything thrown into one envelope with the code table's status. Internals never leak. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) return fromSchemaErrors(fastifyError.validation as never, fastifyError.validationContext);
  const framework = fromFramework(fastifyError);
  if (framework) return framework;
  if (isUnavailableError(error)) return unavailable(error, 'the request was not processed. Retry shortly.');
  return new ApiError('internal_error', 'Something went wrong on our side. Quote the request id when reporting it.');
}

/**
 * The database failing (503 service_unavailable), in words that say what is wrong: a full disk
 * and where (`details.reason` disk_full, `details.path`), or the database unreachable. `then`
 * ends the message.
 */
export function unavailable(error: unknown, then: string): ApiError {
  if (error instanceof DiskFullError) {
    return new ApiError('service_unavailable', `The database cannot write: disk full at ${error.location}; ${then}`, {
      reason: 'disk_full',
      path: error.location,
    });
  }
  return new ApiError('service_unavailable', `The database is unreachable; ${then}`);
}

/** The client went away while sending its body: nobody will read an answer, and it is not our failure. */
function clientAborted(request: FastifyRequest): boolean {
  return request.raw.readableAborted || (request.raw.destroyed && !request.raw.complete);
}

/**
 * Answers an error with the envelope and logs what deserves it: a failure of ours (500) with its
 * stack; the database being unavailable (503) in one line without a stack — under an outage
 * that line repeats per request; a client that aborted its upload at debug level only.
 */
export function answerError(error: unknown, request: FastifyRequest, reply: FastifyReply) {
  // Also for errors found before routing (frameworkErrors), where no onSend hook runs.
  reply.header('Request-Id', request.id);
  // No route has this method and path: Fastify still asks a QUERY request for a body first.
  if (request.is404 && (error as FastifyError).code === 'FST_ERR_ROUTE_MISSING_CONTENT_TYPE') {
    return answerNoRoute(request, reply);
  }
  if (clientAborted(request)) {
    request.log.debug({ code: (error as { code?: unknown }).code }, 'client aborted the request');
    return reply
      .code(400)
      .send(
        errorBody(
          request,
          new ApiError('invalid_request', 'The request body was not received completely', { reason: 'incomplete_body' }),
        ),
      );
  }
  const apiError = toApiError(error);
  // Fastify closes the connection after any body it could not parse, in case more of it is
  // coming; a body read whole leaves nothing unread, so the connection stays open (a client
  // that sent bad JSON need not pay for a new TLS handshake).
  if (KEEPS_CONNECTION.has(apiError.details?.reason as string) && request.raw.complete !== false)
    reply.removeHeader('connection');
  if (apiError.code === 'service_unavailable') {
    const cause = error as { code?: unknown; message?: unknown };
    request.log.warn({ cause: { code: cause.code, message: cause.message } }, 'database unavailable');
  } else if (apiError.status >= 500) {
    request.log.error({ err: error }, 'request failed');
  }
  if (apiError.headers) reply.headers(apiError.headers);
  return reply.code(apiError.status).send(errorBody(request, apiError));
}

/** Body errors after which the connection can be kept: the body was well framed, only its text was wrong. */
const KEEPS_CONNECTION = new Set(['malformed_json', 'invalid_unicode']);

/**
 * The methods each route path answers, to tell "no such path" (404) from "not this method"
 * (405 with `Allow`). Filled by an onRoute hook, so it sees every route registered after it.
 */
interface KnownRoute {
  pattern: RegExp;
  methods: Set<string>;
  /** Paths the pattern matches that the route does not serve (`config.notServing`). */
  notServing?: RegExp;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route path with its methods (http/error-handler.ts: 404 or 405). */
    knownRoutes: KnownRoute[];
  }
}

function patternOf(url: string): RegExp {
  const source = url
    .replace(/\/+$/, '')
    .split('/')
    .map((segment) =>
      segment === '*' ? '.*' : segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('/');
  return new RegExp(`^${source}/?$`);
}

function allowedMethods(request: FastifyRequest): string[] {
  const path = request.url.split('?')[0] ?? '/';
  const allowed = new Set<string>();
  for (const route of request.server.knownRoutes ?? []) {
    if (route.pattern.test(path) && !route.notServing?.test(path)) for (const method of route.methods) allowed.add(method);
  }
  return [...allowed].sort();
}

/**
 * A request no route takes: 405 with `Allow` when the path exists under other methods, else 404.
 * The contract's code list is closed, so a 405 carries `not_found` (no route has this method
 * and path) with `details.reason: method_not_allowed` and the methods in `details.allow`
 * (docs/api.md "Requests").
 */
function answerNoRoute(request: FastifyRequest, reply: FastifyReply) {
  const path = request.url.split('?')[0];
  const allow = allowedMethods(request);
  // No route for the path, or its route answers this method and found nothing (callNotFound).
  if (allow.length === 0 || allow.includes(request.method)) {
    return reply.code(404).send(errorBody(request, new ApiError('not_found', `No route ${request.method} ${path}`)));
  }
  const error = new ApiError('not_found', `${path} does not answer ${request.method}; it answers ${allow.join(', ')}`, {
    field: 'method',
    reason: 'method_not_allowed',
    allow,
  });
  return reply.code(405).header('Allow', allow.join(', ')).send(errorBody(request, error));
}

export function registerErrorHandling(app: FastifyInstance): void {
  const routes: KnownRoute[] = [];
  app.decorate('knownRoutes', routes);
  app.addHook('onRoute', (route) => {
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).map((m) => m.toUpperCase());
    const pattern = patternOf(route.url);
    const same = routes.find((r) => r.pattern.source === pattern.source);
    if (same) for (const method of methods) same.methods.add(method);
    else routes.push({ pattern, methods: new Set(methods), notServing: route.config?.notServing });
  });

  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => answerError(error, request, reply));

  app.setNotFoundHandler((request, reply) => answerNoRoute(request, reply));
}
