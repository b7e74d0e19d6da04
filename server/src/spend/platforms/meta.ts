import { networkErrorMessage } from '../../network-errors.js';
import type { SpendFetchRequest, SpendFetchResult, SpendPlatform, SpendRow } from './types.js';

/**
 * Meta's spend report (api.md §11): `GET {META_GRAPH_URL}/{version}/act_{id}/insights` at
 * campaign level, one row per campaign and day (`time_increment=1`) of the ad account's own
 * calendar, with `campaign_id`, `campaign_name`, `spend` (decimal text) and `account_currency`;
 * `paging.next` followed (only on the Graph API's own host: the token goes nowhere else). Graph
 * error bodies `{error: {message, type, code, error_subcode, fbtrace_id}}` are named: 190 an
 * expired or invalid token, 10 and 200–299 a missing permission, 100 an unknown account; 4, 17,
 * 613 and 80000–80014 are rate limits (retried later), as are 1 and 2 (Meta's transient errors).
 */
const FIELDS = 'campaign_id,campaign_name,spend,account_currency';
const PAGE_LIMIT = 500;
/** Pages followed at most for one account and range (a loop of `next` links ends here). */
const MAX_PAGES = 2000;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const AMOUNT = /^\d{1,15}(\.\d{1,10})?$/;
const CURRENCY = /^[A-Za-z]{3}$/;
const RENEW =
  'renew the access token of the meta spend source (or of the store’s meta destination, capiAccessToken, when the source has none) with the ads_read permission';

interface GraphError {
  message?: unknown;
  type?: unknown;
  code?: unknown;
  error_subcode?: unknown;
  fbtrace_id?: unknown;
}

function platformError(error: GraphError, account: string, status: number): SpendFetchResult {
  const code = typeof error.code === 'number' ? error.code : undefined;
  const subcode = typeof error.error_subcode === 'number' ? `, subcode ${error.error_subcode}` : '';
  const trace = typeof error.fbtrace_id === 'string' ? ` (fbtrace_id ${error.fbtrace_id})` : '';
  const said = `${typeof error.message === 'string' ? error.message : `HTTP ${status}`}${trace}`;
  const tag = `code ${code ?? 'none'}${subcode}`;
  if (code === 190) {
    return {
      error: `Meta refused the access token (expired or invalid token, ${tag}): ${said}; ${RENEW}`,
      side: 'platform',
      credential: 'accessToken',
      retryable: false,
    };
  }
  if (code === 10 || (code !== undefined && code >= 200 && code <= 299)) {
    return {
      error: `Meta refused to report on ${account} (missing permission, ${tag}): ${said}; the token needs ads_read on that ad account: ${RENEW}`,
      side: 'platform',
      credential: 'accessToken',
      retryable: false,
    };
  }
  if (code === 100) {
    return {
      error: `Meta does not know ad account ${account} or the token cannot see it (unknown account, ${tag}): ${said}; check adAccountIds of the meta spend source`,
      side: 'platform',
      credential: 'adAccountIds',
      retryable: false,
    };
  }
  const rateLimited = code === 4 || code === 17 || code === 613 || (code !== undefined && code >= 80000 && code <= 80014);
  if (rateLimited)
    return { error: `Meta rate-limited the report (${tag}): ${said}; retried later`, side: 'platform', retryable: true };
  const transient = code === 1 || code === 2 || status >= 500;
  return { error: `Meta answered HTTP ${status} (${tag}): ${said}`, side: 'platform', retryable: transient };
}

const malformed = (account: string, what: string): SpendFetchResult => ({
  error: `Meta answered a report page for ${account} that is not the Insights shape (${what}); nothing of this sync was recorded`,
  side: 'platform',
  retryable: true,
});

/** One page's rows, or why the page is not what the Insights API answers. */
function rowsOf(body: unknown, request: SpendFetchRequest): SpendRow[] | string {
  if (!body || typeof body !== 'object' || !Array.isArray((body as { data?: unknown }).data)) return 'no data array';
  const rows: SpendRow[] = [];
  for (const [i, raw] of ((body as { data: unknown[] }).data ?? []).entries()) {
    if (!raw || typeof raw !== 'object') return `data[${i}] is not an object`;
    const r = raw as Record<string, unknown>;
    if (typeof r.campaign_id !== 'string' || !/^\d{1,30}$/.test(r.campaign_id)) return `data[${i}].campaign_id is missing`;
    if (typeof r.date_start !== 'string' || !DATE.test(r.date_start)) return `data[${i}].date_start is not a date`;
    if (r.date_stop !== undefined && r.date_stop !== r.date_start)
      return `data[${i}] spans ${r.date_start}..${String(r.date_stop)}, not one day`;
    if (r.date_start < request.since || r.date_start > request.until) {
      return `data[${i}] is of ${r.date_start}, outside ${request.since}..${request.until}`;
    }
    // Meta leaves `spend` out of a row with nothing spent.
    const spend = r.spend === undefined ? '0' : r.spend;
    if (typeof spend !== 'string' || !AMOUNT.test(spend)) return `data[${i}].spend is not a decimal amount`;
    if (typeof r.account_currency !== 'string' || !CURRENCY.test(r.account_currency)) {
      return `data[${i}].account_currency is not a currency code`;
    }
    rows.push({
      date: r.date_start,
      campaignId: r.campaign_id,
      campaignName: typeof r.campaign_name === 'string' ? r.campaign_name : null,
      amount: spend,
      currency: r.account_currency.toUpperCase(),
    });
  }
  return rows;
}

async function fetchInsights(request: SpendFetchRequest): Promise<SpendFetchResult> {
  if (request.credentials.kind !== 'meta') throw new Error('the Meta report takes Meta credentials');
  const token = request.credentials.accessToken;
  const base = request.env.metaGraphUrl.replace(/\/+$/, '');
  const first = new URL(`${base}/${request.env.metaGraphVersion}/${encodeURIComponent(request.account)}/insights`);
  first.searchParams.set('level', 'campaign');
  first.searchParams.set('time_increment', '1');
  first.searchParams.set('fields', FIELDS);
  first.searchParams.set('time_range', JSON.stringify({ since: request.since, until: request.until }));
  first.searchParams.set('limit', String(PAGE_LIMIT));
  const origin = first.origin;
  const rows: SpendRow[] = [];
  let next: string | undefined = first.toString();
  for (let page = 0; next !== undefined; page++) {
    if (page >= MAX_PAGES) return malformed(request.account, `more than ${MAX_PAGES} pages`);
    let response: Response;
    let text: string;
    try {
      response = await fetch(next, {
        headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
        signal: AbortSignal.timeout(request.timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      return { error: networkErrorMessage(error, next, 'Meta', request.timeoutMs), side: 'network', retryable: true };
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      if (!response.ok) return platformError({}, request.account, response.status);
      return malformed(request.account, 'not JSON');
    }
    const error = (body as { error?: unknown } | null)?.error;
    if (!response.ok || (error && typeof error === 'object')) {
      return platformError((error ?? {}) as GraphError, request.account, response.status);
    }
    const pageRows = rowsOf(body, request);
    if (typeof pageRows === 'string') return malformed(request.account, `page ${page + 1}: ${pageRows}`);
    rows.push(...pageRows);
    const link = (body as { paging?: { next?: unknown } }).paging?.next;
    if (link === undefined || link === null) next = undefined;
    else if (typeof link !== 'string') return malformed(request.account, `page ${page + 1}: paging.next is not a URL`);
    else {
      let parsed: URL;
      try {
        parsed = new URL(link);
      } catch {
        return malformed(request.account, `page ${page + 1}: paging.next is not a URL`);
      }
      if (parsed.origin !== origin) return malformed(request.account, `page ${page + 1}: paging.next leaves ${origin}`);
      next = parsed.toString();
    }
  }
  return { rows };
}

export const metaSpend: SpendPlatform = { kind: 'meta', label: 'Meta', fetch: fetchInsights };
