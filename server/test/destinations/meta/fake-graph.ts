import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for Meta's Graph API `POST /{version}/{pixelId}/events`: a real HTTP server on
 * 127.0.0.1 that reads the request the way Meta does (JSON or form body; `data`, `access_token`,
 * `test_event_code`), validates it like Meta (at most 1000 events, required fields, hashed
 * customer data, 7-day age limit) and answers with Meta's shapes: `{events_received, messages,
 * fbtrace_id}` or `{error: {message, type, code, error_subcode, is_transient, error_user_msg,
 * fbtrace_id}}`. Faults are programmable per request or as an ongoing outage.
 */

// biome-ignore lint/suspicious/noExplicitAny: events are arbitrary JSON as Meta receives them
export type FakeEvent = Record<string, any>;

export type Fault =
  /** HTTP 500 with Meta's transient "unknown error" (code 1 / 2). */
  | { type: 'http500'; code?: 1 | 2 }
  /** HTTP 502 with a non-Graph body, as a proxy in front of Meta answers. */
  | { type: 'bad-gateway' }
  /** No answer for `ms` (beyond the client's timeout), then the connection is dropped. */
  | { type: 'hang'; ms: number }
  /** The connection is reset without an answer. */
  | { type: 'reset' }
  /** A throttling error (codes 4, 17, 32, 613, 80003 …), optionally with a Retry-After hint in seconds. */
  | { type: 'throttle'; code: number; retryAfterSeconds?: number }
  /** Any Graph error object, e.g. {code: 190} (bad token) or {code: 100} (invalid parameter). */
  | { type: 'error'; status?: number; code: number; subcode?: number; message?: string; transient?: boolean };

export interface FakeRequest {
  at: number;
  version: string;
  pixelId: string;
  contentType: string;
  accessToken: string | undefined;
  /** The token came in the query string (where proxies and access logs would record it). */
  tokenInUrl: boolean;
  testEventCode: string | undefined;
  events: FakeEvent[];
  /** What the fake answered ('reset' / 'hang' when it did not). */
  status: number | 'reset' | 'hang';
  accepted: boolean;
}

const HASHED = ['em', 'ph', 'fn', 'ln', 'ct', 'st', 'zp', 'country'];
const SHA256 = /^[a-f0-9]{64}$/;
const WEEK_S = 7 * 86_400;

function graphError(code: number, message: string, extra: Record<string, unknown> = {}) {
  return {
    error: { message, type: 'OAuthException', code, fbtrace_id: `A${randomBytes(8).toString('hex')}`, ...extra },
  };
}

/** Meta's checks on one event; the first problem found, or undefined. */
function eventProblem(event: FakeEvent, index: number): string | undefined {
  if (typeof event !== 'object' || event === null) return `data[${index}] is not an object`;
  if (typeof event.event_name !== 'string' || event.event_name === '') return `data[${index}]: event_name is required`;
  if (!Number.isInteger(event.event_time)) return `data[${index}]: event_time must be unix seconds`;
  if (event.event_time < Date.now() / 1000 - WEEK_S) return `data[${index}]: event_time is more than 7 days in the past`;
  if (typeof event.action_source !== 'string') return `data[${index}]: action_source is required`;
  const userData = event.user_data;
  if (typeof userData !== 'object' || userData === null) return `data[${index}]: user_data is required`;
  for (const key of HASHED) {
    if (userData[key] === undefined) continue;
    const values = Array.isArray(userData[key]) ? userData[key] : [userData[key]];
    if (!values.every((v: unknown) => typeof v === 'string' && SHA256.test(v)))
      return `data[${index}]: user_data.${key} is not hashed`;
  }
  return undefined;
}

export class FakeGraph {
  readonly requests: FakeRequest[] = [];
  /** Consumed one per request, in order; when empty, requests are answered normally. */
  faults: Fault[] = [];
  /** Applied to every request while set (an outage); `faults` go first. */
  outage: Fault | undefined;
  /** A batch holding one of these event_ids is refused whole with code 100, as Meta does. */
  readonly poisoned = new Set<string>();
  /** When set, any other access token is refused with code 190. */
  validTokens: Set<string> | undefined;
  /** Delay before every answer. */
  latencyMs = 0;
  /** GET /{version}/{pixelId} requests (the destination check). */
  readonly pixelReads: Array<{ pixelId: string; accessToken: string | undefined; tokenInUrl: boolean }> = [];
  url = '';
  private readonly server: http.Server;
  /** What requests arriving now wait for before they are answered (hold()); undefined: nothing. */
  private gate: Promise<void> | undefined;
  private readonly holds = new Set<() => void>();

  private constructor() {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    this.server.keepAliveTimeout = 1000;
  }

  static async start(): Promise<FakeGraph> {
    const fake = new FakeGraph();
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    fake.url = `http://127.0.0.1:${(fake.server.address() as AddressInfo).port}`;
    return fake;
  }

  /**
   * Requests arriving from now on are recorded at once but answered only when the returned
   * function is called: the test, not the machine's speed, decides when Meta answers. A later
   * hold() holds the requests after it on its own (the earlier ones wait for the earlier release).
   */
  hold(): () => void {
    let open = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    this.gate = gate;
    const release = () => {
      if (this.gate === gate) this.gate = undefined;
      this.holds.delete(release);
      open();
    };
    this.holds.add(release);
    return release;
  }

  /** Answers every held request (a test's cleanup: a held request would keep its dispatcher from stopping). */
  releaseAll(): void {
    for (const release of [...this.holds]) release();
  }

  /** Forgets requests and programmed faults, so each test starts from a healthy Meta. */
  reset(): void {
    this.releaseAll();
    this.requests.length = 0;
    this.pixelReads.length = 0;
    this.faults = [];
    this.outage = undefined;
    this.latencyMs = 0;
    this.poisoned.clear();
    this.validTokens = undefined;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Requests Meta acknowledged. */
  acceptedRequests(): FakeRequest[] {
    return this.requests.filter((r) => r.accepted);
  }

  /** Events Meta acknowledged, in order of arrival (one entry per acknowledgement). */
  acceptedEvents(): FakeEvent[] {
    return this.acceptedRequests().flatMap((r) => r.events);
  }

  acceptedEventIds(): string[] {
    return this.acceptedEvents().map((e) => e.event_id as string);
  }

  /** Polls until `check` holds (or throws after `timeoutMs`, a generous bound: a wait, not a timing). */
  async waitFor(check: () => boolean, timeoutMs = 20_000, what = 'condition'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`fake Graph API: timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://fake');
    const match = /^\/(v\d+\.\d+)\/(\d+)\/events$/.exec(url.pathname);
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    const pixel = /^\/(v\d+\.\d+)\/(\d+)$/.exec(url.pathname);
    if (req.method === 'GET' && pixel) {
      // Reading the pixel with the token (the destination check, api.md §12): {id, name}, or code 190.
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const token = bearer ?? url.searchParams.get('access_token') ?? undefined;
      this.pixelReads.push({ pixelId: pixel[2] as string, accessToken: token, tokenInUrl: url.searchParams.has('access_token') });
      if (!token || (this.validTokens && !this.validTokens.has(token))) {
        send(401, graphError(190, 'Invalid OAuth access token - Cannot parse access token', { error_subcode: 463 }));
        return;
      }
      send(200, { id: pixel[2], name: 'Fake pixel' });
      return;
    }
    if (req.method !== 'POST' || !match) {
      send(400, graphError(100, `Unsupported ${req.method} request.`, { error_subcode: 33 }));
      return;
    }

    const contentType = req.headers['content-type'] ?? '';
    let params: Record<string, unknown> = {};
    try {
      if (contentType.startsWith('application/json')) params = JSON.parse(raw) as Record<string, unknown>;
      else params = Object.fromEntries(new URLSearchParams(raw));
    } catch {
      send(400, graphError(100, 'Invalid JSON in the request body'));
      return;
    }
    let data: unknown = params.data;
    if (typeof data === 'string') {
      try {
        data = JSON.parse(data);
      } catch {
        data = undefined;
      }
    }
    const accessToken = (params.access_token as string | undefined) ?? url.searchParams.get('access_token') ?? undefined;
    const testEventCode = (params.test_event_code as string | undefined) ?? undefined;
    const record: FakeRequest = {
      at: Date.now(),
      version: match[1] as string,
      pixelId: match[2] as string,
      contentType,
      accessToken,
      tokenInUrl: url.searchParams.has('access_token'),
      testEventCode,
      events: Array.isArray(data) ? (data as FakeEvent[]) : [],
      status: 200,
      accepted: false,
    };
    this.requests.push(record);

    const gate = this.gate;
    if (gate) await gate;
    if (this.latencyMs > 0) await new Promise((r) => setTimeout(r, this.latencyMs));
    const fault = this.faults.shift() ?? this.outage;
    if (fault) {
      switch (fault.type) {
        case 'http500':
          record.status = 500;
          return send(500, graphError(fault.code ?? 2, 'Service temporarily unavailable', { is_transient: true }));
        case 'bad-gateway':
          record.status = 502;
          res.writeHead(502, { 'content-type': 'text/html' });
          res.end('<html><body>502 Bad Gateway</body></html>');
          return;
        case 'hang':
          record.status = 'hang';
          // Until `ms` pass or the client gives up (its timeout closes the connection).
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, fault.ms);
            res.once('close', () => {
              clearTimeout(timer);
              resolve();
            });
          });
          res.destroy();
          return;
        case 'reset':
          record.status = 'reset';
          req.socket.destroy();
          return;
        case 'throttle':
          record.status = 400;
          return send(
            400,
            graphError(fault.code, `(#${fault.code}) Calls to this api have exceeded the rate limit.`),
            fault.retryAfterSeconds === undefined ? {} : { 'retry-after': String(fault.retryAfterSeconds) },
          );
        case 'error':
          record.status = fault.status ?? 400;
          return send(
            record.status,
            graphError(fault.code, fault.message ?? `(#${fault.code}) Error`, {
              is_transient: fault.transient ?? false,
              ...(fault.subcode !== undefined && { error_subcode: fault.subcode }),
            }),
          );
      }
    }

    if (!accessToken || (this.validTokens && !this.validTokens.has(accessToken))) {
      record.status = 400;
      return send(400, graphError(190, 'Invalid OAuth access token - Cannot parse access token'));
    }
    if (!Array.isArray(data) || data.length === 0) {
      record.status = 400;
      return send(400, graphError(100, '(#100) param data must be an array.'));
    }
    if (data.length > 1000) {
      record.status = 400;
      return send(400, graphError(100, '(#100) data: array may hold at most 1000 events', { error_subcode: 2804024 }));
    }
    for (const [index, event] of (data as FakeEvent[]).entries()) {
      const problem = eventProblem(event, index);
      if (problem) {
        record.status = 400;
        return send(400, graphError(100, 'Invalid parameter', { error_subcode: 2804003, error_user_msg: problem }));
      }
      if (this.poisoned.has(event.event_id)) {
        record.status = 400;
        return send(
          400,
          graphError(100, 'Invalid parameter', {
            is_transient: false,
            error_subcode: 2804050,
            error_user_msg: `Event ${event.event_id} (data[${index}]) has an invalid custom_data value`,
          }),
        );
      }
    }
    record.accepted = true;
    send(200, { events_received: data.length, messages: [], fbtrace_id: `A${randomBytes(8).toString('hex')}` });
  }
}
