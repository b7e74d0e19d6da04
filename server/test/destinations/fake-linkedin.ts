import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for LinkedIn's Conversions API: `POST /rest/conversionEvents` with
 * `X-RestLi-Method: BATCH_CREATE`, `LinkedIn-Version: YYYYMM`, `X-Restli-Protocol-Version:
 * 2.0.0` and `Authorization: Bearer`, `{elements}`; and `GET /rest/conversions/{id}` (the
 * check). It checks each element as LinkedIn does (the conversion URN, ms timestamp, value as a
 * decimal string, at least one user id, ids of the documented types), records each request,
 * and answers 200 with one `{status}` per element (201, or 400 with a message), 401, 429
 * (Retry-After) or 500 as told; every answer carries an `x-li-uuid`.
 */

// biome-ignore lint/suspicious/noExplicitAny: events are arbitrary JSON as LinkedIn receives them
export type Json = Record<string, any>;

export interface LinkedInRequest {
  at: number;
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Json;
  status: number;
  elementStatuses: number[];
  requestId: string;
}

export type LinkedInFault = { type: 'throttle'; retryAfterSeconds?: number } | { type: 'server' };

const SHA256 = /^[a-f0-9]{64}$/;
const URN = /^urn:lla:llaPartnerConversion:(\d+)$/;
const AMOUNT = /^-?\d+(\.\d+)?$/;

export class FakeLinkedIn {
  /** Delay before every answer (the forwarding bench: a platform’s round trip). */
  delayMs = 0;
  token = 'AQX-linkedin-token';
  ruleId = '123456';
  readonly requests: LinkedInRequest[] = [];
  faults: LinkedInFault[] = [];
  /** Elements whose li_fat_id is here are refused (status 400) with this message. */
  refuse = new Map<string, string>();

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(): Promise<FakeLinkedIn> {
    let fake: FakeLinkedIn | undefined;
    const server = http.createServer((req, res) => {
      const at = Date.now();
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const answer = (fake as FakeLinkedIn).handle(req, Buffer.concat(chunks).toString('utf8'), at);
        const send = () => {
          res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
          res.end(JSON.stringify(answer.body));
        };
        const delay = (fake as FakeLinkedIn).delayMs;
        if (delay > 0) setTimeout(send, delay);
        else send();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    fake = new FakeLinkedIn(server, `http://127.0.0.1:${port}`);
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

  /** Elements LinkedIn created (status 201). */
  accepted(): Json[] {
    return this.requests
      .filter((r) => r.method === 'POST' && r.status === 200)
      .flatMap((r) => (r.body.elements as Json[]).filter((_, i) => r.elementStatuses[i] === 201));
  }

  private handle(
    req: http.IncomingMessage,
    raw: string,
    at: number,
  ): { status: number; body: Json; headers?: Record<string, string> } {
    const path = (req.url ?? '').split('?')[0] as string;
    const requestId = randomBytes(8).toString('hex');
    let body: Json = {};
    try {
      body = raw ? (JSON.parse(raw) as Json) : {};
    } catch {
      body = {};
    }
    const answer = (status: number, payload: Json, elementStatuses: number[] = [], extra: Record<string, string> = {}) => {
      this.requests.push({ at, method: req.method ?? '', path, headers: req.headers, body, status, elementStatuses, requestId });
      return { status, body: payload, headers: { 'x-li-uuid': requestId, ...extra } };
    };
    if (req.headers['x-restli-protocol-version'] !== '2.0.0' || !/^\d{6}$/.test(String(req.headers['linkedin-version']))) {
      return answer(400, { status: 400, message: 'Missing or invalid LinkedIn-Version or X-Restli-Protocol-Version header' });
    }
    if (req.headers.authorization !== `Bearer ${this.token}`) {
      return answer(401, { status: 401, serviceErrorCode: 65600, code: 'INVALID_ACCESS_TOKEN', message: 'Invalid access token' });
    }
    const rule = /^\/rest\/conversions\/(\d+)$/.exec(path);
    if (req.method === 'GET' && rule) {
      if (rule[1] !== this.ruleId) return answer(404, { status: 404, message: `Conversion ${rule[1]} not found` });
      return answer(200, { id: Number(this.ruleId), name: 'CAPI Purchase', account: 'urn:li:sponsoredAccount:507' });
    }
    if (req.method !== 'POST' || path !== '/rest/conversionEvents') return answer(404, { status: 404, message: 'Not Found' });
    if (req.headers['x-restli-method'] !== 'BATCH_CREATE') return answer(400, { status: 400, message: 'Expected BATCH_CREATE' });
    const fault = this.faults.shift();
    if (fault?.type === 'throttle') {
      return answer(429, { status: 429, message: 'Resource level throttle limit reached' }, [], {
        'retry-after': String(fault.retryAfterSeconds ?? 0),
      });
    }
    if (fault?.type === 'server') return answer(500, { status: 500, message: 'Internal Server Error' });
    if (!Array.isArray(body.elements) || body.elements.length === 0)
      return answer(400, { status: 400, message: 'elements is required' });
    const results: Json[] = [];
    const statuses: number[] = [];
    for (const element of body.elements as Json[]) {
      const problem = this.invalid(element);
      const status = problem ? 400 : 201;
      statuses.push(status);
      results.push(problem ? { status, error: { message: problem, status } } : { status });
    }
    return answer(200, { elements: results }, statuses);
  }

  private invalid(element: Json): string | undefined {
    const urn = URN.exec(String(element.conversion));
    if (!urn) return `Invalid conversion URN ${element.conversion}`;
    if (urn[1] !== this.ruleId) return `Conversion ${urn[1]} does not belong to this account`;
    if (!Number.isInteger(element.conversionHappenedAt)) return 'conversionHappenedAt must be epoch milliseconds';
    const value = element.conversionValue;
    if (value && (typeof value.amount !== 'string' || !AMOUNT.test(value.amount) || !/^[A-Z]{3}$/.test(value.currencyCode))) {
      return 'conversionValue must be {currencyCode, amount: "<decimal string>"}';
    }
    const ids = element.user?.userIds;
    if (!Array.isArray(ids) || ids.length === 0) return 'At least one userId is required';
    for (const id of ids as Json[]) {
      if (id.idType === 'SHA256_EMAIL' && !SHA256.test(id.idValue)) return 'SHA256_EMAIL must be a SHA-256 hex digest';
      if (id.idType !== 'SHA256_EMAIL' && id.idType !== 'LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID')
        return `Unknown idType ${id.idType}`;
      const refused = id.idType === 'LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID' ? this.refuse.get(id.idValue) : undefined;
      if (refused) return refused;
    }
    return undefined;
  }
}
