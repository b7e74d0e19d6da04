import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isUnavailableError } from '../db/database.js';
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
    default:
      break;
  }
  if (error instanceof SyntaxError || (error.statusCode === 400 && /JSON|prototype|constructor/i.test(error.message))) {
    return new ApiError('invalid_request', 'The request body is not valid JSON', { reason: 'malformed_json' });
  }
  if (error.statusCode === 413) return new ApiError('payload_too_large', 'The request body is larger than 1 MiB');
  return undefined;
}

/** Turns anything thrown into one envelope with the code table's status. Internals never leak. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) return fromSchemaErrors(fastifyError.validation as never, fastifyError.validationContext);
  const framework = fromFramework(fastifyError);
  if (framework) return framework;
  if (isUnavailableError(error)) {
    return new ApiError('service_unavailable', 'The database is unreachable; the request was not processed. Retry shortly.');
  }
  return new ApiError('internal_error', 'Something went wrong on our side. Quote the request id when reporting it.');
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const apiError = toApiError(error);
    if (apiError.status >= 500) request.log.error({ err: error }, 'request failed');
    if (apiError.headers) reply.headers(apiError.headers);
    return reply.code(apiError.status).send(errorBody(request, apiError));
  });

  app.setNotFoundHandler((request, reply) => {
    const error = new ApiError('not_found', `No route ${request.method} ${request.url.split('?')[0]}`);
    return reply.code(404).send(errorBody(request, error));
  });
}
