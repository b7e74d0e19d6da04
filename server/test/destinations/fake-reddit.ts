import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for Reddit's Conversions API v2.0:
 * `POST /api/v2.0/conversions/events/{adAccountId}` with `Authorization: Bearer <token>` and
 * `{test_mode, events}`. It checks what Reddit checks (the token, the ad account, at most 1000
 * events, each with `event_at` ISO-8601 and an `event_type.tracking_type`, a hashed email),
 * records each request with the time it arrived, and answers as Reddit does: 200 `{message:
 * "Successfully processed N conversions events."}` with an `x-reddit-request-id`, 400
 * `{message}`, 401, 403 and 429 (with Retry-After).
 */

// biome-ignore lint/suspicious/noExplicitAny: events are arbitrary JSON as Reddit receives them
export type Json = Record<string, any>;

export interface RedditRequest {
  /** When it arrived (ms). */
  at: number;
  adAccountId: string;
  authorization: string | undefined;
  body: Json;
  status: number;
  requestId: string;
}

export type RedditFault =
  | { type: 'throttle'; retryAfterSeconds?: number }
  | { type: 'server' }
  | { type: 'bad-request'; message: string };

const SHA256 = /^[a-f0-9]{64}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;

export class FakeReddit {
  /** Delay before every answer (the forwarding bench: a platform’s round trip). */
  delayMs = 0;
  token = 'reddit-conversion-token';
  adAccountId = 'a2_abc123xyz';
  readonly requests: RedditRequest[] = [];
  faults: RedditFault[] = [];

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(): Promise<FakeReddit> {
    let fake: FakeReddit | undefined;
    const server = http.createServer((req, res) => {
      const at = Date.now();
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const answer = (fake as FakeReddit).handle(req, Buffer.concat(chunks).toString('utf8'), at);
        const send = () => {
          res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
          res.end(JSON.stringify(answer.body));
        };
        const delay = (fake as FakeReddit).delayMs;
        if (delay > 0) setTimeout(send, delay);
        else send();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    fake = new FakeReddit(server, `http://127.0.0.1:${port}`);
    return fake;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  reset(): void {
    this.requests.length = 0;
    this.faults = [];
  }

  /** Events Reddit accepted (200), test-mode ones included. */
  accepted(): Json[] {
    return this.requests.filter((r) => r.status === 200).flatMap((r) => r.body.events as Json[]);
  }

  async waitFor(check: () => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  private handle(
    req: http.IncomingMessage,
    raw: string,
    at: number,
  ): { status: number; body: Json; headers?: Record<string, string> } {
    const match = /^\/api\/v2\.0\/conversions\/events\/([^/?]+)$/.exec((req.url ?? '').split('?')[0] as string);
    if (req.method !== 'POST' || !match) return { status: 404, body: { message: 'Not Found' } };
    const requestId = randomBytes(8).toString('hex');
    const headers = { 'x-reddit-request-id': requestId };
    let body: Json = {};
    try {
      body = JSON.parse(raw) as Json;
    } catch {
      body = {};
    }
    const record = (status: number) => {
      this.requests.push({
        at,
        adAccountId: decodeURIComponent(match[1] as string),
        authorization: req.headers.authorization,
        body,
        status,
        requestId,
      });
    };
    const answer = (status: number, payload: Json, extra: Record<string, string> = {}) => {
      record(status);
      return { status, body: payload, headers: { ...headers, ...extra } };
    };
    if (req.headers.authorization !== `Bearer ${this.token}`) {
      return answer(401, { message: 'Unauthorized' });
    }
    if (decodeURIComponent(match[1] as string) !== this.adAccountId) return answer(403, { message: 'Forbidden' });
    const fault = this.faults.shift();
    if (fault?.type === 'throttle') {
      return answer(429, { message: 'Too Many Requests' }, { 'retry-after': String(fault.retryAfterSeconds ?? 0) });
    }
    if (fault?.type === 'server') return answer(503, { message: 'Service Unavailable' });
    if (fault?.type === 'bad-request') return answer(400, { message: fault.message });
    const problem = this.invalid(body);
    if (problem) return answer(400, { message: problem });
    return answer(200, { message: `Successfully processed ${body.events.length} conversions events.` });
  }

  /** Reddit's 400 messages for a body it cannot take. */
  private invalid(body: Json): string | undefined {
    if (typeof body.test_mode !== 'boolean') return 'test_mode must be a boolean';
    if (!Array.isArray(body.events) || body.events.length === 0) return 'events is required';
    if (body.events.length > 1000) return 'too many events: at most 1000 per request';
    for (const [i, event] of (body.events as Json[]).entries()) {
      if (typeof event.event_at !== 'string' || !ISO.test(event.event_at)) return `events[${i}].event_at must be ISO-8601`;
      if (typeof event.event_type?.tracking_type !== 'string') return `events[${i}].event_type.tracking_type is required`;
      if (event.user?.email !== undefined && !SHA256.test(event.user.email)) return `events[${i}].user.email must be hashed`;
    }
    return undefined;
  }
}
