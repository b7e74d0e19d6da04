import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for the Graph API's Ads Insights edge, `GET /{version}/act_{id}/insights`, as
 * the spend sync calls it (api.md §11): the token as `Authorization: Bearer` (or `access_token`),
 * `level=campaign`, `time_increment=1`, `fields` with campaign_id, campaign_name, spend and
 * account_currency, `time_range={"since","until"}`, `limit`. It answers one row per campaign and
 * day of the range (`date_start` = `date_stop`, `spend` as decimal text, rows without spend left
 * out as Meta does), `pageSize` rows a page with `paging.cursors` and `paging.next` (an absolute
 * URL carrying `after`), and Graph errors `{error: {message, type, code, error_subcode,
 * fbtrace_id}}`: 190 expired token, 200 permission, 100 unknown account, 17 rate limit.
 */

export interface InsightsRow {
  date: string;
  campaignId: string;
  campaignName: string;
  spend: string;
}

export type InsightsFault =
  | { type: 'expired' }
  | { type: 'permission' }
  | { type: 'rate-limit' }
  | { type: 'http500' }
  /** A well-formed first page, then a page that is not the Insights shape. */
  | { type: 'malformed-second-page' };

export interface InsightsRequest {
  account: string;
  version: string;
  token: string | undefined;
  query: Record<string, string>;
  status: number;
}

export class FakeMetaInsights {
  token = 'meta-spend-token';
  pageSize = 2;
  /** Ad account → its currency and spend rows. */
  readonly accounts = new Map<string, { currency: string; rows: InsightsRow[] }>();
  readonly requests: InsightsRequest[] = [];
  /** Answers of the next requests, in order (one each). */
  faults: InsightsFault[] = [];
  /** While set, every request answers this fault. */
  outage: InsightsFault | undefined;
  /** Every answer waits this long. */
  delayMs = 0;

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(): Promise<FakeMetaInsights> {
    let fake: FakeMetaInsights | undefined;
    const server = http.createServer((req, res) => {
      if (fake?.delayMs) setTimeout(() => fake?.handle(req, res), fake.delayMs);
      else fake?.handle(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    fake = new FakeMetaInsights(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return fake;
  }

  reset(): void {
    this.accounts.clear();
    this.requests.length = 0;
    this.faults = [];
    this.outage = undefined;
    this.pageSize = 2;
    this.delayMs = 0;
    this.token = 'meta-spend-token';
  }

  setSpend(account: string, currency: string, rows: InsightsRow[]): void {
    this.accounts.set(account, { currency, rows });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private answer(res: http.ServerResponse, request: InsightsRequest, status: number, body: unknown): void {
    request.status = status;
    this.requests.push(request);
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  }

  private graphError(
    res: http.ServerResponse,
    request: InsightsRequest,
    status: number,
    code: number,
    message: string,
    subcode?: number,
  ) {
    this.answer(res, request, status, {
      error: { message, type: 'OAuthException', code, ...(subcode && { error_subcode: subcode }), fbtrace_id: 'AbCdEfTrace' },
    });
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): unknown {
    const url = new URL(req.url ?? '/', this.url);
    const match = /^\/(v\d+\.\d+)\/(act_\d+)\/insights$/.exec(url.pathname);
    const query = Object.fromEntries(url.searchParams.entries());
    const auth = req.headers.authorization;
    const token = auth?.startsWith('Bearer ') ? auth.slice(7) : query.access_token;
    const request: InsightsRequest = { account: match?.[2] ?? '', version: match?.[1] ?? '', token, query, status: 0 };
    if (req.method !== 'GET' || !match) return this.graphError(res, request, 400, 100, 'Unknown path components');
    const fault = this.outage ?? this.faults.shift();
    const paged = query.after !== undefined;
    if (fault?.type === 'expired') {
      return this.graphError(
        res,
        request,
        400,
        190,
        'Error validating access token: Session has expired on Friday, 27-Nov-26',
        463,
      );
    }
    if (fault?.type === 'permission') {
      return this.graphError(res, request, 403, 200, '(#200) Requires ads_read permission to manage the object');
    }
    if (fault?.type === 'rate-limit') return this.graphError(res, request, 400, 17, 'User request limit reached');
    if (fault?.type === 'http500') return this.answer(res, request, 500, 'upstream error');
    if (token !== this.token)
      return this.graphError(res, request, 400, 190, 'Invalid OAuth access token - Cannot parse access token');
    const account = this.accounts.get(request.account);
    if (!account) {
      return this.graphError(
        res,
        request,
        400,
        100,
        `(#100) Unsupported get request. Object with ID '${request.account}' does not exist`,
        33,
      );
    }
    const fields = (query.fields ?? '').split(',');
    const wanted = ['campaign_id', 'campaign_name', 'spend', 'account_currency'];
    if (query.level !== 'campaign' || query.time_increment !== '1' || !wanted.every((f) => fields.includes(f))) {
      return this.graphError(res, request, 400, 100, '(#100) level, time_increment or fields are not what the sync asks for');
    }
    let range: { since?: string; until?: string };
    try {
      range = JSON.parse(query.time_range ?? '') as typeof range;
    } catch {
      return this.graphError(res, request, 400, 100, '(#100) time_range must be JSON {since, until}');
    }
    if (!range.since || !range.until) return this.graphError(res, request, 400, 100, '(#100) time_range needs since and until');
    const since = range.since;
    const until = range.until;
    const rows = account.rows
      .filter((r) => r.date >= since && r.date <= until)
      .sort((a, b) => (a.date === b.date ? a.campaignId.localeCompare(b.campaignId) : a.date.localeCompare(b.date)));
    const offset = paged ? Number(query.after) : 0;
    if (fault?.type === 'malformed-second-page' && !paged) this.faults.unshift(fault); // the next page is the bad one
    if (fault?.type === 'malformed-second-page' && paged) {
      return this.answer(res, request, 200, { data: [{ campaign_id: '1', date_start: since, spend: 12.5 }] });
    }
    const page = rows.slice(offset, offset + this.pageSize);
    const body: Record<string, unknown> = {
      data: page.map((r) => ({
        account_id: request.account.slice(4),
        campaign_id: r.campaignId,
        campaign_name: r.campaignName,
        spend: r.spend,
        account_currency: account.currency,
        date_start: r.date,
        date_stop: r.date,
      })),
    };
    if (offset + this.pageSize < rows.length) {
      const next = new URL(url.toString());
      next.searchParams.set('after', String(offset + this.pageSize));
      body.paging = { cursors: { before: String(offset), after: String(offset + this.pageSize) }, next: next.toString() };
    } else if (page.length > 0) {
      body.paging = { cursors: { before: String(offset), after: String(offset + page.length) } };
    }
    this.answer(res, request, 200, body);
  }
}
