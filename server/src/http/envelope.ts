import type { FastifyRequest } from 'fastify';
import { type Static, type TSchema, Type } from 'typebox';
import { type ApiError, ERROR_STATUS, type ErrorCode } from './errors.js';

/** The success and error envelopes every response is wrapped in (api.md §1 "Envelope"). */

export const Meta = Type.Object({
  timestamp: Type.String({ description: 'ISO 8601 UTC time of the response', examples: ['2026-11-22T10:00:00.000Z'] }),
  requestId: Type.String({ description: 'Equals the Request-Id header', examples: ['req_01jf3k5x2m7q9r8s4t6v0w1y2z'] }),
});

export function Envelope<T extends TSchema>(data: T) {
  return Type.Object({ success: Type.Literal(true), data, meta: Meta });
}

export const ErrorEnvelope = Type.Object(
  {
    success: Type.Literal(false),
    error: Type.Object({
      // The closed list of api.md §1: clients can switch on it.
      code: Type.Unsafe<ErrorCode>({
        type: 'string',
        enum: Object.keys(ERROR_STATUS),
        examples: ['missing_required_field'],
      }),
      message: Type.String({ examples: ['fbclid is required'] }),
      details: Type.Optional(
        Type.Object(
          {
            field: Type.Optional(Type.String({ examples: ['fbclid'] })),
            reason: Type.Optional(Type.String({ examples: ['required_field_missing'] })),
          },
          { additionalProperties: true },
        ),
      ),
    }),
    meta: Meta,
  },
  { $id: 'ErrorEnvelope', description: 'Every error, whatever its status' },
);

function meta(request: FastifyRequest) {
  return { timestamp: new Date().toISOString(), requestId: request.id };
}

export function ok<T>(request: FastifyRequest, data: T): { success: true; data: T; meta: Static<typeof Meta> } {
  return { success: true, data, meta: meta(request) };
}

export function errorBody(request: FastifyRequest, error: ApiError): Static<typeof ErrorEnvelope> {
  return {
    success: false,
    error: { code: error.code, message: error.message, ...(error.details && { details: error.details }) },
    meta: meta(request),
  };
}
