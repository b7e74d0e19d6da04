import { clip, parseJson, post } from '../../destinations/adapter.js';
import { forgetGoogleToken, type GoogleOAuthClient, googleAccessToken } from '../../destinations/google_ads/oauth.js';
import { normalizeCurrency } from '../../money.js';
import { type GoogleStatus, googleAdsFailure, isAccessTokenRefused } from './google-ads-errors.js';
import type { SpendFetchRequest, SpendFetchResult, SpendPlatform, SpendRow } from './types.js';

/**
 * Google Ads spend (api.md §11): `POST {GOOGLE_ADS_API_URL}/{version}/customers/{id}/googleAds:searchStream`
 * with a GAQL query over `campaign` segmented by day, headers as the destination's Google Ads API
 * path (OAuth access token, `developer-token`, `login-customer-id` when set). The answer is a
 * JSON array of batches `{results: [GoogleAdsRow], fieldMask, requestId}` (all of them: the stream
 * needs no paging); int64 fields (`campaign.id`, `metrics.costMicros`) are JSON strings, and
 * `segments.date` is the customer's own day (its `customer.timeZone`).
 */

type Failure = Extract<SpendFetchResult, { error: string }>;

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const INT = /^-?\d{1,30}$/;
const MICROS_PER_UNIT = 1_000_000n;

/** The GAQL query of one customer's spend per campaign and day, `since`..`until` inclusive (YYYY-MM-DD). */
export function spendQuery(since: string, until: string): string {
  return `SELECT segments.date, campaign.id, campaign.name, metrics.cost_micros, customer.currency_code, customer.time_zone FROM campaign WHERE segments.date BETWEEN '${since}' AND '${until}'`;
}

/**
 * Micros (an int64 as its decimal text) ÷ 1,000,000 as an exact decimal string, by integer
 * arithmetic: "123450000" → "123.45", "1" → "0.000001" (sub-cent micros are kept; rounding to the
 * currency's minor unit is the caller's), "99999999999990000" → "99999999999.99". Null when the
 * text is not an integer.
 */
export function microsToDecimal(micros: string): string | null {
  if (!INT.test(micros)) return null;
  const value = BigInt(micros);
  const negative = value < 0n;
  const abs = negative ? -value : value;
  const whole = abs / MICROS_PER_UNIT;
  const fraction = (abs % MICROS_PER_UNIT).toString().padStart(6, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

const malformed = (customerId: string, reason: string): Failure => ({
  side: 'platform',
  retryable: false,
  error: `Google Ads answered customer ${customerId}'s spend report with a malformed page: ${reason}`,
});

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** One GoogleAdsRow as a spend row, or what is wrong with it. */
function toRow(row: unknown, where: string): SpendRow | string {
  if (!isObject(row)) return `${where} is not an object`;
  const { segments, campaign, metrics, customer } = row;
  if (!isObject(segments) || typeof segments.date !== 'string' || !DATE.test(segments.date)) {
    return `${where}.segments.date is missing or not YYYY-MM-DD`;
  }
  if (!isObject(campaign)) return `${where}.campaign is missing`;
  const id = typeof campaign.id === 'number' && Number.isSafeInteger(campaign.id) ? String(campaign.id) : campaign.id;
  if (typeof id !== 'string' || !/^\d+$/.test(id)) return `${where}.campaign.id is missing or not an id`;
  if (campaign.name !== undefined && typeof campaign.name !== 'string') return `${where}.campaign.name is not a string`;
  if (!isObject(metrics)) return `${where}.metrics is missing`;
  const micros =
    typeof metrics.costMicros === 'number' && Number.isSafeInteger(metrics.costMicros)
      ? String(metrics.costMicros)
      : metrics.costMicros;
  const amount = typeof micros === 'string' ? microsToDecimal(micros) : null;
  if (amount === null) return `${where}.metrics.costMicros is missing or not an integer (${JSON.stringify(metrics.costMicros)})`;
  if (amount.startsWith('-')) return `${where}.metrics.costMicros is negative (${micros})`;
  if (!isObject(customer) || typeof customer.currencyCode !== 'string') return `${where}.customer.currencyCode is missing`;
  const currency = normalizeCurrency(customer.currencyCode);
  if (!currency) return `${where}.customer.currencyCode is not an ISO 4217 currency (${JSON.stringify(customer.currencyCode)})`;
  return { date: segments.date, campaignId: id, campaignName: campaign.name ?? null, amount, currency };
}

/** The searchStream answer (HTTP 200) as rows; an error element in the stream is Google's error. */
function readStream(body: unknown): { rows: SpendRow[] } | { error: GoogleStatus } | { malformed: string } {
  if (!Array.isArray(body)) return { malformed: 'the answer is not a JSON array of batches' };
  const rows: SpendRow[] = [];
  for (const [b, batch] of body.entries()) {
    if (!isObject(batch)) return { malformed: `batch ${b} is not an object` };
    if (isObject(batch.error)) return { error: batch.error };
    if (batch.results === undefined) continue; // a batch without rows (an empty range answers one such batch)
    if (!Array.isArray(batch.results)) return { malformed: `batch ${b}.results is not an array` };
    for (const [i, result] of batch.results.entries()) {
      const row = toRow(result, `batch ${b} results[${i}]`);
      if (typeof row === 'string') return { malformed: row };
      rows.push(row);
    }
  }
  return { rows };
}

async function fetchGoogleAds(request: SpendFetchRequest): Promise<SpendFetchResult> {
  const { account: customerId, since, until, credentials, env, timeoutMs } = request;
  if (credentials.kind !== 'google_ads') {
    return { side: 'platform', retryable: false, error: `The google_ads spend report was given ${credentials.kind} credentials` };
  }
  if (!/^\d{10}$/.test(customerId)) {
    return {
      side: 'platform',
      retryable: false,
      credential: 'customerIds',
      error: `Unknown account: "${customerId}" is not a Google Ads customer id (10 digits, without dashes)`,
    };
  }
  const client: GoogleOAuthClient = {
    clientId: credentials.clientId,
    clientSecret: credentials.clientSecret,
    refreshToken: credentials.refreshToken,
  };
  const hide = [credentials.developerToken, credentials.clientSecret, credentials.refreshToken];
  const url = `${env.googleAdsApiUrl}/${env.googleAdsApiVersion}/customers/${customerId}/googleAds:searchStream`;
  // A refused access token (expired early, revoked) is exchanged again once before giving up.
  for (let attempt = 0; ; attempt++) {
    const auth = await googleAccessToken(env.googleOauthTokenUrl, client, timeoutMs);
    if ('outcome' in auth) {
      const error = 'error' in auth.outcome ? clip(auth.outcome.error, hide) : 'Google OAuth refused the credentials';
      if (auth.outcome.outcome === 'retry') {
        // No answer (this server's side) or Google's OAuth server failing: both pass.
        return {
          side: /^This server|^The connection from this server/.test(error) ? 'network' : 'platform',
          retryable: true,
          error,
        };
      }
      const credential = /invalid_client/.test(error) ? 'oauth.clientSecret' : 'oauth.refreshToken';
      // google-oauth.ts words the fix for the destination; here the spend source's oauth may be the one to set.
      const fix =
        credential === 'oauth.refreshToken'
          ? 'authorize again with the https://www.googleapis.com/auth/adwords scope and set oauth.refreshToken'
          : 'check the OAuth client id and secret (Google Cloud Console → APIs & Services → Credentials) and set oauth';
      return {
        side: 'platform',
        retryable: false,
        credential,
        error: error.replace(/; set the google_ads destination's oauth again$/, `; ${fix}`),
      };
    }
    hide.push(auth.token);
    const answer = await post(
      url,
      {
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${auth.token}`,
          'developer-token': credentials.developerToken,
          ...(credentials.loginCustomerId && { 'login-customer-id': credentials.loginCustomerId }),
        },
        body: JSON.stringify({ query: spendQuery(since, until) }),
      },
      timeoutMs,
      'Google Ads',
    );
    if ('error' in answer) return { side: 'network', retryable: true, error: clip(answer.error, hide) };
    const { response, text } = answer;
    const body = parseJson(text);
    if (body === undefined) {
      if (!response.ok) {
        const failure = googleAdsFailure(response.status, undefined, customerId, credentials.loginCustomerId);
        return { ...failure, error: clip(`${failure.error} (${text.slice(0, 200) || 'empty body'})`, hide) };
      }
      return malformed(customerId, `the answer is not JSON (${clip(text.slice(0, 80), hide) || 'empty body'})`);
    }
    let status: GoogleStatus | undefined;
    if (response.ok) {
      const read = readStream(body);
      if ('rows' in read) return read;
      if ('malformed' in read) return malformed(customerId, clip(read.malformed, hide));
      status = read.error;
    } else {
      const wrapped = Array.isArray(body) ? body.find((b) => isObject(b) && isObject(b.error)) : body;
      status = isObject(wrapped) && isObject(wrapped.error) ? wrapped.error : undefined;
    }
    const httpStatus = response.ok && typeof status?.code === 'number' ? status.code : response.status;
    if (attempt === 0 && isAccessTokenRefused(httpStatus, status)) {
      forgetGoogleToken(client);
      continue;
    }
    const failure = googleAdsFailure(httpStatus, status, customerId, credentials.loginCustomerId);
    return { ...failure, error: clip(failure.error, hide) };
  }
}

export const googleAdsSpend: SpendPlatform = {
  kind: 'google_ads',
  label: 'Google Ads',
  fetch: fetchGoogleAds,
};
