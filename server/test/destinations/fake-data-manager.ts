import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for Google's Data Manager API (`POST /v1/events:ingest`,
 * google.ads.datamanager.v1.IngestionService.IngestEvents) and Google's OAuth token endpoint,
 * reading requests as the real ones do (docs/destinations.md cites the sources):
 * - OAuth: form `grant_type=refresh_token&client_id&client_secret&refresh_token` →
 *   `{access_token, expires_in, token_type, scope}` (the scopes granted, space-separated).
 * - events:ingest: `Authorization: Bearer` of a token with the `datamanager` scope; the JSON body
 *   an IngestEventsRequest (`destinations`, `events`, `consent?`, `validateOnly?`, `encoding?`,
 *   `encryptionInfo?`), every object checked field by field against the proto's fields, so a
 *   misspelt or invented field is refused as Google refuses it ("Invalid JSON payload received.
 *   Unknown name …", 400 INVALID_ARGUMENT). Success: `{requestId}`. Errors: a google.rpc.Status
 *   `{error: {code, message, status, details}}` with a `google.rpc.BadRequest` whose
 *   `fieldViolations[].field` names the event (`events[2].ad_identifiers.gclid`), an `ErrorInfo`
 *   and a `RequestInfo`. Fail-fast as documented: one bad event refuses the whole request.
 * - A second event with the same transactionId for the same conversion action is an adjustment:
 *   its conversionValue and currency replace the recorded ones.
 */

// biome-ignore lint/suspicious/noExplicitAny: requests are arbitrary JSON as Google receives them
export type Json = Record<string, any>;

export const DATA_MANAGER_SCOPE = 'https://www.googleapis.com/auth/datamanager';
export const ADWORDS_SCOPE = 'https://www.googleapis.com/auth/adwords';

export interface IngestRequest {
  at: number;
  body: Json;
  authorization: string | undefined;
  developerToken: string | undefined;
  status: number;
  requestId?: string;
  error?: Json;
}

export type DataManagerFault = { type: 'throttle'; retryAfterSeconds?: number } | { type: 'http500' } | { type: 'expire-token' };

export interface RecordedConversion {
  value: number;
  currency: string;
  event: Json;
  /** Later events with the same transactionId: the values they restated, in order. */
  adjustments: Array<{ value: number; currency: string; lastUpdatedTimestamp?: string }>;
}

const FIELDS = {
  request: ['destinations', 'events', 'consent', 'validateOnly', 'encoding', 'encryptionInfo'],
  destination: ['reference', 'loginAccount', 'linkedAccount', 'operatingAccount', 'productDestinationId'],
  account: ['product', 'accountId', 'accountType'],
  event: [
    'destinationReferences',
    'transactionId',
    'eventTimestamp',
    'lastUpdatedTimestamp',
    'userData',
    'consent',
    'adIdentifiers',
    'currency',
    'conversionValue',
    'eventSource',
    'eventDeviceInfo',
    'cartData',
    'customVariables',
    'experimentalFields',
    'userProperties',
  ],
  adIdentifiers: ['sessionAttributes', 'gclid', 'gbraid', 'wbraid', 'landingPageDeviceInfo'],
  userData: ['userIdentifiers'],
  userIdentifier: ['emailAddress', 'phoneNumber', 'address'],
  consent: ['adUserData', 'adPersonalization'],
};
const CONSENT_STATUS = ['CONSENT_STATUS_UNSPECIFIED', 'CONSENT_GRANTED', 'CONSENT_DENIED'];
const EVENT_SOURCES = ['EVENT_SOURCE_UNSPECIFIED', 'WEB', 'APP', 'IN_STORE', 'PHONE', 'OTHER'];
const ACCOUNT_TYPES = ['GOOGLE_ADS', 'DISPLAY_VIDEO_PARTNER', 'DISPLAY_VIDEO_ADVERTISER', 'DATA_PARTNER'];
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
const HEX_SHA256 = /^[a-f0-9]{64}$/;

/** A refusal: the field violation Google reports (snake_case proto path), its reason, its description. */
class Violation extends Error {
  constructor(
    readonly field: string,
    readonly reason: string,
    description: string,
  ) {
    super(description);
  }
}

function known(value: unknown, fields: string[], at: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Violation(at, 'INVALID_ARGUMENT', `Invalid value at '${at}': expected an object`);
  }
  for (const key of Object.keys(value)) {
    if (!fields.includes(key)) {
      throw new Violation(
        at,
        'INVALID_ARGUMENT',
        `Invalid JSON payload received. Unknown name "${key}" at '${at || 'request'}': Cannot find field.`,
      );
    }
  }
  return value as Json;
}

export class FakeDataManager {
  /** Delay before every answer (the forwarding bench: a platform’s round trip). */
  delayMs = 0;
  oauthClient = {
    clientId: 'client-1.apps.googleusercontent.com',
    clientSecret: 'GOCSPX-secret',
    refreshToken: '1//refresh-abc',
  };
  /** The scopes the refresh token was granted (the token answer's `scope`). */
  grantedScopes = [ADWORDS_SCOPE, DATA_MANAGER_SCOPE];
  tokenExchanges = 0;
  readonly tokens = new Map<string, { expiresAt: number; scopes: string[] }>();
  readonly requests: IngestRequest[] = [];
  /** Accepted conversions by `${productDestinationId}\n${transactionId}`. */
  readonly conversions = new Map<string, RecordedConversion>();
  /** An event with one of these gclids is refused (INVALID_FORMAT at events[i].ad_identifiers.gclid). */
  badClickIds = new Set<string>();
  faults: DataManagerFault[] = [];

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
    /** Another fake's access tokens (FakePlatforms.tokens): tokens issued here are good there too. */
    private readonly shared?: Map<string, number>,
  ) {}

  static async start(options: { shareTokensWith?: Map<string, number> } = {}): Promise<FakeDataManager> {
    let fake: FakeDataManager | undefined;
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const answer = (fake as FakeDataManager).handle(req, Buffer.concat(chunks).toString('utf8'));
        const send = () => {
          res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
          res.end(JSON.stringify(answer.body));
        };
        const delay = (fake as FakeDataManager).delayMs;
        if (delay > 0) setTimeout(send, delay);
        else send();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    fake = new FakeDataManager(server, `http://127.0.0.1:${port}`, options.shareTokensWith);
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
    this.requests.length = 0;
    this.conversions.clear();
    this.badClickIds.clear();
    this.faults = [];
    this.tokens.clear();
    this.tokenExchanges = 0;
    this.grantedScopes = [ADWORDS_SCOPE, DATA_MANAGER_SCOPE];
  }

  /** Events Google took (status 200, not validateOnly), in order. */
  accepted(): Json[] {
    return this.requests.filter((r) => r.status === 200 && r.body.validateOnly !== true).flatMap((r) => r.body.events as Json[]);
  }

  async waitFor(check: () => boolean, timeoutMs = 8000, what = 'condition'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  private handle(req: http.IncomingMessage, raw: string): { status: number; body: Json; headers?: Record<string, string> } {
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'POST' && path === '/token') return this.token(raw);
    if (req.method === 'POST' && path === '/v1/events:ingest') return this.ingest(req, raw);
    return { status: 404, body: { error: { code: 404, message: 'Not Found', status: 'NOT_FOUND' } } };
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
    const expiresAt = Date.now() + 3600_000;
    this.tokens.set(token, { expiresAt, scopes: [...this.grantedScopes] });
    this.shared?.set(token, expiresAt);
    return {
      status: 200,
      body: { access_token: token, expires_in: 3600, token_type: 'Bearer', scope: this.grantedScopes.join(' ') },
    };
  }

  private error(status: number, code: string, message: string, reason: string, violations: Violation[] = []) {
    const requestId = randomUUID();
    const details: Json[] = [
      { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'datamanager.googleapis.com' },
      { '@type': 'type.googleapis.com/google.rpc.RequestInfo', requestId },
    ];
    if (violations.length > 0) {
      details.unshift({
        '@type': 'type.googleapis.com/google.rpc.BadRequest',
        fieldViolations: violations.map((v) => ({ field: v.field, description: v.message, reason: v.reason })),
      });
    }
    return { status, body: { error: { code: status, message, status: code, details } } };
  }

  private ingest(req: http.IncomingMessage, raw: string) {
    let body: Json;
    try {
      body = JSON.parse(raw) as Json;
    } catch {
      body = {};
    }
    const request: IngestRequest = {
      at: Date.now(),
      body,
      authorization: req.headers.authorization,
      developerToken: req.headers['developer-token'] as string | undefined,
      status: 200,
    };
    this.requests.push(request);
    const answer = (out: { status: number; body: Json; headers?: Record<string, string> }) => {
      request.status = out.status;
      if (out.status !== 200) request.error = out.body.error;
      return out;
    };
    const fault = this.faults.shift();
    if (fault?.type === 'expire-token') this.tokens.clear();
    const token = /^Bearer (.+)$/.exec(request.authorization ?? '')?.[1];
    const granted = token ? this.tokens.get(token) : undefined;
    if (!granted || granted.expiresAt <= Date.now()) {
      return answer(
        this.error(
          401,
          'UNAUTHENTICATED',
          'Request had invalid authentication credentials. Expected OAuth 2 access token.',
          'UNAUTHENTICATED',
        ),
      );
    }
    if (!granted.scopes.includes(DATA_MANAGER_SCOPE)) {
      return answer(
        this.error(
          403,
          'PERMISSION_DENIED',
          'Request had insufficient authentication scopes.',
          'ACCESS_TOKEN_SCOPE_INSUFFICIENT',
        ),
      );
    }
    if (fault?.type === 'throttle') {
      const out = this.error(429, 'RESOURCE_EXHAUSTED', 'Too many requests.', 'RESOURCE_EXHAUSTED');
      return answer({ ...out, headers: { 'retry-after': String(fault.retryAfterSeconds ?? 0) } });
    }
    if (fault?.type === 'http500') return answer(this.error(500, 'INTERNAL', 'Internal error encountered.', 'INTERNAL_ERROR'));
    const violations: Violation[] = [];
    try {
      this.validateRequest(body);
    } catch (error) {
      if (!(error instanceof Violation)) throw error;
      violations.push(error);
    }
    if (violations.length === 0) {
      (body.events as Json[]).forEach((event, i) => {
        try {
          this.validateEvent(event, i, body);
        } catch (error) {
          if (!(error instanceof Violation)) throw error;
          violations.push(error);
        }
      });
    }
    if (violations.length > 0) {
      return answer(
        this.error(
          400,
          'INVALID_ARGUMENT',
          'Request contains an invalid argument.',
          violations[0]?.reason ?? 'INVALID_ARGUMENT',
          violations,
        ),
      );
    }
    request.requestId = randomUUID();
    if (body.validateOnly !== true) {
      const destination = (body.destinations as Json[])[0] as Json;
      for (const event of body.events as Json[]) this.record(String(destination.productDestinationId), event);
    }
    return answer({ status: 200, body: { requestId: request.requestId } });
  }

  private record(action: string, event: Json) {
    const key = `${action}\n${event.transactionId}`;
    const existing = this.conversions.get(key);
    if (existing) {
      existing.adjustments.push({
        value: event.conversionValue,
        currency: event.currency,
        ...(event.lastUpdatedTimestamp && { lastUpdatedTimestamp: event.lastUpdatedTimestamp }),
      });
      existing.value = event.conversionValue;
      existing.currency = event.currency;
    } else {
      this.conversions.set(key, { value: event.conversionValue, currency: event.currency, event, adjustments: [] });
    }
  }

  private validateRequest(body: Json) {
    known(body, FIELDS.request, '');
    if (!Array.isArray(body.destinations) || body.destinations.length === 0) {
      throw new Violation('destinations', 'REQUIRED_FIELD_MISSING', 'At least one destination is required.');
    }
    if (body.destinations.length > 10) throw new Violation('destinations', 'TOO_MANY_DESTINATIONS', 'At most 10 destinations.');
    body.destinations.forEach((d: unknown, i: number) => {
      const at = `destinations[${i}]`;
      const destination = known(d, FIELDS.destination, at);
      for (const name of ['operatingAccount', 'loginAccount', 'linkedAccount']) {
        if (destination[name] === undefined) continue;
        const account = known(destination[name], FIELDS.account, `${at}.${name}`);
        if (!ACCOUNT_TYPES.includes(account.accountType)) {
          throw new Violation(`${at}.${name}.account_type`, 'INVALID_ENUM_VALUE', `Invalid account type ${account.accountType}.`);
        }
        if (typeof account.accountId !== 'string' || !/^\d+$/.test(account.accountId)) {
          throw new Violation(`${at}.${name}.account_id`, 'INVALID_FORMAT', 'The account id must be digits without dashes.');
        }
      }
      if (destination.operatingAccount === undefined) {
        throw new Violation(`${at}.operating_account`, 'REQUIRED_FIELD_MISSING', 'operating_account is required.');
      }
      if (typeof destination.productDestinationId !== 'string' || !/^\d+$/.test(destination.productDestinationId)) {
        throw new Violation(`${at}.product_destination_id`, 'INVALID_CONVERSION_ACTION_ID', 'Conversion action ID is not valid.');
      }
    });
    if (!Array.isArray(body.events) || body.events.length === 0) {
      throw new Violation('events', 'REQUIRED_FIELD_MISSING', 'At least one event is required.');
    }
    if (body.events.length > 2000) throw new Violation('events', 'TOO_MANY_EVENTS', 'At most 2000 events per request.');
    if (body.encoding !== undefined && !['HEX', 'BASE64'].includes(body.encoding)) {
      throw new Violation('encoding', 'INVALID_ENUM_VALUE', `Invalid encoding ${body.encoding}.`);
    }
    if (body.validateOnly !== undefined && typeof body.validateOnly !== 'boolean') {
      throw new Violation('validate_only', 'INVALID_ARGUMENT', 'validate_only must be a boolean.');
    }
    if (body.consent !== undefined) this.validateConsent(body.consent, 'consent');
  }

  private validateConsent(value: unknown, at: string) {
    const consent = known(value, FIELDS.consent, at);
    for (const [key, name] of [
      ['adUserData', 'ad_user_data'],
      ['adPersonalization', 'ad_personalization'],
    ] as const) {
      if (consent[key] !== undefined && !CONSENT_STATUS.includes(consent[key])) {
        throw new Violation(`${at}.${name}`, 'INVALID_ENUM_VALUE', `Invalid consent status ${consent[key]}.`);
      }
    }
  }

  private validateEvent(value: unknown, i: number, body: Json) {
    const at = `events[${i}]`;
    const event = known(value, FIELDS.event, at);
    if (typeof event.eventTimestamp !== 'string' || !RFC3339.test(event.eventTimestamp)) {
      throw new Violation(`${at}.event_timestamp`, 'INVALID_FORMAT', 'event_timestamp must be an RFC 3339 timestamp.');
    }
    if (event.lastUpdatedTimestamp !== undefined && !RFC3339.test(String(event.lastUpdatedTimestamp))) {
      throw new Violation(
        `${at}.last_updated_timestamp`,
        'INVALID_FORMAT',
        'last_updated_timestamp must be an RFC 3339 timestamp.',
      );
    }
    if (event.transactionId !== undefined && (typeof event.transactionId !== 'string' || event.transactionId.length > 256)) {
      throw new Violation(`${at}.transaction_id`, 'INVALID_FORMAT', 'transaction_id must be a string of at most 256 characters.');
    }
    if (event.currency !== undefined && !/^[A-Z]{3}$/.test(String(event.currency))) {
      throw new Violation(`${at}.currency`, 'INVALID_CURRENCY_CODE', 'The currency code is not supported.');
    }
    if (event.conversionValue !== undefined && typeof event.conversionValue !== 'number') {
      throw new Violation(`${at}.conversion_value`, 'INVALID_NUMBER_FORMAT', 'conversion_value must be a number.');
    }
    if (event.eventSource !== undefined && !EVENT_SOURCES.includes(event.eventSource)) {
      throw new Violation(`${at}.event_source`, 'INVALID_ENUM_VALUE', `Invalid event source ${event.eventSource}.`);
    }
    if (event.consent !== undefined) this.validateConsent(event.consent, `${at}.consent`);
    let identifiers = 0;
    if (event.adIdentifiers !== undefined) {
      const ids = known(event.adIdentifiers, FIELDS.adIdentifiers, `${at}.ad_identifiers`);
      for (const key of ['gclid', 'gbraid', 'wbraid']) {
        if (ids[key] === undefined) continue;
        if (typeof ids[key] !== 'string' || ids[key] === '') {
          throw new Violation(`${at}.ad_identifiers.${key}`, 'INVALID_FORMAT', `${key} must be a non-empty string.`);
        }
        identifiers++;
      }
      if (typeof ids.gclid === 'string' && this.badClickIds.has(ids.gclid)) {
        throw new Violation(`${at}.ad_identifiers.gclid`, 'INVALID_FORMAT', 'The gclid could not be decoded.');
      }
    }
    if (event.userData !== undefined) {
      const userData = known(event.userData, FIELDS.userData, `${at}.user_data`);
      const list = userData.userIdentifiers;
      if (!Array.isArray(list) || list.length === 0 || list.length > 10) {
        throw new Violation(
          `${at}.user_data.user_identifiers`,
          'TOO_MANY_USER_IDENTIFIERS',
          'Between 1 and 10 user identifiers.',
        );
      }
      if (body.encoding === undefined) {
        throw new Violation('encoding', 'REQUIRED_FIELD_MISSING', 'encoding is required for user data uploads.');
      }
      list.forEach((entry: unknown, j: number) => {
        const where = `${at}.user_data.user_identifiers[${j}]`;
        const identifier = known(entry, FIELDS.userIdentifier, where);
        const keys = Object.keys(identifier);
        if (keys.length !== 1) throw new Violation(where, 'INVALID_ARGUMENT', 'Exactly one identifier must be set.');
        const hashed = identifier.emailAddress ?? identifier.phoneNumber;
        if (hashed !== undefined && (body.encoding !== 'HEX' || !HEX_SHA256.test(String(hashed)))) {
          throw new Violation(where, 'INVALID_SHA256_FORMAT', 'The SHA256 encoded value is malformed.');
        }
      });
      identifiers++;
    }
    if (identifiers === 0) {
      throw new Violation(at, 'NO_IDENTIFIERS_PROVIDED', 'Events data contains no user identifiers or ad identifiers.');
    }
  }
}
