import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for Pinterest's Conversions API (API v5), answering in its shapes:
 * - `POST /v5/ad_accounts/{id}/events[?test=true]`, `Authorization: Bearer <token>`, JSON
 *   `{data: [event…]}` (at most 1000) → 200 `{num_events_received, num_events_processed,
 *   events: [{status: "processed"|"failed", error_message, warning_message}]}`, one per event in
 *   order; a request error as `{code, message}` (400 bad body, 401 bad token, 403 an ad account
 *   the token cannot reach, 429 with Retry-After, 500); `x-pinterest-rid` on every answer.
 * - `GET /v5/ad_accounts/{id}` with the token → `{id, name, owner, currency}` (the check).
 * Each event is checked as Pinterest does: event_name, action_source, event_time in seconds and
 * within 7 days, event_id, user_data.em/ph as SHA-256 arrays, custom_data.value a string.
 */

// biome-ignore lint/suspicious/noExplicitAny: events are arbitrary JSON as the platform receives them
export type Json = Record<string, any>;

export interface PinterestRequest {
  at: number;
  adAccountId: string;
  test: boolean;
  authorization: string | undefined;
  body: Json;
  status: number;
  /** The answer's per-event statuses (200 only). */
  statuses: string[];
  rid: string;
}

export type PinterestFault = { type: 'throttle'; retryAfterSeconds?: number } | { type: 'server' } | { type: 'bad-token' };

const SHA256 = /^[a-f0-9]{64}$/;
const EVENT_NAMES = new Set([
  'add_payment_info',
  'add_to_cart',
  'add_to_wishlist',
  'app_install',
  'app_open',
  'checkout',
  'contact',
  'custom',
  'initiate_checkout',
  'lead',
  'page_visit',
  'search',
  'signup',
  'subscribe',
  'view_category',
  'watch_video',
]);

/** Why Pinterest would refuse one event, or undefined. */
function eventError(event: Json, now: number): string | undefined {
  if (!EVENT_NAMES.has(event.event_name)) return `Invalid event_name: ${event.event_name}`;
  if (!['web', 'app_android', 'app_ios', 'offline'].includes(event.action_source)) return 'Invalid action_source';
  if (!Number.isInteger(event.event_time) || event.event_time > 1e11) return 'event_time must be a Unix timestamp in seconds';
  if (event.event_time < Math.floor(now / 1000) - 7 * 86_400) return 'event_time is older than 7 days';
  if (typeof event.event_id !== 'string' || !event.event_id) return 'event_id is required';
  const user = event.user_data;
  if (!user || typeof user !== 'object') return 'user_data is required';
  for (const key of ['em', 'ph']) {
    if (user[key] !== undefined && !(Array.isArray(user[key]) && user[key].every((v: unknown) => SHA256.test(String(v))))) {
      return `user_data.${key} must be an array of SHA-256 hashes`;
    }
  }
  if (!user.em && !user.ph && !(user.client_ip_address && user.client_user_agent) && !user.click_id) {
    return 'user_data needs em, ph, click_id, or client_ip_address with client_user_agent';
  }
  const custom = event.custom_data;
  if (custom?.value !== undefined && typeof custom.value !== 'string') return 'custom_data.value must be a string';
  return undefined;
}

export class FakePinterest {
  /** Delay before every answer (the forwarding bench: a platform’s round trip). */
  delayMs = 0;
  token = 'pina_conversion-token-123';
  adAccountId = '549755885175';
  readonly requests: PinterestRequest[] = [];
  faults: PinterestFault[] = [];
  /** Events whose event_id is here are refused (status failed) with this message. */
  refuse = new Map<string, string>();
  checks = 0;

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(): Promise<FakePinterest> {
    let fake: FakePinterest | undefined;
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const answer = (fake as FakePinterest).handle(req, Buffer.concat(chunks).toString('utf8'));
        const send = () => {
          res.writeHead(answer.status, { 'content-type': 'application/json', 'x-pinterest-rid': answer.rid, ...answer.headers });
          res.end(JSON.stringify(answer.body));
        };
        const delay = (fake as FakePinterest).delayMs;
        if (delay > 0) setTimeout(send, delay);
        else send();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    fake = new FakePinterest(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return fake;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  reset(): void {
    this.requests.length = 0;
    this.faults = [];
    this.refuse.clear();
    this.checks = 0;
  }

  /** Events Pinterest recorded: processed, not in a test request. */
  accepted(): Json[] {
    return this.requests
      .filter((r) => r.status === 200 && !r.test)
      .flatMap((r) => (r.body.data as Json[]).filter((_, i) => r.statuses[i] === 'processed'));
  }

  private handle(
    req: http.IncomingMessage,
    raw: string,
  ): { status: number; body: Json; headers?: Record<string, string>; rid: string } {
    const rid = randomBytes(8).toString('hex');
    const url = new URL(req.url ?? '/', 'http://fake');
    const authorized = req.headers.authorization === `Bearer ${this.token}`;
    const account = /^\/v5\/ad_accounts\/(\d+)(\/events)?$/.exec(url.pathname);
    if (!account) return { status: 404, body: { code: 404, message: 'Not found' }, rid };
    if (req.method === 'GET' && !account[2]) {
      this.checks++;
      if (!authorized) return { status: 401, body: { code: 2, message: 'Authentication failed.' }, rid };
      if (account[1] !== this.adAccountId) return { status: 404, body: { code: 2602, message: 'Ad account not found.' }, rid };
      return { status: 200, body: { id: this.adAccountId, name: 'Acme ads', currency: 'EUR', owner: { username: 'acme' } }, rid };
    }
    if (req.method !== 'POST' || !account[2]) return { status: 405, body: { code: 405, message: 'Method not allowed' }, rid };
    let body: Json;
    try {
      body = JSON.parse(raw);
    } catch {
      body = {};
    }
    const record = (status: number, statuses: string[] = []) => {
      this.requests.push({
        at: Date.now(),
        adAccountId: account[1] as string,
        test: url.searchParams.get('test') === 'true',
        authorization: req.headers.authorization,
        body,
        status,
        statuses,
        rid,
      });
    };
    const fault = this.faults.shift();
    if (fault?.type === 'throttle') {
      record(429);
      return {
        status: 429,
        body: { code: 8, message: 'Rate limit exceeded.' },
        headers: { 'retry-after': String(fault.retryAfterSeconds ?? 0) },
        rid,
      };
    }
    if (fault?.type === 'server') {
      record(500);
      return { status: 500, body: { code: 1, message: 'Internal error.' }, rid };
    }
    if (fault?.type === 'bad-token' || !authorized) {
      record(401);
      return { status: 401, body: { code: 2, message: 'Authentication failed.' }, rid };
    }
    if (account[1] !== this.adAccountId) {
      record(403);
      return { status: 403, body: { code: 29, message: 'You are not permitted to access that resource.' }, rid };
    }
    if (req.headers['content-type'] !== 'application/json' || !Array.isArray(body.data) || body.data.length === 0) {
      record(400);
      return { status: 400, body: { code: 1, message: 'Invalid request body: data is required' }, rid };
    }
    if (body.data.length > 1000) {
      record(400);
      return { status: 400, body: { code: 1, message: 'data must have at most 1000 items' }, rid };
    }
    const now = Date.now();
    const events = (body.data as Json[]).map((event) => {
      const error = this.refuse.get(event.event_id) ?? eventError(event, now);
      return error
        ? { status: 'failed', error_message: error, warning_message: '' }
        : { status: 'processed', error_message: '', warning_message: '' };
    });
    record(
      200,
      events.map((e) => e.status),
    );
    return {
      status: 200,
      body: {
        num_events_received: events.length,
        num_events_processed: events.filter((e) => e.status === 'processed').length,
        events,
      },
      rid,
    };
  }
}
