import type { FastifyRequest } from 'fastify';
import { type Static, type TSchema, Type } from 'typebox';
import { type ApiError, ERROR_STATUS, type ErrorCode } from './errors.js';

/** The success and error envelopes every response is wrapped in (api.md §1 "Envelope"). */

export const Meta = Type.Object({
  timestamp: Type.String({ description: 'ISO 8601 UTC time of the response', examples: ['2026-11-22T10:00:00.000Z'] }),
  requestId: Type.String({
    description: 'Equals the Request-Id header; quote it when reporting a problem',
    examples: ['req_01m81b5h80g29zw7jfc70d39ta'],
  }),
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
        description: 'One of a closed list, each with one HTTP status: switch on it (the message may change)',
        examples: ['missing_required_field'],
      }),
      message: Type.String({ description: 'For people: what went wrong and how to fix it', examples: ['fbclid is required'] }),
      details: Type.Optional(
        Type.Object(
          {
            field: Type.Optional(
              Type.String({
                description: 'JSON path of the offending parameter (products[2].quantity, customerData.email, startDate)',
              }),
            ),
            reason: Type.Optional(
              Type.String({
                description:
                  'snake_case word: required_field_missing, invalid_type, invalid_format, out_of_range, invalid_url, expired, unknown_value, …',
              }),
            ),
          },
          {
            additionalProperties: true,
            description:
              'Present when one parameter is at fault; some errors add more (requiredScope on 403, retryAfterSeconds on 429)',
          },
        ),
      ),
    }),
    meta: Meta,
  },
  { $id: 'ErrorEnvelope', description: 'Every error, whatever its status' },
);

/** The last timestamp written, by its millisecond: formatting one costs ~0.6–0.8 µs, and under load many responses share a millisecond. */
let lastTimestamp = { ms: -1, iso: '' };

function timestamp(): string {
  const ms = Date.now();
  if (ms !== lastTimestamp.ms) lastTimestamp = { ms, iso: new Date(ms).toISOString() };
  return lastTimestamp.iso;
}

function meta(request: FastifyRequest) {
  return { timestamp: timestamp(), requestId: request.id };
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
