import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for Snap's Conversions API v3, answering in its shapes:
 * - `POST /v3/{pixelId}/events?access_token=<token>`, JSON `{data: [event…]}` → 200
 *   `{status: "VALID", reason: "Events have been processed successfully.", request_id}`; a
 *   batch with a bad event → 400 `{status: "INVALID", reason}` (the whole request); a bad token
 *   → 401 `{status: "UNAUTHORIZED", reason}`; 429 with Retry-After; 500.
 * - `POST /v3/{pixelId}/events/validate?access_token=…` (the Test Event Tool): the same checks,
 *   nothing recorded; 200 `{status: "VALID", reason, request_id, events: [{status, reason}]}`
 *   with a result per event.
 * Each event is checked as Snap documents: event_name among Snap's, action_source, event_time
 * in Unix seconds within 7 days, user_data.em/ph arrays of SHA-256, a match key present.
 */

// biome-ignore lint/suspicious/noExplicitAny: events are arbitrary JSON as the platform receives them
export type Json = Record<string, any>;

export interface SnapRequest {
  at: number;
  pixelId: string;
  validate: boolean;
  token: string | null;
  body: Json;
  status: number;
  requestId: string;
}

export type SnapFault = { type: 'throttle'; retryAfterSeconds?: number } | { type: 'server' } | { type: 'bad-token' };

const SHA256 = /^[a-f0-9]{64}$/;
const EVENT_NAMES = new Set([
  'PAGE_VIEW',
  'VIEW_CONTENT',
  'ADD_CART',
  'ADD_TO_WISHLIST',
  'SIGN_UP',
  'SEARCH',
  'PURCHASE',
  'ADD_BILLING',
  'SUBSCRIBE',
  'START_CHECKOUT',
  'START_TRIAL',
  'RESERVE',
  'CUSTOM_EVENT_1',
  'CUSTOM_EVENT_2',
  'CUSTOM_EVENT_3',
  'CUSTOM_EVENT_4',
  'CUSTOM_EVENT_5',
]);

function eventError(event: Json, now: number): string | undefined {
  if (!EVENT_NAMES.has(event.event_name)) return `Invalid event_name: ${event.event_name}`;
  if (!['WEB', 'MOBILE_APP', 'OFFLINE'].includes(event.action_source)) return 'Invalid action_source';
  if (!Number.isInteger(event.event_time) || event.event_time > 1e11) return 'event_time must be a Unix timestamp in seconds';
  if (event.event_time < Math.floor(now / 1000) - 7 * 86_400) return 'event_time is older than 7 days';
  const user = event.user_data;
  if (!user || typeof user !== 'object') return 'user_data is required';
  for (const key of ['em', 'ph']) {
    if (user[key] !== undefined && !(Array.isArray(user[key]) && user[key].every((v: unknown) => SHA256.test(String(v))))) {
      return `user_data.${key} must be an array of SHA-256 hashes`;
    }
  }
  if (!user.em && !user.ph && !user.sc_click_id && !user.sc_cookie1 && !(user.client_ip_address && user.client_user_agent)) {
    return 'user_data needs em, ph, sc_click_id, sc_cookie1, or client_ip_address with client_user_agent';
  }
  return undefined;
}

export class FakeSnapchat {
  /** Delay before every answer (the forwarding bench: a platform’s round trip). */
  delayMs = 0;
  token = 'snap-capi-token-123';
  pixelId = '5bf81ee1-15b1-4dc1-b636-d7dae49b950e';
  readonly requests: SnapRequest[] = [];
  faults: SnapFault[] = [];
  /** Events whose event_id is here are refused with this reason. */
  refuse = new Map<string, string>();

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(): Promise<FakeSnapchat> {
    let fake: FakeSnapchat | undefined;
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const answer = (fake as FakeSnapchat).handle(req, Buffer.concat(chunks).toString('utf8'));
        const send = () => {
          res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
          res.end(JSON.stringify(answer.body));
        };
        const delay = (fake as FakeSnapchat).delayMs;
        if (delay > 0) setTimeout(send, delay);
        else send();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    fake = new FakeSnapchat(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
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
  }

  /** Events Snap recorded (the events endpoint, answered VALID). */
  accepted(): Json[] {
    return this.requests.filter((r) => r.status === 200 && !r.validate).flatMap((r) => r.body.data as Json[]);
  }

  private handle(req: http.IncomingMessage, raw: string): { status: number; body: Json; headers?: Record<string, string> } {
    const requestId = randomBytes(8).toString('hex');
    const url = new URL(req.url ?? '/', 'http://fake');
    const match = /^\/v3\/([^/]+)\/events(\/validate)?$/.exec(url.pathname);
    if (req.method !== 'POST' || !match) return { status: 404, body: { status: 'NOT_FOUND', reason: 'Not found' } };
    let body: Json;
    try {
      body = JSON.parse(raw);
    } catch {
      body = {};
    }
    const validate = Boolean(match[2]);
    const record = (status: number) =>
      this.requests.push({
        at: Date.now(),
        pixelId: decodeURIComponent(match[1] as string),
        validate,
        token: url.searchParams.get('access_token'),
        body,
        status,
        requestId,
      });
    const fault = this.faults.shift();
    if (fault?.type === 'throttle') {
      record(429);
      return {
        status: 429,
        body: { status: 'RATE_LIMITED', reason: 'Too many requests', request_id: requestId },
        headers: { 'retry-after': String(fault.retryAfterSeconds ?? 0) },
      };
    }
    if (fault?.type === 'server') {
      record(500);
      return { status: 500, body: { status: 'INTERNAL_ERROR', reason: 'Internal server error', request_id: requestId } };
    }
    if (fault?.type === 'bad-token' || url.searchParams.get('access_token') !== this.token) {
      record(401);
      return { status: 401, body: { status: 'UNAUTHORIZED', reason: 'Invalid access token', request_id: requestId } };
    }
    if (decodeURIComponent(match[1] as string) !== this.pixelId) {
      record(403);
      return {
        status: 403,
        body: { status: 'FORBIDDEN', reason: 'Pixel not owned by the token’s organization', request_id: requestId },
      };
    }
    if (
      req.headers['content-type'] !== 'application/json' ||
      !Array.isArray(body.data) ||
      body.data.length === 0 ||
      body.data.length > 2000
    ) {
      record(400);
      return { status: 400, body: { status: 'INVALID', reason: 'data must hold 1 to 2000 events', request_id: requestId } };
    }
    const now = Date.now();
    const errors = (body.data as Json[]).map((event) => this.refuse.get(event.event_id) ?? eventError(event, now));
    if (validate) {
      record(200);
      return {
        status: 200,
        body: {
          status: 'VALID',
          reason: 'Events have been validated.',
          request_id: requestId,
          events: errors.map((error) => (error ? { status: 'INVALID', reason: error } : { status: 'VALID' })),
        },
      };
    }
    const bad = errors.findIndex(Boolean);
    if (bad >= 0) {
      record(400);
      return { status: 400, body: { status: 'INVALID', reason: `data[${bad}]: ${errors[bad]}`, request_id: requestId } };
    }
    record(200);
    return { status: 200, body: { status: 'VALID', reason: 'Events have been processed successfully.', request_id: requestId } };
  }
}
