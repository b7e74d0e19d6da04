import { clip, parseJson } from '../../destinations/adapter.js';
import { normalizeCurrency } from '../../money.js';
import { networkErrorMessage } from '../../network-errors.js';
import type { SpendFetchRequest, SpendFetchResult, SpendPlatform, SpendRow } from './types.js';

/**
 * TikTok spend (api.md §11): `GET {TIKTOK_API_URL}/open_api/v1.3/report/integrated/get/` with the
 * `Access-Token` header, a BASIC report at AUCTION_CAMPAIGN level by `campaign_id` and
 * `stat_time_day` with the metrics `spend`, `campaign_name`, `currency`. The answer is HTTP 200
 * `{code, message, request_id, data: {list: [{dimensions, metrics}], page_info: {page, page_size,
 * total_number, total_page}}}`, `code` 0 on success; `spend` a decimal string in the advertiser's
 * currency and `stat_time_day` "YYYY-MM-DD 00:00:00" of the advertiser's own time zone.
 * TikTok refuses a range over 30 days with `stat_time_day` ("max time span is 30 days when use
 * stat_time_day"), so a longer range is asked for in 30-day windows; `page_size` is at most 1000.
 *
 * Return codes (TikTok API for Business, "Appendix - Return Codes",
 * https://ads.tiktok.com/marketing_api/docs?id=1737172488964097, linked from the response model
 * of TikTok's own SDK, tiktok/tiktok-business-api-sdk; the set the tiktok destination uses too,
 * destinations/tiktok.ts): 40001 no permission for the operation (the token
 * is not authorized for the advertiser or lacks the Reporting scope), 40002 parameter error,
 * 40100 requests too frequent (rate limit: retried), 40102 access token expired, 40104 access
 * token empty, 40105 access token incorrect or revoked, 5xxxx TikTok's own errors (retried).
 */

type Failure = Extract<SpendFetchResult, { error: string }>;

export const TIKTOK_REPORT_PATH = '/open_api/v1.3/report/integrated/get/';
/** TikTok's largest `page_size` for report/integrated/get. */
export const TIKTOK_MAX_PAGE_SIZE = 1000;
/** TikTok's longest range with the `stat_time_day` dimension, in days. */
export const TIKTOK_MAX_DAYS = 30;
/** Pages followed for one window at most (1000 rows each): a guard against a page_info that never ends. */
const MAX_PAGES = 1000;

const TOKEN_CODES = new Set([40102, 40104, 40105]);
const DECIMAL = /^\d{1,20}(\.\d{1,20})?$/;
const DAY = /^(\d{4}-\d{2}-\d{2})(?: 00:00:00)?$/;
const TOKEN_HINT =
  'renew it (TikTok API for Business → My Apps → your app → authorize the advertiser again, with the Reporting permission) and set the tiktok spend source’s accessToken';

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `since`..`until` (inclusive YYYY-MM-DD) in windows of at most 30 days. */
export function dateWindows(since: string, until: string, maxDays = TIKTOK_MAX_DAYS): Array<[string, string]> {
  const windows: Array<[string, string]> = [];
  const end = Date.parse(`${until}T00:00:00Z`);
  for (let start = Date.parse(`${since}T00:00:00Z`); start <= end; start += maxDays * 86_400_000) {
    const last = Math.min(start + (maxDays - 1) * 86_400_000, end);
    windows.push([new Date(start).toISOString().slice(0, 10), new Date(last).toISOString().slice(0, 10)]);
  }
  return windows;
}

function tiktokFailure(code: number, message: string, advertiserId: string, requestId: unknown): Failure {
  const platform = `TikTok error (code ${code}): ${message || 'no message'}${typeof requestId === 'string' ? ` (request_id ${requestId})` : ''}`;
  if (code === 40100 || (code >= 50000 && code < 60000)) return { side: 'platform', retryable: true, error: platform };
  if (TOKEN_CODES.has(code)) {
    const what = code === 40102 ? 'has expired' : code === 40104 ? 'is missing' : 'is incorrect or has been revoked';
    return {
      side: 'platform',
      retryable: false,
      credential: 'accessToken',
      error: `TikTok says the access token ${what}: ${TOKEN_HINT}. ${platform}`,
    };
  }
  if (code === 40001) {
    return {
      side: 'platform',
      retryable: false,
      credential: 'accessToken',
      error: `Missing permission: the access token may not read advertiser ${advertiserId}'s reports; authorize the app for that advertiser with the Reporting permission, or ${TOKEN_HINT}. ${platform}`,
    };
  }
  if (code === 40002 && /advertiser/i.test(message)) {
    return {
      side: 'platform',
      retryable: false,
      credential: 'advertiserIds',
      error: `Unknown account: TikTok refused advertiser ${advertiserId} (check the advertiser id in the tiktok spend source’s advertiserIds). ${platform}`,
    };
  }
  return { side: 'platform', retryable: false, error: platform };
}

const malformed = (advertiserId: string, reason: string): Failure => ({
  side: 'platform',
  retryable: false,
  error: `TikTok answered advertiser ${advertiserId}'s spend report with a malformed page: ${reason}`,
});

/** One item of `data.list` as a spend row, or what is wrong with it. */
function toRow(item: unknown, where: string): SpendRow | string {
  if (!isObject(item)) return `${where} is not an object`;
  const { dimensions, metrics } = item;
  if (!isObject(dimensions)) return `${where}.dimensions is missing`;
  if (!isObject(metrics)) return `${where}.metrics is missing`;
  const campaignId = typeof dimensions.campaign_id === 'number' ? String(dimensions.campaign_id) : dimensions.campaign_id;
  if (typeof campaignId !== 'string' || campaignId === '') return `${where}.dimensions.campaign_id is missing`;
  const day = typeof dimensions.stat_time_day === 'string' ? DAY.exec(dimensions.stat_time_day)?.[1] : undefined;
  if (!day) return `${where}.dimensions.stat_time_day is missing or not "YYYY-MM-DD 00:00:00"`;
  const spend = typeof metrics.spend === 'number' && Number.isFinite(metrics.spend) ? String(metrics.spend) : metrics.spend;
  if (typeof spend !== 'string' || !DECIMAL.test(spend)) {
    return `${where}.metrics.spend is missing or not a decimal (${JSON.stringify(metrics.spend)})`;
  }
  if (typeof metrics.currency !== 'string') return `${where}.metrics.currency is missing`;
  const currency = normalizeCurrency(metrics.currency);
  if (!currency) return `${where}.metrics.currency is not an ISO 4217 currency (${JSON.stringify(metrics.currency)})`;
  const name = metrics.campaign_name;
  if (name !== undefined && name !== null && typeof name !== 'string') return `${where}.metrics.campaign_name is not a string`;
  return { date: day, campaignId, campaignName: name || null, amount: spend, currency };
}

async function fetchPage(
  request: SpendFetchRequest,
  accessToken: string,
  window: [string, string],
  page: number,
): Promise<{ rows: SpendRow[]; totalPages: number } | Failure> {
  const { account, env, timeoutMs } = request;
  const query = new URLSearchParams({
    advertiser_id: account,
    report_type: 'BASIC',
    data_level: 'AUCTION_CAMPAIGN',
    dimensions: JSON.stringify(['campaign_id', 'stat_time_day']),
    metrics: JSON.stringify(['spend', 'campaign_name', 'currency']),
    start_date: window[0],
    end_date: window[1],
    page: String(page),
    page_size: String(TIKTOK_MAX_PAGE_SIZE),
  });
  const url = `${env.tiktokApiUrl}${TIKTOK_REPORT_PATH}?${query}`;
  let response: Response;
  let text: string;
  try {
    response = await fetch(url, {
      headers: { accept: 'application/json', 'access-token': accessToken },
      signal: AbortSignal.timeout(timeoutMs),
    });
    text = await response.text();
  } catch (error) {
    // No answer: this server's side (DNS, connect, TLS, timeout), said so with the host.
    return { side: 'network', retryable: true, error: clip(networkErrorMessage(error, url, 'TikTok', timeoutMs), [accessToken]) };
  }
  const body = parseJson(text);
  if (!isObject(body) || typeof body.code !== 'number') {
    if (response.status === 429 || response.status >= 500) {
      return {
        side: 'platform',
        retryable: true,
        error: `TikTok answered HTTP ${response.status} (${clip(text.slice(0, 200), [accessToken])})`,
      };
    }
    const what = body === undefined ? 'not JSON' : 'not {code, message, data}';
    return malformed(
      account,
      `HTTP ${response.status}, the answer is ${what} (${clip(text.slice(0, 80), [accessToken]) || 'empty body'})`,
    );
  }
  if (body.code !== 0) {
    const failure = tiktokFailure(body.code, typeof body.message === 'string' ? body.message : '', account, body.request_id);
    return { ...failure, error: clip(failure.error, [accessToken]) };
  }
  if (response.status === 429 || response.status >= 500) {
    return { side: 'platform', retryable: true, error: `TikTok answered HTTP ${response.status}` };
  }
  const data = body.data;
  if (!isObject(data)) return malformed(account, 'data is missing');
  if (!Array.isArray(data.list)) return malformed(account, 'data.list is not an array');
  const info = data.page_info;
  if (!isObject(info) || !Number.isInteger(info.total_page) || (info.total_page as number) < 0) {
    return malformed(account, 'data.page_info.total_page is missing');
  }
  const rows: SpendRow[] = [];
  for (const [i, item] of data.list.entries()) {
    const row = toRow(item, `page ${page} data.list[${i}]`);
    if (typeof row === 'string') return malformed(account, row);
    rows.push(row);
  }
  return { rows, totalPages: info.total_page as number };
}

async function fetchTikTok(request: SpendFetchRequest): Promise<SpendFetchResult> {
  const { account, since, until, credentials } = request;
  if (credentials.kind !== 'tiktok') {
    return { side: 'platform', retryable: false, error: `The tiktok spend report was given ${credentials.kind} credentials` };
  }
  if (!/^\d{1,30}$/.test(account)) {
    return {
      side: 'platform',
      retryable: false,
      credential: 'advertiserIds',
      error: `Unknown account: "${account}" is not a TikTok advertiser id (digits)`,
    };
  }
  const rows: SpendRow[] = [];
  for (const window of dateWindows(since, until)) {
    for (let page = 1; ; page++) {
      const answer = await fetchPage(request, credentials.accessToken, window, page);
      if ('error' in answer) return answer;
      rows.push(...answer.rows);
      if (page >= answer.totalPages) break;
      if (page >= MAX_PAGES) return malformed(account, `page_info.total_page ${answer.totalPages} exceeds ${MAX_PAGES} pages`);
    }
  }
  return { rows };
}

export const tiktokSpend: SpendPlatform = {
  kind: 'tiktok',
  label: 'TikTok',
  fetch: fetchTikTok,
};
