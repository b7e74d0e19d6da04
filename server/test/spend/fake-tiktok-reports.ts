import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for TikTok's `GET /open_api/v1.3/report/integrated/get/`, for spend reports
 * (api.md §11). It reads requests as TikTok does (`Access-Token` header; query `advertiser_id`,
 * `report_type=BASIC`, `data_level=AUCTION_CAMPAIGN`, `dimensions` and `metrics` as JSON arrays,
 * `start_date`/`end_date` at most 30 days apart with `stat_time_day`, `page`, `page_size` 1–1000)
 * and answers HTTP 200 `{code, message, request_id, data: {list: [{dimensions: {campaign_id,
 * stat_time_day: "YYYY-MM-DD 00:00:00"}, metrics: {spend, campaign_name, currency}}], page_info:
 * {page, page_size, total_number, total_page}}}`, `code` ≠ 0 for errors (40001 no permission,
 * 40002 parameter error, 40100 rate limit, 40105 token incorrect or revoked, 50000 system error).
 *
 * Usage: `const tiktok = await startFakeTikTokReports({accounts: {'7001': {currency: 'USD', rows:
 * [{date, campaignId, campaignName, spend: '12.34'}]}}})`; `tiktok.env()` gives `tiktokApiUrl`,
 * `tiktok.credentials()` the token it accepts; `requests` lists what was asked (each page);
 * `failNext(fault)` queues a fault for the next request.
 */

export interface FakeTikTokSpendRow {
  /** YYYY-MM-DD, the advertiser's own day. */
  date: string;
  campaignId: string;
  campaignName?: string;
  /** Decimal text as TikTok sends it ("12.34"). */
  spend: string;
}

export interface FakeTikTokAccount {
  currency: string;
  rows: FakeTikTokSpendRow[];
  /** The token is not authorized for this advertiser: code 40001. */
  denied?: boolean;
}

export type FakeTikTokFault =
  | { type: 'throttle' } // code 40100
  | { type: 'server' } // code 50000
  | { type: 'http502' } // a gateway's HTML 502
  | { type: 'expired' } // code 40102
  | { type: 'revoked' } // code 40105
  | { type: 'malformed'; body: unknown } // HTTP 200 with this JSON
  | { type: 'non-json' }
  | { type: 'hang' };

export interface FakeTikTokRequest {
  accessToken: string | undefined;
  query: Record<string, string>;
  code: number;
}

export interface FakeTikTokReports {
  url: string;
  accessToken: string;
  readonly requests: FakeTikTokRequest[];
  /** Rows per page at most, below the asked page_size (TikTok's pages are page_size long; this makes paging visible with few rows). */
  pageSizeCap: number;
  setSpend(advertiserId: string, account: FakeTikTokAccount): void;
  failNext(...faults: FakeTikTokFault[]): void;
  env(): { tiktokApiUrl: string };
  credentials(accessToken?: string): { kind: 'tiktok'; accessToken: string };
  close(): Promise<void>;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DIMENSIONS = ['campaign_id', 'stat_time_day'];
const METRICS = ['spend', 'campaign_name', 'currency'];

function jsonList(text: string | undefined): string[] | undefined {
  try {
    const value = JSON.parse(text ?? '');
    return Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : undefined;
  } catch {
    return undefined;
  }
}

export async function startFakeTikTokReports(options: {
  accounts?: Record<string, FakeTikTokAccount>;
  pageSizeCap?: number;
}): Promise<FakeTikTokReports> {
  const accounts = new Map(Object.entries(options.accounts ?? {}));
  const faults: FakeTikTokFault[] = [];
  const requests: FakeTikTokRequest[] = [];
  const accessToken = 'tt-report-token-abc';

  type Answer = { status: number; body?: unknown; raw?: string } | 'hang';
  function report(record: FakeTikTokRequest): Answer {
    const reply = (code: number, message: string, data: unknown = {}): Answer => {
      record.code = code;
      return { status: 200, body: { code, message, request_id: randomBytes(10).toString('hex'), data } };
    };
    const fault = faults.shift();
    if (fault?.type === 'hang') return 'hang';
    if (fault?.type === 'http502') return { status: 502, raw: '<html><body><h1>502 Bad Gateway</h1></body></html>' };
    if (fault?.type === 'malformed') return { status: 200, body: fault.body };
    if (fault?.type === 'non-json') return { status: 200, raw: 'upstream connect error or disconnect/reset before headers' };
    if (fault?.type === 'throttle') return reply(40100, 'Too many requests. Please retry in some time.');
    if (fault?.type === 'server') return reply(50000, 'System error. Please retry.');
    if (!record.accessToken) return reply(40104, 'Access token is null.');
    if (fault?.type === 'expired') return reply(40102, 'Access token has expired.');
    if (fault?.type === 'revoked' || record.accessToken !== accessToken) {
      return reply(40105, 'Access token is incorrect or has been revoked.');
    }
    const q = record.query;
    if (q.report_type !== 'BASIC') return reply(40002, 'report_type: Field is required; must be one of BASIC, AUDIENCE, …');
    if (q.data_level !== 'AUCTION_CAMPAIGN') return reply(40002, 'data_level: the fake expects AUCTION_CAMPAIGN');
    const dimensions = jsonList(q.dimensions);
    if (!dimensions || dimensions.length !== DIMENSIONS.length || !DIMENSIONS.every((d) => dimensions.includes(d))) {
      return reply(40002, `dimensions: expected ${JSON.stringify(DIMENSIONS)}`);
    }
    const metrics = jsonList(q.metrics);
    if (!metrics || !METRICS.every((m) => metrics.includes(m)))
      return reply(40002, `metrics: expected ${JSON.stringify(METRICS)}`);
    if (!q.start_date || !q.end_date || !DATE.test(q.start_date) || !DATE.test(q.end_date) || q.start_date > q.end_date) {
      return reply(40002, 'start_date and end_date: YYYY-MM-DD, start_date not after end_date');
    }
    const span = (Date.parse(q.end_date) - Date.parse(q.start_date)) / 86_400_000 + 1;
    if (span > 30) return reply(40002, 'max time span is 30 days when use stat_time_day');
    const page = Number(q.page ?? '1');
    const pageSize = Number(q.page_size ?? '10');
    if (!Number.isInteger(page) || page < 1) return reply(40002, 'page: must be an integer ≥ 1');
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 1000)
      return reply(40002, 'page_size: must be between 1 and 1000');
    if (!q.advertiser_id) return reply(40002, 'advertiser_id: Field is required.');
    const account = accounts.get(q.advertiser_id);
    if (!account) return reply(40002, `advertiser_id: Advertiser ${q.advertiser_id} does not exist.`);
    if (account.denied) return reply(40001, `No permission to operate advertiser ${q.advertiser_id}.`);
    const all = account.rows.filter((r) => r.date >= (q.start_date as string) && r.date <= (q.end_date as string));
    const size = Math.min(pageSize, fake.pageSizeCap);
    const list = all.slice((page - 1) * size, page * size).map((r) => ({
      dimensions: { campaign_id: r.campaignId, stat_time_day: `${r.date} 00:00:00` },
      metrics: { spend: r.spend, campaign_name: r.campaignName ?? '', currency: account.currency },
    }));
    return reply(0, 'OK', {
      list,
      page_info: { page, page_size: size, total_number: all.length, total_page: Math.ceil(all.length / size) },
    });
  }

  const server = http.createServer((req, res) => {
    const [path, search] = (req.url ?? '').split('?') as [string, string | undefined];
    req.resume();
    req.on('end', () => {
      let answer: Answer;
      if (req.method === 'GET' && path === '/open_api/v1.3/report/integrated/get/') {
        const record: FakeTikTokRequest = {
          accessToken: req.headers['access-token'] as string | undefined,
          query: Object.fromEntries(new URLSearchParams(search ?? '')),
          code: -1,
        };
        requests.push(record);
        answer = report(record);
      } else answer = { status: 404, body: { code: 40400, message: 'Not Found', data: {} } };
      if (answer === 'hang') return; // closeAllConnections ends it
      res.writeHead(answer.status, { 'content-type': answer.raw ? 'text/html' : 'application/json' });
      res.end(answer.raw ?? JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const fake: FakeTikTokReports = {
    url,
    accessToken,
    requests,
    pageSizeCap: options.pageSizeCap ?? 1000,
    setSpend: (advertiserId, account) => void accounts.set(advertiserId, account),
    failNext: (...more) => void faults.push(...more),
    env: () => ({ tiktokApiUrl: url }),
    credentials: (token = accessToken) => ({ kind: 'tiktok', accessToken: token }),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}
