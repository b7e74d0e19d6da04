import type { KnownGap, UndeclaredStatus } from './oracle.js';

/**
 * Where the OpenAPI document promises more than the server does: a request valid by the
 * document's schema that the server refuses, because of a rule the schema does not state. Each
 * entry is a finding reported to the owner of the route schemas (server/src/routes/*.ts); the
 * fuzzer tolerates exactly these (operation, field, code, reason) and nothing broader. When a
 * schema is tightened, its entry stops matching anything and can be deleted.
 */

const gap = (operations: string[], field: string, code: string, reason: string, why: string): KnownGap[] =>
  operations.map((operation) => ({ operation, field, code, reason, why }));

const DATE_QUERIES = [
  'GET /v1/conversions',
  'GET /v1/analytics/metrics',
  'GET /v1/analytics/timeseries',
  'GET /v1/analytics/breakdown',
  'GET /v1/analytics/match-quality',
  'GET /v1/analytics/cohorts',
  'GET /v1/analytics/channels',
  'GET /v1/analytics/tracking-health',
  'GET /v1/stores/{id}/ad-spend',
  'GET /v1/stores/{id}/reconciliation',
];
const STORE_WRITES = ['POST /v1/stores', 'PATCH /v1/stores/{id}'];

export const KNOWN_GAPS: readonly KnownGap[] = [
  // x-rules one-click-id: at least one of six click ids, in the body or in landingPage's query.
  ...gap(['POST /v1/track/click'], 'fbclid', 'missing_required_field', 'required_field_missing', 'x-rules one-click-id'),
  // x-rules one-browser-id, one-identity: at least one of visitorId, fbp, ttp, and one of email, phone.
  ...gap(['POST /v1/track/identify'], 'visitorId', 'missing_required_field', 'required_field_missing', 'x-rules one-browser-id'),
  ...gap(['POST /v1/track/identify'], 'email', 'missing_required_field', 'required_field_missing', 'x-rules one-identity'),
  // Refunds: the code must exist (x-rules iso-4217), the amount be at least a minor unit
  // (x-rules minor-unit), and the order a recorded conversion's (generated orders are none).
  ...gap(['POST /v1/track/refund'], 'currency', 'invalid_currency', 'invalid_format', 'x-rules iso-4217'),
  ...gap(['POST /v1/track/refund'], 'amount', 'invalid_request', 'out_of_range', 'x-rules minor-unit'),
  ...gap(['POST /v1/track/refund'], 'orderId', 'conversion_not_found', 'unknown_value', 'the order is not recorded'),
  // … and in that order's currency (state no schema holds; more than is left is out_of_range above).
  ...gap(['POST /v1/track/refund'], 'currency', 'invalid_request', 'currency_mismatch', 'the order is in another currency'),
  // G1: `timestamp` is `string, maxLength 64`; the server wants an ISO 8601 date-time with a zone.
  ...gap(
    ['POST /v1/track/click', 'POST /v1/track/conversion', 'POST /v1/track/checkout', 'POST /v1/track/refund'],
    'timestamp',
    'invalid_request',
    'invalid_format',
    'G1 timestamp has no date-time format',
  ),
  // G2: `currency` is `string, maxLength 16`; the server wants an ISO 4217 code.
  ...gap(
    ['POST /v1/track/conversion', 'POST /v1/track/checkout', ...STORE_WRITES],
    'currency',
    'invalid_currency',
    'invalid_format',
    'G2 currency is not constrained to ISO 4217',
  ),
  ...gap(
    ['POST /v1/stores/{id}/ad-spend'],
    'entries[].currency',
    'invalid_currency',
    'invalid_format',
    'G2 currency is not constrained to ISO 4217',
  ),
  ...gap(
    ['POST /v1/track/conversion', 'POST /v1/track/checkout'],
    'currency',
    'missing_required_field',
    'required_field_missing',
    'G2 currency allows ""',
  ),
  ...gap(
    ['POST /v1/stores/{id}/ad-spend'],
    'entries[].currency',
    'missing_required_field',
    'required_field_missing',
    'G2 currency allows ""',
  ),
  // G3: `landingPage` is `string, maxLength 2048` (no minLength, no URL format); the server wants an absolute http(s) URL.
  ...gap(['POST /v1/track/click'], 'landingPage', 'missing_required_field', 'required_field_missing', 'G3 landingPage allows ""'),
  ...gap(['POST /v1/track/click'], 'landingPage', 'invalid_request', 'invalid_url', 'G3 landingPage has no URL format'),
  // G3b: the other URL fields (`referrer`, `eventSourceUrl`) have no URL format either.
  ...gap(['POST /v1/track/click'], 'referrer', 'invalid_request', 'invalid_url', 'G3 referrer has no URL format'),
  ...gap(
    ['POST /v1/track/conversion', 'POST /v1/track/checkout'],
    'eventSourceUrl',
    'invalid_request',
    'invalid_url',
    'G3 eventSourceUrl has no URL format',
  ),
  // G3c: `ipAddress` is `string, maxLength 64`; the server wants an IPv4 or IPv6 address.
  ...gap(
    ['POST /v1/track/click', 'POST /v1/track/conversion'],
    'ipAddress',
    'invalid_request',
    'invalid_format',
    'G3 ipAddress has no ipv4/ipv6 format',
  ),
  // G4: `timezone` is `string, maxLength 64`; the server wants an IANA zone name.
  ...gap(STORE_WRITES, 'timezone', 'invalid_request', 'unknown_value', 'G4 timezone is not constrained to IANA names'),
  // G5: `domain` is `string, 1–253`; the server wants a hostname.
  ...gap(STORE_WRITES, 'domain', 'invalid_request', 'invalid_format', 'G5 domain has no hostname format'),
  // G6: date query parameters match `YYYY-(01-12)-(01-31)`, which also admits year 0000 and 2026-02-30.
  ...gap(DATE_QUERIES, 'startDate', 'invalid_request', 'invalid_format', 'G6 date pattern admits dates that do not exist'),
  ...gap(DATE_QUERIES, 'endDate', 'invalid_request', 'invalid_format', 'G6 date pattern admits dates that do not exist'),
  // G7: cross-field rules no per-field schema can state (start after end, a range over 731 days); documented in api.md.
  ...gap(DATE_QUERIES, 'startDate', 'invalid_request', 'out_of_range', 'G7 date range rules (cross-field)'),
  ...gap(DATE_QUERIES, 'endDate', 'invalid_request', 'out_of_range', 'G7 date range rules (cross-field)'),
  // G8: ad-spend `date` is `^\d{4}-\d{2}-\d{2}$` (2026-13-45 passes), looser than the query dates' pattern.
  ...gap(
    ['POST /v1/stores/{id}/ad-spend'],
    'entries[].date',
    'invalid_request',
    'invalid_format',
    'G8 ad-spend date pattern admits months 13–99',
  ),
  // G10: time-dependent rules no schema states: a click older than 90 days (expired) and an event
  // more than 5 minutes in the future (api.md §2); the document should say so in the descriptions.
  ...gap(['POST /v1/track/click'], 'timestamp', 'invalid_fbclid', 'expired', 'G10 click timestamp older than 90 days'),
  ...gap(
    ['POST /v1/track/click', 'POST /v1/track/conversion', 'POST /v1/track/checkout', 'POST /v1/track/refund'],
    'timestamp',
    'invalid_request',
    'out_of_range',
    'G10 timestamp in the future',
  ),
  // G9: operations without a request body refuse a request that sends a Content-Type anyway (no body).
  ...gap(
    ['POST /v1/conversions/{id}/reattribute', 'POST /v1/conversions/{id}/resend'],
    'Content-Type',
    'invalid_request',
    'unsupported_media_type',
    'G9 a bodiless operation refuses a Content-Type header',
  ),
  ...['POST /v1/conversions/{id}/reattribute', 'POST /v1/conversions/{id}/resend'].map((operation) => ({
    operation,
    field: undefined,
    code: 'invalid_request',
    reason: 'malformed_json',
    why: 'G9 a bodiless operation refuses Content-Type: application/json without a body',
  })),
  // x-rules required-once: a destination's secret left out keeps the stored one, so it is
  // required only while none is stored (the fuzzed store starts with no destination).
  ...[
    ['meta', 'accessToken'],
    ['tiktok', 'accessToken'],
    ['microsoft', 'accessToken'],
    ['reddit', 'accessToken'],
    ['linkedin', 'accessToken'],
    ['pinterest', 'accessToken'],
    ['snapchat', 'accessToken'],
    ...['developerToken', 'oauth', 'oauth.clientId', 'oauth.clientSecret', 'oauth.refreshToken'].map((f) => ['google_ads', f]),
  ].flatMap(([kind, field]) =>
    gap(
      [`PUT /v1/stores/{id}/destinations/${kind}`],
      field as string,
      'missing_required_field',
      'required_field_missing',
      'x-rules required-once',
    ),
  ),
  // x-rules google-ads-api-only: a developer token is refused while the destination's api is
  // data_manager (given in the body, or the stored one when the body leaves api out).
  ...gap(
    ['PUT /v1/stores/{id}/destinations/google_ads'],
    'developerToken',
    'invalid_request',
    'unknown_field',
    'x-rules google-ads-api-only',
  ),
  // Removing a destination the store does not have is 404 (declared; the fuzzer cannot know which are set).
  ...['google_ads', 'tiktok', 'microsoft', 'pinterest', 'snapchat', 'reddit', 'linkedin'].map((kind) => ({
    operation: `DELETE /v1/stores/{id}/destinations/${kind}`,
    field: undefined,
    code: 'not_found',
    reason: undefined,
    why: 'the store has no such destination',
  })),
  // Checking a destination the store does not have is 404 too (api.md §12; the fuzzer cannot know which are set).
  {
    operation: 'POST /v1/stores/{id}/destinations/{kind}/test',
    field: undefined,
    code: 'not_found',
    reason: undefined,
    why: 'the store has no such destination',
  },
  // G9 for the bodiless check.
  ...gap(
    ['POST /v1/stores/{id}/destinations/{kind}/test'],
    'Content-Type',
    'invalid_request',
    'unsupported_media_type',
    'G9 a bodiless operation refuses a Content-Type header',
  ),
  {
    operation: 'POST /v1/stores/{id}/destinations/{kind}/test',
    field: undefined,
    code: 'invalid_request',
    reason: 'malformed_json',
    why: 'G9 a bodiless operation refuses Content-Type: application/json without a body',
  },
  // G9 for the destinations' DELETE (bodiless) too.
  ...['meta', 'google_ads', 'tiktok', 'microsoft', 'pinterest', 'snapchat', 'reddit', 'linkedin'].flatMap((kind) => [
    ...gap(
      [`DELETE /v1/stores/{id}/destinations/${kind}`],
      'Content-Type',
      'invalid_request',
      'unsupported_media_type',
      'G9 a bodiless operation refuses a Content-Type header',
    ),
    {
      operation: `DELETE /v1/stores/{id}/destinations/${kind}`,
      field: undefined,
      code: 'invalid_request',
      reason: 'malformed_json',
      why: 'G9 a bodiless operation refuses Content-Type: application/json without a body',
    },
  ]),
  // Spend sources (api.md §11). x-rules required-once: a secret left out is the one stored with
  // the source, else the store's destination's; required only while neither has one (the fuzzed
  // store has no destination). An OAuth client of the source's own needs its secret and token.
  ...[
    ['meta', 'accessToken'],
    ['tiktok', 'accessToken'],
    ...['developerToken', 'oauth', 'oauth.clientId', 'oauth.clientSecret', 'oauth.refreshToken'].map((f) => ['google_ads', f]),
  ].flatMap(([kind, field]) =>
    gap(
      [`PUT /v1/stores/{id}/spend-sources/${kind}`],
      field as string,
      'missing_required_field',
      'required_field_missing',
      'x-rules required-once',
    ),
  ),
  // Removing or syncing a source the store has not connected is 404 (declared; the fuzzer cannot know which are).
  ...['DELETE /v1/stores/{id}/spend-sources/{kind}', 'POST /v1/stores/{id}/spend-sources/{kind}/sync'].flatMap((operation) => [
    { operation, field: undefined, code: 'not_found', reason: undefined, why: 'the store has no such spend source' },
    ...gap(
      [operation],
      'Content-Type',
      'invalid_request',
      'unsupported_media_type',
      'G9 a bodiless operation refuses a Content-Type header',
    ),
    {
      operation,
      field: undefined,
      code: 'invalid_request',
      reason: 'malformed_json',
      why: 'G9 a bodiless operation refuses Content-Type: application/json without a body',
    },
  ]),
];

/** Statuses an operation answers that its document entry does not declare. */
export const UNDECLARED_STATUSES: readonly UndeclaredStatus[] = ['GET /healthz', 'GET /readyz', 'GET /metrics'].map(
  (operation) => ({
    operation,
    status: 400,
    // D1: the Content-Encoding check (http/transport.ts refuseEncodedBodies) runs on every route,
    // so a bodiless GET with `Content-Encoding: gzip` is 400 invalid_request; these operations do not declare 400.
    why: 'D1 operational routes answer 400 (Content-Encoding) but do not declare it',
  }),
);
