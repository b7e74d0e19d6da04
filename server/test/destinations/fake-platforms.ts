import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { adjustRows, type GoogleConversionState } from './fake-google-adjustments.js';

/**
 * Local stand-ins for Google's OAuth token endpoint, the Google Ads API's
 * `customers/{id}:uploadClickConversions` and TikTok's Events API 2.0 `event/track`, on one
 * HTTP server. Each reads requests as the real one does and answers in its shapes:
 * - OAuth: form body `grant_type=refresh_token&client_id&client_secret&refresh_token` →
 *   `{access_token, expires_in, token_type}`, or `{error: "invalid_grant", error_description}`.
 * - Google Ads: `Authorization: Bearer`, `developer-token`, optional `login-customer-id`; JSON
 *   `{conversions, partialFailure, validateOnly?}` → `{results, partialFailureError?, jobId}`,
 *   where `partialFailureError` is a google.rpc.Status whose `details` hold a GoogleAdsFailure
 *   with `errors[].location.fieldPathElements` naming `conversions[index]`; request errors as
 *   `{error: {code, message, status, details}}` (401 UNAUTHENTICATED, 429 RESOURCE_EXHAUSTED).
 * - TikTok: `Access-Token` header; `{event_source: "web", event_source_id, test_event_code?,
 *   data}` → HTTP 200 `{code, message, request_id, data}` with code 0 on success.
 */

// biome-ignore lint/suspicious/noExplicitAny: events are arbitrary JSON as the platforms receive them
export type Json = Record<string, any>;

export interface GoogleUpload {
  at: number;
  customerId: string;
  developerToken: string | undefined;
  loginCustomerId: string | undefined;
  validateOnly: boolean;
  method: 'uploadClickConversions' | 'uploadConversionAdjustments';
  conversions: Json[];
  adjustments: Json[];
  /** Index → error of the rows refused. */
  refused: Map<number, string>;
  status: number;
}

export interface TikTokRequest {
  at: number;
  accessToken: string | undefined;
  body: Json;
  code: number;
}

export type GoogleFault = { type: 'throttle'; retryAfterSeconds?: number } | { type: 'http500' } | { type: 'expire-token' };
export type TikTokFault = { type: 'throttle' } | { type: 'server' } | { type: 'bad-token' };

const SHA256 = /^[a-f0-9]{64}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/;
const ACTION = /^customers\/\d{10}\/conversionActions\/\d+$/;

export class FakePlatforms {
  // Google OAuth
  oauthClient = {
    clientId: 'client-1.apps.googleusercontent.com',
    clientSecret: 'GOCSPX-secret',
    refreshToken: '1//refresh-abc',
  };
  tokenTtlSeconds = 3600;
  tokenExchanges = 0;
  /** Access token → expiry (ms); public so another fake (fake-data-manager.ts) can honour the same tokens. */
  readonly tokens = new Map<string, number>();
  // Google Ads
  developerToken = 'dev-token-XYZ';
  readonly uploads: GoogleUpload[] = [];
  /** The conversions Google holds (accepted uploads, not validateOnly), by `${conversionAction}\n${orderId}`. */
  readonly googleConversions = new Map<string, GoogleConversionState>();
  /** Rows whose gclid is here are refused (partial failure) with UNPARSEABLE_GCLID. */
  badClickIds = new Set<string>();
  googleFaults: GoogleFault[] = [];
  // TikTok
  tiktokToken = 'tt-access-token-123';
  readonly tiktok: TikTokRequest[] = [];
  tiktokFaults: TikTokFault[] = [];
  /** Every answer waits this long (the bench's 50 ms). */
  delayMs = 0;
  /** While set, Google answers HTTP 500 and TikTok code 50000 to every request (after the OAuth exchange). */
  outage = false;

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(): Promise<FakePlatforms> {
    let fake: FakePlatforms | undefined;
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const answer = (fake as FakePlatforms).handle(req, body);
        const send = () => {
          res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
          res.end(JSON.stringify(answer.body));
        };
        const delay = (fake as FakePlatforms).delayMs;
        if (delay > 0) setTimeout(send, delay);
        else send();
      });
    });
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    fake = new FakePlatforms(server, `http://127.0.0.1:${port}`);
    return fake;
  }

  get tokenUrl(): string {
    return `${this.url}/token`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  reset(): void {
    this.uploads.length = 0;
    this.googleConversions.clear();
    this.tiktok.length = 0;
    this.googleFaults = [];
    this.tiktokFaults = [];
    this.badClickIds.clear();
    this.tokens.clear();
    this.tokenExchanges = 0;
    this.tokenTtlSeconds = 3600;
    this.delayMs = 0;
    this.outage = false;
  }

  /** Conversions Google accepted (not validateOnly, not refused), by orderId. */
  googleAccepted(): Json[] {
    return this.uploads
      .filter((u) => u.status === 200 && !u.validateOnly)
      .flatMap((u) => u.conversions.filter((_, i) => !u.refused.has(i)));
  }

  tiktokAccepted(): Json[] {
    return this.tiktok.filter((r) => r.code === 0).flatMap((r) => r.body.data as Json[]);
  }

  async waitFor(check: () => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  private handle(req: http.IncomingMessage, raw: string): { status: number; body: Json; headers?: Record<string, string> } {
    const path = (req.url ?? '').split('?')[0] as string;
    if (req.method === 'POST' && path === '/token') return this.token(raw);
    const google = /^\/(v\d+)\/customers\/(\d+):(uploadClickConversions|uploadConversionAdjustments)$/.exec(path);
    if (req.method === 'POST' && google) {
      return this.upload(req, google[3] as GoogleUpload['method'], google[2] as string, raw);
    }
    if (req.method === 'POST' && path === '/open_api/v1.3/event/track/') return this.track(req, raw);
    return { status: 404, body: { error: 'not found' } };
  }

  private token(raw: string) {
    const form = new URLSearchParams(raw);
    if (form.get('grant_type') !== 'refresh_token') return { status: 400, body: { error: 'unsupported_grant_type' } };
    if (form.get('client_id') !== this.oauthClient.clientId || form.get('client_secret') !== this.oauthClient.clientSecret) {
      return { status: 401, body: { error: 'invalid_client', error_description: 'The OAuth client was not found.' } };
    }
    if (form.get('refresh_token') !== this.oauthClient.refreshToken) {
      return { status: 400, body: { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' } };
    }
    this.tokenExchanges++;
    const token = `ya29.${randomBytes(12).toString('hex')}`;
    this.tokens.set(token, Date.now() + this.tokenTtlSeconds * 1000);
    return {
      status: 200,
      body: {
        access_token: token,
        expires_in: this.tokenTtlSeconds,
        token_type: 'Bearer',
        scope: 'https://www.googleapis.com/auth/adwords',
      },
    };
  }

  private googleError(status: number, code: string, message: string, errors: Json[] = []) {
    return {
      status,
      body: {
        error: {
          code: status,
          message,
          status: code,
          details: [
            {
              '@type': 'type.googleapis.com/google.ads.googleads.v22.errors.GoogleAdsFailure',
              errors,
              requestId: randomBytes(8).toString('hex'),
            },
          ],
        },
      },
    };
  }

  /** Adjustments Google applied (not validateOnly, not refused), in order. */
  googleAdjusted(): Json[] {
    return this.uploads
      .filter((u) => u.status === 200 && !u.validateOnly)
      .flatMap((u) => u.adjustments.filter((_, i) => !u.refused.has(i)));
  }

  private upload(req: http.IncomingMessage, method: GoogleUpload['method'], customerId: string, raw: string) {
    const body = JSON.parse(raw) as Json;
    const upload: GoogleUpload = {
      at: Date.now(),
      customerId,
      developerToken: req.headers['developer-token'] as string | undefined,
      loginCustomerId: req.headers['login-customer-id'] as string | undefined,
      validateOnly: body.validateOnly === true,
      method,
      conversions: Array.isArray(body.conversions) ? body.conversions : [],
      adjustments: Array.isArray(body.conversionAdjustments) ? body.conversionAdjustments : [],
      refused: new Map(),
      status: 200,
    };
    this.uploads.push(upload);
    const answer = (status: number, out: { status: number; body: Json; headers?: Record<string, string> }) => {
      upload.status = status;
      return out;
    };
    const fault = this.outage ? ({ type: 'http500' } as const) : this.googleFaults.shift();
    if (fault?.type === 'expire-token') this.tokens.clear();
    const auth = /^Bearer (.+)$/.exec((req.headers.authorization as string | undefined) ?? '')?.[1];
    const expiry = auth ? this.tokens.get(auth) : undefined;
    if (expiry === undefined || expiry <= Date.now()) {
      return answer(
        401,
        this.googleError(
          401,
          'UNAUTHENTICATED',
          'Request had invalid authentication credentials. Expected OAuth 2 access token.',
        ),
      );
    }
    if (upload.developerToken !== this.developerToken) {
      return answer(
        403,
        this.googleError(403, 'PERMISSION_DENIED', 'The caller does not have permission', [
          { errorCode: { authorizationError: 'DEVELOPER_TOKEN_NOT_APPROVED' }, message: 'The developer token is not approved.' },
        ]),
      );
    }
    if (fault?.type === 'throttle') {
      const out = this.googleError(429, 'RESOURCE_EXHAUSTED', 'Too many requests', [
        { errorCode: { quotaError: 'RESOURCE_EXHAUSTED' }, message: 'Too many requests. Retry in 1 seconds.' },
      ]);
      return answer(429, { ...out, headers: { 'retry-after': String(fault.retryAfterSeconds ?? 0) } });
    }
    if (fault?.type === 'http500') return answer(500, this.googleError(500, 'INTERNAL', 'Internal error encountered.'));
    if (body.partialFailure !== true) {
      return answer(400, this.googleError(400, 'INVALID_ARGUMENT', 'partial_failure must be true for conversion uploads'));
    }
    if (upload.conversions.length > 2000 || upload.adjustments.length > 2000) {
      return answer(400, this.googleError(400, 'INVALID_ARGUMENT', 'Too many operations in the request (limit 2000)'));
    }
    if (method === 'uploadConversionAdjustments') {
      if (upload.conversions.length > 0 || upload.adjustments.length === 0) {
        return answer(400, this.googleError(400, 'INVALID_ARGUMENT', 'conversion_adjustments: required'));
      }
      const { errors, refused, results } = adjustRows(upload.adjustments, this.googleConversions, upload.validateOnly);
      for (const [index, message] of refused) upload.refused.set(index, message);
      const out: Json = { jobId: String(1000 + this.uploads.length) };
      if (!upload.validateOnly) out.results = results;
      if (errors.length > 0) {
        out.partialFailureError = {
          code: 3,
          message: `${errors.length} adjustment(s) failed`,
          details: [{ '@type': 'type.googleapis.com/google.ads.googleads.v22.errors.GoogleAdsFailure', errors }],
        };
      }
      return answer(200, { status: 200, body: out });
    }
    const errors: Json[] = [];
    const results: Json[] = [];
    upload.conversions.forEach((c, index) => {
      const location = { fieldPathElements: [{ fieldName: 'conversions', index }] };
      const ids = ['gclid', 'gbraid', 'wbraid'].filter((k) => typeof c[k] === 'string');
      let problem: Json | undefined;
      if (ids.length !== 1)
        problem = {
          errorCode: { conversionUploadError: 'INVALID_CONVERSION_ACTION_TYPE' },
          message: 'Exactly one of gclid, gbraid, wbraid is required.',
        };
      else if (typeof c.gclid === 'string' && this.badClickIds.has(c.gclid))
        problem = { errorCode: { conversionUploadError: 'UNPARSEABLE_GCLID' }, message: 'The gclid could not be decoded.' };
      else if (!ACTION.test(String(c.conversionAction)))
        problem = { errorCode: { conversionUploadError: 'INVALID_CONVERSION_ACTION' }, message: 'Invalid conversion action.' };
      else if (!DATE_TIME.test(String(c.conversionDateTime)))
        problem = {
          errorCode: { dateError: 'INVALID_STRING_DATE_TIME' },
          message: 'conversionDateTime is not yyyy-mm-dd hh:mm:ss+|-hh:mm.',
        };
      else if (ids[0] !== 'gclid' && c.userIdentifiers)
        problem = {
          errorCode: { conversionUploadError: 'UNSUPPORTED_USER_IDENTIFIER' },
          message: 'User identifiers are not supported with gbraid or wbraid.',
        };
      else if (
        Array.isArray(c.userIdentifiers) &&
        !c.userIdentifiers.every((u: Json) => SHA256.test(u.hashedEmail ?? u.hashedPhoneNumber ?? ''))
      )
        problem = { errorCode: { userDataError: 'INVALID_HASH' }, message: 'User identifiers must be SHA-256 hex.' };
      if (problem) {
        errors.push({ ...problem, location });
        upload.refused.set(index, problem.message);
        results.push({});
      } else {
        if (!upload.validateOnly) {
          const key = `${c.conversionAction}\n${c.orderId}`;
          if (!this.googleConversions.has(key)) {
            this.googleConversions.set(key, {
              value: c.conversionValue,
              currency: c.currencyCode,
              retracted: false,
              adjustments: [],
            });
          }
        }
        results.push({
          [ids[0] as string]: c[ids[0] as string],
          conversionAction: c.conversionAction,
          conversionDateTime: c.conversionDateTime,
        });
      }
    });
    const out: Json = { jobId: String(1000 + this.uploads.length) };
    if (!upload.validateOnly) out.results = results;
    if (errors.length > 0) {
      out.partialFailureError = {
        code: 3,
        message: `${errors.length} conversion(s) failed, at conversions[${[...upload.refused.keys()].join(', ')}]`,
        details: [{ '@type': 'type.googleapis.com/google.ads.googleads.v22.errors.GoogleAdsFailure', errors }],
      };
    }
    return answer(200, { status: 200, body: out });
  }

  private track(req: http.IncomingMessage, raw: string) {
    const body = JSON.parse(raw) as Json;
    const request: TikTokRequest = {
      at: Date.now(),
      accessToken: req.headers['access-token'] as string | undefined,
      body,
      code: 0,
    };
    this.tiktok.push(request);
    const reply = (code: number, message: string) => {
      request.code = code;
      return { status: 200, body: { code, message, request_id: randomBytes(10).toString('hex'), data: {} } };
    };
    const fault = this.outage ? ({ type: 'server' } as const) : this.tiktokFaults.shift();
    if (fault?.type === 'throttle') return reply(40100, 'Too many requests. Please retry in some time.');
    if (fault?.type === 'server') return reply(50000, 'System error. Please retry.');
    if (fault?.type === 'bad-token' || request.accessToken !== this.tiktokToken) {
      return reply(40105, 'Access token is incorrect or has been revoked.');
    }
    if (body.event_source !== 'web') return reply(40002, 'event_source: must be one of web, app, offline, crm');
    if (typeof body.event_source_id !== 'string' || body.event_source_id === '')
      return reply(40002, 'event_source_id is required');
    if (!Array.isArray(body.data) || body.data.length === 0 || body.data.length > 1000)
      return reply(40002, 'data: 1 to 1000 events');
    for (const [i, e] of (body.data as Json[]).entries()) {
      if (typeof e.event !== 'string' || !Number.isInteger(e.event_time) || typeof e.event_id !== 'string') {
        return reply(40002, `data[${i}]: event, event_time and event_id are required`);
      }
      for (const key of ['email', 'phone']) {
        if (e.user?.[key] !== undefined && !SHA256.test(e.user[key]))
          return reply(40002, `data[${i}].user.${key} must be SHA-256`);
      }
    }
    return reply(0, 'OK');
  }
}
