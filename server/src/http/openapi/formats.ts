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
