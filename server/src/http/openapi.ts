import type { SwaggerOptions } from '@fastify/swagger';
import type { FastifySwaggerUiOptions } from '@fastify/swagger-ui';
import type { FastifySchema, RouteOptions } from 'fastify';
import type { TSchema } from 'typebox';
import { Envelope, ErrorEnvelope } from './envelope.js';
import type { ErrorCode, ErrorDetails } from './errors.js';

/**
 * The reference documentation's side of the API (GET /v1/openapi.json, /docs): the document's
 * introduction and security scheme, the response maps every operation declares, the rules only
 * the domain checks, and the look of /docs. Route modules keep their own schemas; this file
 * writes once what they all share.
 */

// --- Example values in the real formats (ids from ids.ts: prefix + 10 time + 16 random) ----------

export const EXAMPLE = {
  storeId: 'st_01m40d7ga0hcj8g0c5t8qdyza9',
  clickId: 'clk_01m81a2z3ptbw873ps3nav8why',
  earlierClickId: 'clk_01m7x20b8g4p1p47tehr4cgp9k',
  conversionId: 'conv_01m81b1x7mejfs8pbrf1mkpgtb',
  spendId: 'spend_01m80xe2r01sqdkj2zqv6kyzwb',
  requestId: 'req_01m81b5h80g29zw7jfc70d39ta',
  fbclid: 'IwAR2F4-dbP0l7Mn1IawQQGCINEz7PYXQvwjNwB_qa2ofrHyiLjcbCRxTDMgk',
  earlierFbclid: 'IwAR0qS8k3Jm5vTgWcYh1LrN7pXe9bDfZ2uA4oKjH6iGyE_tQwVsMn0cRxBl',
  /** fb.1.<click time ms>.<fbclid> of the click above (2026-11-22T09:41:07.318Z). */
  fbc: 'fb.1.1795340467318.IwAR2F4-dbP0l7Mn1IawQQGCINEz7PYXQvwjNwB_qa2ofrHyiLjcbCRxTDMgk',
  fbp: 'fb.1.1795340461022.1116446470',
  fingerprint: '9f2c4e1b7a3d5f8e0c6b2a4d1e3f5a7c',
  ipAddress: '203.0.113.42',
  userAgent:
    'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
  landingPage:
    'https://shop.acme-outdoor.com/products/trail-runner?utm_source=facebook&utm_medium=paid_social&utm_campaign=autumn_sale&campaign_id=120210000123456789&fbclid=IwAR2F4-dbP0l7Mn1IawQQGCINEz7PYXQvwjNwB_qa2ofrHyiLjcbCRxTDMgk',
  clickTime: '2026-11-22T09:41:07.318Z',
  recordedAt: '2026-11-22T09:41:07.402Z',
  conversionTime: '2026-11-22T09:58:01.204Z',
  responseTime: '2026-11-22T10:00:00.000Z',
  /** A nextCursor as lists issue them: base64url([time, id]) and its HMAC. */
  cursor: 'WzE3OTUzNDA0NjczMTgsImNsa18wMW04MWEyejNwdGJ3ODczcHMzbmF2OHdoeSJd.6-CNSGnPpp-OUBWooH0n-Q',
} as const;

// --- Rules the request validator and the document share ---------------------------------------

/**
 * Rules the domain code also enforces (an absolute http(s) URL, an IP address, an ISO 4217
 * code, a date that exists), stated as JSON Schema: the request validator compiles exactly the
 * schema the document shows (formats asserted, http/validation.ts), so what the document
 * refuses the server refuses, and the domain's checks behind it accept everything the
 * document allows. `x-error-reason` and `x-error-message` keep the domain's words for them.
 */
export function domainRules(rules: Record<string, unknown>): Record<string, unknown> {
  return rules;
}

/**
 * What no JSON Schema can state, named in `x-rules` (docs/api.md "Reference documentation"
 * lists them): `iso-4217` (a currency code that exists), `not-in-future` (at most 5 minutes
 * ahead), `click-max-age` (at most 90 days back), `iana-time-zone`, `date-exists`
 * (2026-02-30 does not), `unique-entries` (no two ad spend entries with one key).
 */
export function serverRules(...rules: string[]): Record<string, unknown> {
  return { 'x-rules': rules };
}

/** An absolute http(s) URL, as tracking/input.ts checkHttpUrl accepts. */
export const HTTP_URL = domainRules({
  format: 'uri',
  pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/?#]+([/?#]\\S*)?$',
  'x-error-reason': 'invalid_url',
  'x-error-message': 'must be an absolute http(s) URL',
});

/** An IPv4 or IPv6 address (node:net isIP). */
export const IP_ADDRESS = domainRules({
  anyOf: [
    { type: 'string', format: 'ipv4' },
    { type: 'string', format: 'ipv6' },
  ],
  'x-error-message': 'must be a valid IPv4 or IPv6 address',
});

/**
 * A three-letter ISO 4217 code in any case (money.ts normalizeCurrency upper-cases it); that
 * the code exists is `x-rules: iso-4217`.
 */
export const CURRENCY_CODE = {
  ...domainRules({ pattern: '^[A-Za-z]{3}$', 'x-error-message': 'must be a three-letter ISO 4217 currency code like USD' }),
  ...serverRules('iso-4217'),
};

/** A calendar date that exists (calendar/dates.ts isValidDate; 2026-02-30 is `x-rules: date-exists`). */
export const CALENDAR_DATE = {
  ...domainRules({ pattern: '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])$', format: 'date' }),
  ...serverRules('date-exists'),
};

/**
 * An ISO 8601 date-time with an offset, as tracking/input.ts parseEventTime reads it: T and Z
 * in either case, seconds optional, up to 9 decimals, offset ±hh:mm or ±hhmm. No `format:
 * date-time`: RFC 3339 requires the seconds. Not more than 5 minutes ahead is `x-rules`.
 */
export const DATE_TIME = {
  ...domainRules({
    pattern:
      '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])[Tt]([01]\\d|2[0-3]):[0-5]\\d(:[0-5]\\d(\\.\\d{1,9})?)?([Zz]|[+-]([01]\\d|2[0-3]):?[0-5]\\d)$',
    'x-error-message': 'must be an ISO 8601 date-time with a time zone, like 2026-11-22T10:00:00Z',
  }),
  ...serverRules('date-exists', 'not-in-future'),
};

/** A hostname (stores.ts checkDomain, which also lower-cases it). */
export const HOSTNAME = domainRules({
  format: 'hostname',
  pattern: '^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$',
  'x-error-message': 'must be a hostname like shop.example.com (no scheme or path)',
});

// --- Responses --------------------------------------------------------------------------------

/** One documented error: the example's title, and the envelope's `error`. */
export interface ErrorExample {
  summary: string;
  code: ErrorCode;
  message: string;
  details?: ErrorDetails;
}

type Named<T> = Record<string, T>;

/** A success example: its title and the envelope's `data`. */
export interface DataExample {
  summary: string;
  data: unknown;
}

const exampleMeta = { timestamp: EXAMPLE.responseTime, requestId: EXAMPLE.requestId };

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
  summary: 'A publishable key on an operation other than POST /v1/track/click',
  code: 'forbidden',
  message: 'A publishable key is accepted only by POST /v1/track/click; use a secret key',
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
  /** 201 for a created resource; default 200. */
  status?: 200 | 201;
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

// --- The document ----------------------------------------------------------------------------

const SCOPES = [
  ['clicks:write', 'POST /v1/track/click'],
  ['conversions:write', 'POST /v1/track/conversion, re-attribute and resend a conversion'],
  ['conversions:read', 'GET /v1/conversions, GET /v1/conversions/{id}'],
  ['clicks:read', 'GET /v1/clicks, GET /v1/clicks/{id}'],
  ['stores:read', 'GET /v1/stores, GET /v1/stores/{id}'],
  ['stores:write', 'POST /v1/stores, PATCH /v1/stores/{id}'],
  ['analytics:read', 'GET /v1/analytics/*, GET /v1/stores/{id}/ad-spend'],
  ['spend:write', 'POST /v1/stores/{id}/ad-spend'],
  ['webhooks:read', 'GET /v1/webhooks, GET /v1/webhooks/{id}/deliveries'],
  ['webhooks:write', 'POST and DELETE /v1/webhooks, resend a delivery (and everything webhooks:read allows)'],
] as const;

const INFO = {
  title: 'Waytrack API',
  version: '1.0.0',
  description: [
    'Waytrack is self-hosted conversion tracking: it records the clicks your Meta ads bring (`fbclid`), records your store’s conversions, attributes each conversion to the click that caused it with a confidence score, forwards it to Meta’s Conversions API, and reports per-store metrics with exact money.',
    '',
    '**Conventions shared by every `/v1` operation**',
    '- HTTPS only; JSON bodies (`Content-Type: application/json`, at most 1 MiB) whose values are never coerced (`"10"` is not a number).',
    '- Every answer is an envelope: `{"success": true, "data": …, "meta": {timestamp, requestId}}`, or `{"success": false, "error": {code, message, details}, "meta": …}`; `meta.requestId` equals the `Request-Id` header. Error codes are a closed list, each with one HTTP status.',
    '- `Authorization: Bearer <API key>`: live, test and publishable keys and their scopes are described under *Authorize* (security scheme `bearerAuth`).',
    '- Duplicates are safe: a click is recorded once per store and `fbclid`, a conversion once per store, `eventType` and `orderId`; a repeat returns the original with `duplicate: true`. Every POST and PATCH also takes an `Idempotency-Key` header (1–255 characters, remembered 24 h).',
    '- Lists are paginated with `limit` (1–100, default 20) and the previous page’s `nextCursor` as `cursor`, newest first.',
    '- Rate limits per key (by default 100 requests/s, bursts of 200), shown in the `RateLimit-Policy` and `RateLimit` headers; a 429 says when to retry in `Retry-After`.',
    '- Ids are opaque strings with a type prefix: `st_` store, `clk_` click, `conv_` conversion, `spend_` ad spend, `req_` request.',
    '',
    '**Guides**',
    '- The dashboard of this server: [/dashboard](/dashboard) (Settings → API keys creates keys).',
    '- In the Waytrack repository: `README.md` (quick start), `docs/api.md` (decisions: attribution scores, forwarding to Meta, errors), `docs/integrations.md` (shops and the browser tag), `docs/deploy.md`, `docs/dashboard.md`.',
    '- Client libraries with these operations as methods: `packages/client` (TypeScript), `sdks/python`, `sdks/php`. The browser tag is served at `/tag.js` (source in `packages/tag`).',
    '- This document: `GET /v1/openapi.json` (no key needed); every operation has an `operationId` for code generators.',
  ].join('\n'),
};

const SECURITY_SCHEMES = {
  bearerAuth: {
    type: 'http' as const,
    scheme: 'bearer',
    description: [
      'An API key in `Authorization: Bearer <key>`. A key is shown once, when it is created; the server keeps only its SHA-256.',
      '',
      '| key | where it goes | what it does |',
      '|---|---|---|',
      '| `wt_live_…` | your server | live data: real metrics, forwarded to Meta |',
      '| `wt_test_…` | your server | test data only: it never moves a live metric, and reaches Meta only with the store’s `capiTestEventCode` |',
      '| `wt_pk_live_…`, `wt_pk_test_…` | web pages (the browser tag) | publishable: one store, `clicks:write` only, accepted only from an `Origin` on the store’s domain (or the key’s extra origins) over https |',
      '',
      'A key sees only its own account’s stores and data, and only its own mode’s clicks, conversions, metrics and spend (stores are shared by both modes).',
      '',
      '**Scopes.** A key carries a set of scopes; `*` means all. Each operation names the one it needs; a key without it gets 403 `forbidden` with `details.requiredScope`.',
      ...SCOPES.map(([scope, what]) => `- \`${scope}\`: ${what}`),
      '',
      '**Getting a key.** `waytrack account create --email you@example.com` creates an account and prints its first live and test keys; `waytrack keys create --account acct_… --mode live|test [--scopes a,b]` makes more, and `waytrack keys create --publishable --store st_… [--origins https://…]` one for the browser tag. The dashboard does the same under Settings → API keys (`/dashboard`). A revoked key is refused within 5 seconds.',
    ].join('\n'),
  },
};

const TAGS = [
  { name: 'Tracking', description: 'Record ad clicks and conversions; conversions are attributed and forwarded to Meta.' },
  { name: 'Conversions', description: 'Read conversions, see why they were attributed, re-attribute and resend them to Meta.' },
  { name: 'Clicks', description: 'Read recorded clicks.' },
  { name: 'Stores', description: 'The shops whose traffic is tracked, with their attribution and Meta settings.' },
  { name: 'Analytics', description: 'Metrics, time series and breakdowns of a store, in its currency and time zone.' },
  { name: 'Ad spend', description: 'Daily ad spend, for ROAS.' },
  { name: 'Operations', description: 'Liveness, readiness and Prometheus metrics: no key, never rate limited.' },
];

interface DocumentedConfig {
  scope?: string;
  keepNulls?: boolean;
  publishable?: boolean;
}

/**
 * Per route (@fastify/swagger `transform`): the scope the route enforces (`config.scope`, read
 * by the auth hook) is written into its description and its 403 example, from the one place
 * it is declared.
 */
function documentRoute({ schema, url, route }: { schema: FastifySchema; url: string; route: RouteOptions }): {
  schema: FastifySchema;
  url: string;
} {
  const { scope, keepNulls } = (route.config ?? {}) as DocumentedConfig;
  if (schema?.body && !keepNulls) schema = { ...schema, body: absentable(JSON.parse(JSON.stringify(schema.body))) };
  const documented = schema as FastifySchema & { hide?: boolean; description?: string; response?: Named<unknown> };
  if (!schema || documented.hide || !scope) return { schema, url };
  const line = `**Scope:** \`${scope}\` (or \`*\`).`;
  const description = documented.description ? `${documented.description}\n\n${line}` : line;
  const response = { ...documented.response };
  const forbidden = response[403] as ReturnType<typeof errorResponse> | undefined;
  if (forbidden) {
    response[403] = {
      ...forbidden,
      'x-examples': {
        missingScope: {
          summary: `A key without the ${scope} scope`,
          value: {
            success: false,
            error: { code: 'forbidden', message: `This API key lacks the ${scope} scope`, details: { requiredScope: scope } },
            meta: exampleMeta,
          },
        },
        ...forbidden['x-examples'],
      },
    };
  }
  return { schema: { ...schema, description, response }, url };
}

type Json = Record<string, unknown>;

const IDEMPOTENCY_KEY = {
  in: 'header',
  name: 'Idempotency-Key',
  required: false,
  description:
    'Makes a retry safe: within 24 h, the same key with the same body returns the stored response (header `Idempotent-Replayed: true`); the same key with another body is 400 `invalid_request` (reason `idempotency_key_reused`). 1–255 characters; a fresh random value (a UUID) per logical request.',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
  example: '5d0f8a4e-9c1b-4f0a-8e58-2b7c3d1e6f90',
};

/**
 * A request body as the server reads it (http/validation.ts prepareInput): an optional property
 * sent as `null` or `""` is absent, so the document allows exactly that — each optional property
 * is `anyOf: [its schema, {type: null}, {const: ""}]`, at every depth. Not for routes that keep
 * nulls (`config.keepNulls`: PATCH, where null clears a field and its schema says so).
 */
function absentable(schema: Json): Json {
  if (Array.isArray(schema.anyOf) && schema.type === undefined) {
    return { ...schema, anyOf: schema.anyOf.map((s: Json) => absentable(s)) };
  }
  if (schema.type === 'array' && schema.items) return { ...schema, items: absentable(schema.items as Json) };
  if (schema.type !== 'object' || !schema.properties) return schema;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const properties = Object.fromEntries(
    Object.entries(schema.properties as Record<string, Json>).map(([name, property]) => {
      const inner = absentable(property);
      if (required.has(name)) return [name, inner];
      const { description, ...rest } = inner;
      return [
        name,
        {
          ...(description !== undefined && { description: `${description} (null or "" is the same as leaving it out)` }),
          anyOf: [rest, { type: 'null' }, { const: '' }],
        },
      ];
    }),
  );
  return { ...schema, properties };
}

/**
 * The whole document (@fastify/swagger `transformObject`), once per app: the Idempotency-Key
 * header (http/idempotency.ts: every authenticated POST and PATCH) on the operations that take it.
 */
function transformDocument(input: { openapiObject: unknown } | { swaggerObject: unknown }): Json {
  const source = 'openapiObject' in input ? input.openapiObject : input.swaggerObject;
  const document = JSON.parse(JSON.stringify(source)) as Json & { paths: Record<string, Record<string, Json>> };
  for (const [path, operations] of Object.entries(document.paths ?? {})) {
    if (!path.startsWith('/v1/')) continue;
    for (const [method, operation] of Object.entries(operations)) {
      if (method !== 'post' && method !== 'patch') continue;
      operation.parameters = [...((operation.parameters as unknown[]) ?? []), IDEMPOTENCY_KEY];
    }
  }
  return document;
}

/** @fastify/swagger options: the document's introduction, tags, security scheme and the two transforms above. */
export const DOCUMENT: SwaggerOptions = {
  openapi: {
    openapi: '3.1.0',
    info: INFO,
    servers: [{ url: '/' }],
    tags: TAGS,
    components: { securitySchemes: SECURITY_SCHEMES },
  },
  transform: documentRoute,
  transformObject: transformDocument,
};

// --- /docs --------------------------------------------------------------------------------------

/** The wordmark of the /docs top bar: a waypoint mark and the name, white on the bar's colour. */
const LOGO_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="188" height="40" viewBox="0 0 188 40" role="img" aria-label="Waytrack">
<title>Waytrack</title>
<path d="M20 4c-6.6 0-12 5.2-12 11.7C8 24.5 20 36 20 36s12-11.5 12-20.3C32 9.2 26.6 4 20 4z" fill="#34d399"/>
<path d="M13.5 14.5l3.2 7.5 3.3-6 3.3 6 3.2-7.5" fill="none" stroke="#0b3b2e" stroke-width="2.2" stroke-linecap="round" stroke-linejoin="round"/>
<text x="42" y="27" font-family="Inter, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif" font-size="21" font-weight="700" letter-spacing="0.3" fill="#ffffff">Waytrack</text>
<text x="142" y="27" font-family="Inter, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif" font-size="13" font-weight="500" fill="#a7f3d0">API</text>
</svg>`;

const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><title>Waytrack</title>
<rect width="32" height="32" rx="7" fill="#0f5132"/>
<path d="M7 10l4 12 5-8 5 8 4-12" fill="none" stroke="#34d399" stroke-width="3" stroke-linecap="round" stroke-linejoin="round"/>
</svg>`;

/** Readable defaults over Swagger UI's: the brand bar, wider measure, calmer operation blocks; no spec-URL box. */
const DOCS_CSS = `
body { margin: 0; background: #f8faf9; }
.swagger-ui, .swagger-ui .info .title, .swagger-ui .opblock-tag, .swagger-ui .opblock .opblock-summary-description {
  font-family: Inter, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif;
}
.swagger-ui .topbar { background: #0f5132; padding: 8px 0; }
.swagger-ui .topbar .download-url-wrapper { display: none; }
.swagger-ui .topbar .topbar-wrapper > a.link { max-width: none; }
.swagger-ui .topbar .topbar-wrapper img { height: 40px; }
.swagger-ui .wrapper { max-width: 1180px; }
.swagger-ui .info { margin: 32px 0 24px; }
.swagger-ui .info .title { color: #0f5132; }
.swagger-ui .info .description, .swagger-ui .markdown p, .swagger-ui .markdown li, .swagger-ui .renderedMarkdown p {
  font-size: 15px; line-height: 1.6; color: #1f2937;
}
.swagger-ui .markdown code, .swagger-ui .renderedMarkdown code { background: #ecfdf5; color: #065f46; padding: 1px 4px; border-radius: 4px; }
.swagger-ui .opblock { border-radius: 8px; box-shadow: none; }
.swagger-ui .opblock .opblock-summary-operation-id { font-size: 13px; color: #4b5563; }
.swagger-ui .opblock-tag { border-bottom-color: #d1fae5; }
.swagger-ui .btn.authorize { border-color: #059669; color: #059669; }
.swagger-ui .btn.authorize svg { fill: #059669; }
.swagger-ui table tbody tr td, .swagger-ui .parameter__name { font-size: 14px; }
`;

/** @fastify/swagger-ui options: Waytrack's name, logo, favicon and styles over Swagger UI. */
export const DOCS_UI: FastifySwaggerUiOptions = {
  routePrefix: '/docs',
  staticCSP: true,
  logo: { type: 'image/svg+xml', content: Buffer.from(LOGO_SVG), href: '/docs' },
  theme: {
    title: 'Waytrack API reference',
    css: [{ filename: 'waytrack.css', content: DOCS_CSS }],
    favicon: [{ filename: 'favicon.svg', rel: 'icon', type: 'image/svg+xml', sizes: 'any', content: FAVICON_SVG }],
  },
  uiConfig: {
    docExpansion: 'list',
    deepLinking: true,
    displayOperationId: true,
    defaultModelsExpandDepth: 0,
    displayRequestDuration: true,
  },
};
