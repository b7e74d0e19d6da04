import type { SwaggerOptions } from '@fastify/swagger';
import type { FastifySchema, RouteOptions } from 'fastify';
import { type errorResponse, exampleMeta, type Named } from './responses.js';

// --- The document ----------------------------------------------------------------------------

const SCOPES = [
  ['clicks:write', 'POST /v1/track/click'],
  ['conversions:write', 'POST /v1/track/conversion, re-attribute and resend a conversion'],
  ['conversions:read', 'GET /v1/conversions, GET /v1/conversions/{id}'],
  ['clicks:read', 'GET /v1/clicks, GET /v1/clicks/{id}'],
  ['stores:read', 'GET /v1/stores, GET /v1/stores/{id}'],
  ['stores:write', 'POST /v1/stores, PATCH /v1/stores/{id}'],
  ['analytics:read', 'GET /v1/analytics/*, GET /v1/stores/{id}/ad-spend, GET /v1/stores/{id}/reconciliation'],
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
    '- Rate limits per key (by default 100 requests/s, bursts of 500: a full batch, whose events take a token each), shown in the `RateLimit-Policy` and `RateLimit` headers; a 429 says when to retry in `Retry-After`.',
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
