import type { TSchema } from 'typebox';
import { Envelope, ErrorEnvelope } from '../envelope.js';
import type { ErrorCode, ErrorDetails } from '../errors.js';
import { EXAMPLE } from './formats.js';

// --- Responses --------------------------------------------------------------------------------

/** One documented error: the example's title, and the envelope's `error`. */
export interface ErrorExample {
  summary: string;
  code: ErrorCode;
  message: string;
  details?: ErrorDetails;
}

export type Named<T> = Record<string, T>;

/** A success example: its title and the envelope's `data`. */
export interface DataExample {
  summary: string;
  data: unknown;
}

export const exampleMeta = { timestamp: EXAMPLE.responseTime, requestId: EXAMPLE.requestId };

const { $id: _omit, ...errorSchema } = ErrorEnvelope as typeof ErrorEnvelope & { $id?: string };

const mapValues = <T, U>(record: Named<T>, f: (value: T) => U): Named<U> =>
  Object.fromEntries(Object.entries(record).map(([name, value]) => [name, f(value)]));

const REQUEST_ID_HEADER = {
  'Request-Id': { type: 'string', description: 'Equals meta.requestId', examples: [EXAMPLE.requestId] },
};

/**
 * The error envelope as one status documents it: a description of when it happens, and named
 * examples (`x-examples` become the media type's examples). The code keeps the one closed enum.
 */
export function errorResponse(description: string, examples: Named<ErrorExample>, headers: Named<unknown> = {}) {
  const first = Object.values(examples)[0] as ErrorExample;
  const codes = [...new Set(Object.values(examples).map((e) => e.code))];
  const error = errorSchema.properties.error;
  return {
    ...errorSchema,
    description,
    properties: {
      ...errorSchema.properties,
      error: {
        ...error,
        properties: {
          ...error.properties,
          code: { ...error.properties.code, examples: codes },
          message: { ...error.properties.message, examples: [first.message] },
        },
      },
    },
    headers: { ...REQUEST_ID_HEADER, ...headers },
    'x-examples': mapValues(examples, ({ summary, code, message, details }) => ({
      summary,
      value: { success: false, error: { code, message, ...(details && { details }) }, meta: exampleMeta },
    })),
  };
}

const RATE_LIMIT_HEADERS = {
  'RateLimit-Policy': {
    type: 'string',
    description: 'The key’s bucket: size q, window w seconds',
    examples: ['"default";q=200;w=1'],
  },
  RateLimit: {
    type: 'string',
    description: 'Requests r left; t seconds until the bucket refills',
    examples: ['"default";r=57;t=1'],
  },
};

const BAD_JSON: Named<ErrorExample> = {
  malformedJson: {
    summary: 'The body is not JSON',
    code: 'invalid_request',
    message: 'The request body is not valid JSON',
    details: { reason: 'malformed_json' },
  },
};

const REUSED_KEY: Named<ErrorExample> = {
  idempotencyKeyReused: {
    summary: 'Idempotency-Key reused with another body',
    code: 'invalid_request',
    message: 'This Idempotency-Key was used with a different request',
    details: { field: 'Idempotency-Key', reason: 'idempotency_key_reused' },
  },
};

const UNAUTHORIZED = errorResponse(
  'No usable API key: the Authorization header is missing or not `Bearer`, or the key is unknown, malformed or revoked (code `unauthorized`)',
  {
    missingKey: {
      summary: 'No Authorization header',
      code: 'unauthorized',
      message: 'Missing Authorization header; send Authorization: Bearer <API key>',
    },
    revokedKey: { summary: 'A revoked key', code: 'unauthorized', message: 'This API key has been revoked' },
  },
);

const HTTPS_REQUIRED: ErrorExample = {
  summary: 'Sent over plain HTTP',
  code: 'https_required',
  message: 'This API is served over HTTPS only; resend the request to the https:// address',
};

const PUBLISHABLE_REFUSED: ErrorExample = {
  summary: 'A publishable key on an operation other than POST /v1/track/click and POST /v1/track/identify',
  code: 'forbidden',
  message: 'A publishable key is accepted only by POST /v1/track/click and POST /v1/track/identify; use a secret key',
  details: { reason: 'publishable_key_not_allowed' },
};

const TOO_MANY = errorResponse(
  'Over the key’s rate limit (or, without a valid key, the client IP’s): wait `Retry-After` seconds (code `rate_limit_exceeded`)',
  {
    rateLimited: {
      summary: 'Over the rate limit',
      code: 'rate_limit_exceeded',
      message: 'Too many requests; retry after 1 s',
      details: { retryAfterSeconds: 1 },
    },
  },
  {
    'Retry-After': { type: 'integer', description: 'Whole seconds to wait before retrying', examples: [1] },
    ...RATE_LIMIT_HEADERS,
  },
);

const TOO_LARGE = errorResponse('The body is larger than 1 MiB (code `payload_too_large`)', {
  tooLarge: { summary: 'A body over 1 MiB', code: 'payload_too_large', message: 'The request body is larger than 1 MiB' },
});

const INTERNAL = errorResponse(
  'Something failed on the server’s side (code `internal_error`); the body never carries internals: quote `meta.requestId`',
  {
    internalError: {
      summary: 'An unexpected failure',
      code: 'internal_error',
      message: 'Something went wrong on our side. Quote the request id when reporting it.',
    },
  },
);

const UNAVAILABLE = errorResponse(
  'The database is unreachable (code `service_unavailable`): nothing was processed, so retrying the same request is safe',
  {
    serviceUnavailable: {
      summary: 'The database is unreachable',
      code: 'service_unavailable',
      message: 'The database is unreachable; the request was not processed. Retry shortly.',
    },
  },
);

/** Which errors an operation can answer. */
export interface ErrorOptions {
  /** Unauthenticated operations (health): no 401, 429 or scope. Default false. */
  public?: boolean;
  /** A POST or PATCH: takes a body up to 1 MiB (413) and an Idempotency-Key. */
  write?: boolean;
  /** The body is JSON (malformed JSON is a 400). */
  json?: boolean;
  /** This operation's own 400 cases (validation), besides the shared ones. */
  invalid?: Named<ErrorExample>;
  /** 403 cases of this operation, instead of the publishable-key refusal every other operation gives. */
  forbidden?: Named<ErrorExample>;
  /** The 404 cases, when the operation looks a resource up. */
  notFound?: Named<ErrorExample>;
  /** Needs the database (a 503 when it is away). Default true. */
  database?: boolean;
}

export interface ResponseOptions extends ErrorOptions {
  /** 201 for a created resource, 202 for work accepted to run later; default 200. */
  status?: 200 | 201 | 202;
  /** What the success response means ("The click was recorded"). */
  description: string;
  /** Named success examples (the envelope's `data`; the envelope is added). */
  examples: Named<DataExample>;
}

/**
 * The response map of a documented operation: the success envelope, then every error status it
 * can answer with the error envelope, a description and realistic examples. Fastify serializes
 * each status with its schema; all error schemas are the same envelope.
 */
export function describeResponses(data: TSchema, options: ResponseOptions) {
  const success = {
    ...Envelope(data),
    description: options.description,
    headers: options.public ? REQUEST_ID_HEADER : { ...REQUEST_ID_HEADER, ...RATE_LIMIT_HEADERS },
    'x-examples': mapValues(options.examples, ({ summary, data: value }) => ({
      summary,
      value: { success: true, data: value, meta: exampleMeta },
    })),
  };
  return { [options.status ?? 200]: success, ...errorResponses(options) };
}

/** The error statuses of an operation, each with the error envelope, a description and examples. */
export function errorResponses(options: ErrorOptions): Record<string, unknown> {
  const invalid = {
    ...options.invalid,
    ...(options.json && BAD_JSON),
    ...(options.write && !options.public && REUSED_KEY),
  };
  const responses: Record<string, unknown> = {};
  if (Object.keys(invalid).length > 0) {
    responses[400] = errorResponse(
      'The request is invalid: `missing_required_field` (absent, null or empty), `invalid_request` (wrong type, format or range, unknown parameter, bad cursor, malformed JSON, reused Idempotency-Key) or a field-specific code. `details.field` names the parameter.',
      invalid,
    );
  }
  if (!options.public) responses[401] = UNAUTHORIZED;
  responses[403] = errorResponse(
    options.public
      ? 'The request came over plain HTTP (code `https_required`)'
      : 'The key lacks the scope this operation needs (code `forbidden`, `details.requiredScope`), a publishable key was refused (outside POST /v1/track/click, from another origin, or for another store), or the request came over plain HTTP (`https_required`)',
    options.public
      ? { httpsRequired: HTTPS_REQUIRED }
      : { ...(options.forbidden ?? { publishableKey: PUBLISHABLE_REFUSED }), httpsRequired: HTTPS_REQUIRED },
  );
  if (options.notFound) {
    const codes = [...new Set(Object.values(options.notFound).map((e) => `\`${e.code}\``))].join(' or ');
    responses[404] = errorResponse(
      `Not found (${codes}): unknown, or owned by another account — the answer never says which`,
      options.notFound,
    );
  }
  if (options.write) responses[413] = TOO_LARGE;
  if (!options.public) responses[429] = TOO_MANY;
  responses[500] = INTERNAL;
  if (options.database ?? true) responses[503] = UNAVAILABLE;
  return responses;
}

/** 404 example of an unknown store. */
export const STORE_NOT_FOUND: Named<ErrorExample> = {
  storeNotFound: {
    summary: 'Unknown store, another account’s, or (for tracking) inactive',
    code: 'store_not_found',
    message: `No store ${EXAMPLE.storeId}`,
    details: { field: 'storeId' },
  },
};

/** 400 example of a path id longer than any id. */
export const ID_TOO_LONG: Named<ErrorExample> = {
  idTooLong: {
    summary: 'An id longer than any id',
    code: 'invalid_request',
    message: 'id must be at most 64 characters',
    details: { field: 'id', reason: 'out_of_range' },
  },
};

/** The 400 examples of a startDate/endDate range (analytics, lists, ad spend). */
export const DATE_RANGE_ERRORS: Named<ErrorExample> = {
  badDate: {
    summary: 'A date that is not YYYY-MM-DD',
    code: 'invalid_request',
    message: 'startDate must be a date in YYYY-MM-DD format',
    details: { field: 'startDate', reason: 'invalid_format' },
  },
  reversedRange: {
    summary: 'startDate after endDate',
    code: 'invalid_request',
    message: 'startDate must not be after endDate',
    details: { field: 'startDate', reason: 'out_of_range' },
  },
  rangeTooLong: {
    summary: 'A range over 731 days',
    code: 'invalid_request',
    message: 'the range may cover at most 731 days',
    details: { field: 'endDate', reason: 'out_of_range' },
  },
};

/** The 400 examples every paginated list shares. */
export const PAGE_ERRORS: Named<ErrorExample> = {
  limitOutOfRange: {
    summary: 'limit outside 1–100',
    code: 'invalid_request',
    message: 'limit must be <= 100',
    details: { field: 'limit', reason: 'out_of_range' },
  },
  badCursor: {
    summary: 'A cursor this list did not issue',
    code: 'invalid_request',
    message: 'cursor is not a cursor this list returned',
    details: { field: 'cursor', reason: 'invalid_format' },
  },
};
