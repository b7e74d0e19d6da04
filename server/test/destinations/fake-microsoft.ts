import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for Microsoft Advertising's UET Conversions API: `POST /v1/{tagId}/events`
 * with `Authorization: Bearer <token>` and JSON `{data: [...], dataProvider?,
 * continueOnValidationError?}`. Answers as the API documents:
 * - 200 `{eventsReceived, indexedErrors?: [{index, errorCode, errorMessage}]}` (with
 *   continueOnValidationError, a refused event is listed by index and the others ingested), an
 *   `x-ms-request-id` header on every answer;
 * - 400 `{error: {code: "InvalidRequest", message}}` for a body it cannot read (no data array,
 *   more than 1000 events, or an invalid event without continueOnValidationError);
 * - 401 `{error: {code: "Unauthorized", message}}` for a token it does not hold for the tag;
 * - 429 with Retry-After, 500 (faults a test queues).
 */

// biome-ignore lint/suspicious/noExplicitAny: events are arbitrary JSON as the platform receives them
export type Json = Record<string, any>;

export interface MicrosoftRequest {
  at: number;
  tagId: string;
  authorization: string | undefined;
  body: Json;
  status: number;
  requestId: string;
}

export type MicrosoftFault = { type: 'throttle'; retryAfterSeconds?: number } | { type: 'server' };

const SHA256 = /^[a-f0-9]{64}$/;

export class FakeMicrosoft {
  /** Delay before every answer (the forwarding bench: a platform’s round trip). */
  delayMs = 0;
  token = 'ms-capi-token-123';
  tagId = '343210987';
  readonly requests: MicrosoftRequest[] = [];
  faults: MicrosoftFault[] = [];
  /** Events whose msclkid is here are refused by index (invalid click id). */
  badClickIds = new Set<string>();
  private seq = 0;

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(): Promise<FakeMicrosoft> {
    let fake: FakeMicrosoft | undefined;
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const answer = (fake as FakeMicrosoft).handle(req, Buffer.concat(chunks).toString('utf8'));
        const send = () => {
          res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
          res.end(JSON.stringify(answer.body));
        };
        const delay = (fake as FakeMicrosoft).delayMs;
        if (delay > 0) setTimeout(send, delay);
        else send();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    fake = new FakeMicrosoft(server, `http://127.0.0.1:${port}`);
    return fake;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  reset(): void {
    this.requests.length = 0;
    this.faults = [];
    this.badClickIds.clear();
  }

  /** Events ingested (200 answers, minus those refused by index). */
  accepted(): Json[] {
    return this.requests.filter((r) => r.status === 200).flatMap((r) => (r.body.data as Json[]).filter((e) => !this.invalid(e)));
  }

  private invalid(event: Json): string | undefined {
    if (event.eventType !== 'custom' && event.eventType !== 'pageLoad') return 'eventType must be pageLoad or custom';
    if (typeof event.eventId !== 'string' || !event.eventId) return 'eventId is required';
    if (typeof event.eventTime !== 'number') return 'eventTime must be unix seconds';
    const user = event.userData ?? {};
    for (const key of ['em', 'ph']) {
      if (user[key] !== undefined && !SHA256.test(user[key])) return `userData.${key} must be SHA-256 hex`;
    }
    if (user.msclkid && this.badClickIds.has(user.msclkid)) return 'msclkid is not a valid Microsoft click id';
    return undefined;
  }

  private handle(req: http.IncomingMessage, raw: string): { status: number; headers?: Record<string, string>; body: Json } {
    const requestId = `ms-req-${++this.seq}`;
    const headers = { 'x-ms-request-id': requestId };
    const match = /^\/v1\/([^/]+)\/events$/.exec(req.url ?? '');
    const record = (status: number, body: Json) => {
      this.requests.push({
        at: Date.now(),
        tagId: match?.[1] ?? '',
        authorization: req.headers.authorization,
        body,
        status,
        requestId,
      });
    };
    if (req.method !== 'POST' || !match)
      return { status: 404, headers, body: { error: { code: 'NotFound', message: 'Not found' } } };
    let body: Json;
    try {
      body = JSON.parse(raw);
    } catch {
      record(400, {});
      return { status: 400, headers, body: { error: { code: 'InvalidRequest', message: 'Body is not JSON' } } };
    }
    if (req.headers.authorization !== `Bearer ${this.token}` || match[1] !== this.tagId) {
      record(401, body);
      return {
        status: 401,
        headers,
        body: { error: { code: 'Unauthorized', message: 'Invalid access token for this UET tag' } },
      };
    }
    const fault = this.faults.shift();
    if (fault?.type === 'throttle') {
      record(429, body);
      return {
        status: 429,
        headers: { ...headers, 'retry-after': String(fault.retryAfterSeconds ?? 0) },
        body: { error: { code: 'TooManyRequests', message: 'Rate limit exceeded' } },
      };
    }
    if (fault?.type === 'server') {
      record(500, body);
      return { status: 500, headers, body: { error: { code: 'InternalError', message: 'Internal server error' } } };
    }
    const data = body.data;
    if (!Array.isArray(data) || data.length === 0 || data.length > 1000) {
      record(400, body);
      return { status: 400, headers, body: { error: { code: 'InvalidRequest', message: 'data must hold 1 to 1000 events' } } };
    }
    const indexedErrors = data
      .map((event: Json, index: number) => ({ index, message: this.invalid(event) }))
      .filter((e) => e.message)
      .map((e) => ({ index: e.index, errorCode: 'InvalidEvent', errorMessage: e.message }));
    if (indexedErrors.length > 0 && !body.continueOnValidationError) {
      record(400, body);
      return { status: 400, headers, body: { error: { code: 'InvalidRequest', message: indexedErrors[0]?.errorMessage } } };
    }
    record(200, body);
    return {
      status: 200,
      headers,
      body: { eventsReceived: data.length - indexedErrors.length, ...(indexedErrors.length > 0 && { indexedErrors }) },
    };
  }
}
