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
  if (apiError.code === 'service_unavailable') {
    const cause = error as { code?: unknown; message?: unknown };
    request.log.warn({ cause: { code: cause.code, message: cause.message } }, 'database unavailable');
  } else if (apiError.status >= 500) {
    request.log.error({ err: error }, 'request failed');
  }
  if (apiError.headers) reply.headers(apiError.headers);
  return reply.code(apiError.status).send(errorBody(request, apiError));
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => answerError(error, request, reply));

  app.setNotFoundHandler((request, reply) => {
    const error = new ApiError('not_found', `No route ${request.method} ${request.url.split('?')[0]}`);
    return reply.code(404).send(errorBody(request, error));
  });
}
