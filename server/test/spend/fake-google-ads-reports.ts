import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for Google's OAuth token endpoint and the Google Ads API's
 * `customers/{id}/googleAds:searchStream`, for spend reports (api.md §11). It reads requests as
 * Google does and answers in Google's shapes:
 * - `POST /token`: form `grant_type=refresh_token&client_id&client_secret&refresh_token` →
 *   `{access_token, expires_in, token_type, scope}` or `{error: "invalid_grant" | "invalid_client", error_description}`.
 * - `POST /{version}/customers/{id}/googleAds:searchStream`: `Authorization: Bearer`,
 *   `developer-token`, `login-customer-id` (required when the account is reached through a
 *   manager); JSON `{query}` with the GAQL
 *   `SELECT segments.date, campaign.id, campaign.name, metrics.cost_micros, customer.currency_code,
 *   customer.time_zone FROM campaign WHERE segments.date BETWEEN 'YYYY-MM-DD' AND 'YYYY-MM-DD'` →
 *   a JSON array of batches `{results: [GoogleAdsRow], fieldMask, requestId}` (`batchSize` rows
 *   each; int64 fields as strings), errors as `{error: {code, message, status, details:
 *   [GoogleAdsFailure]}}`.
 *
 * Usage: `const google = await startFakeGoogleAdsReports({accounts: {'1234567890': {currency:
 * 'EUR', timeZone: 'Europe/Berlin', rows: [{date, campaignId, campaignName, costMicros}]}}})`;
 * `google.env()` gives the SpendEnv URLs, `google.credentials()` the google_ads credentials it
 * accepts; `google.requests` lists what was asked; `failNext(fault)` queues a fault.
 */

export interface FakeGoogleSpendRow {
  /** YYYY-MM-DD, the account's own day. */
  date: string;
  campaignId: string;
  campaignName?: string;
  /** int64 micros as text ("123450000" = 123.45). */
  costMicros: string;
}

export interface FakeGoogleAccount {
  currency: string;
  timeZone: string;
  rows: FakeGoogleSpendRow[];
  /** Reached only through this manager account (`login-customer-id`); without it, USER_PERMISSION_DENIED. */
  manager?: string;
  /** The OAuth user has no access to it: USER_PERMISSION_DENIED. */
  denied?: boolean;
}

export type FakeGoogleFault =
  | { type: 'throttle' } // 429 RESOURCE_EXHAUSTED, quotaError
  | { type: 'server' } // 500 INTERNAL, internalError
  | { type: 'expire-token' } // access tokens forgotten: 401 until the refresh token is exchanged again
  | { type: 'revoke' } // the refresh token revoked: OAuth answers invalid_grant from now on
  | { type: 'malformed'; body: unknown } // HTTP 200 with this JSON
  | { type: 'non-json' } // HTTP 200 with HTML
  | { type: 'stream-error' } // the first batch, then an error element (INTERNAL) in the stream
  | { type: 'hang' }; // never answers (a timeout)

export interface FakeGoogleRequest {
  customerId: string;
  version: string;
  authorization: string | undefined;
  developerToken: string | undefined;
  loginCustomerId: string | undefined;
  query: string;
  status: number;
}

export interface FakeGoogleAdsReports {
  url: string;
  tokenUrl: string;
  version: string;
  developerToken: string;
  oauthClient: { clientId: string; clientSecret: string; refreshToken: string };
  readonly requests: FakeGoogleRequest[];
  tokenExchanges(): number;
  /** Rows per batch of the stream (default 10000, Google's own). */
  batchSize: number;
  setSpend(customerId: string, account: FakeGoogleAccount): void;
  failNext(...faults: FakeGoogleFault[]): void;
  /** Forgets requests, queued faults, issued access tokens and a revocation. */
  reset(): void;
  env(): { googleAdsApiUrl: string; googleAdsApiVersion: string; googleOauthTokenUrl: string };
  credentials(overrides?: Partial<GoogleCredentialsShape>): GoogleCredentialsShape;
  close(): Promise<void>;
}

interface GoogleCredentialsShape {
  kind: 'google_ads';
  developerToken: string;
  loginCustomerId?: string;
  clientId: string;
  clientSecret: string;
  refreshToken: string;
}

type Answer = { status: number; body: unknown; raw?: string } | 'hang';

const QUERY =
  /^\s*SELECT\s+(.+?)\s+FROM\s+campaign\s+WHERE\s+segments\.date\s+BETWEEN\s+'(\d{4}-\d{2}-\d{2})'\s+AND\s+'(\d{4}-\d{2}-\d{2})'\s*$/is;
const FIELDS = [
  'segments.date',
  'campaign.id',
  'campaign.name',
  'metrics.cost_micros',
  'customer.currency_code',
  'customer.time_zone',
];
const FIELD_MASK = 'segments.date,campaign.id,campaign.name,metrics.costMicros,customer.currencyCode,customer.timeZone';

function googleError(
  status: number,
  grpc: string,
  message: string,
  errors: Array<{ errorCode: Record<string, string>; message: string }> = [],
) {
  return {
    status,
    body: {
      error: {
        code: status,
        message,
        status: grpc,
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

export async function startFakeGoogleAdsReports(options: {
  accounts?: Record<string, FakeGoogleAccount>;
  batchSize?: number;
}): Promise<FakeGoogleAdsReports> {
  const accounts = new Map(Object.entries(options.accounts ?? {}));
  const faults: FakeGoogleFault[] = [];
  const requests: FakeGoogleRequest[] = [];
  const tokens = new Set<string>();
  const oauthClient = {
    clientId: 'spend-client.apps.googleusercontent.com',
    clientSecret: 'GOCSPX-spend',
    refreshToken: '1//spend-refresh',
  };
  let revoked = false;
  let exchanges = 0;
  const version = 'v22';
  const developerToken = 'spend-dev-token';

  function token(raw: string): Answer {
    const form = new URLSearchParams(raw);
    if (form.get('grant_type') !== 'refresh_token') return { status: 400, body: { error: 'unsupported_grant_type' } };
    if (form.get('client_id') !== oauthClient.clientId || form.get('client_secret') !== oauthClient.clientSecret) {
      return { status: 401, body: { error: 'invalid_client', error_description: 'The OAuth client was not found.' } };
    }
    if (revoked || form.get('refresh_token') !== oauthClient.refreshToken) {
      return { status: 400, body: { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' } };
    }
    exchanges++;
    const access = `ya29.${randomBytes(12).toString('hex')}`;
    tokens.add(access);
    return {
      status: 200,
      body: { access_token: access, expires_in: 3599, token_type: 'Bearer', scope: 'https://www.googleapis.com/auth/adwords' },
    };
  }

  function search(customerId: string, raw: string, record: FakeGoogleRequest): Answer {
    const fault = faults.shift();
    if (fault?.type === 'hang') return 'hang';
    if (fault?.type === 'revoke') revoked = true;
    if (fault?.type === 'expire-token' || fault?.type === 'revoke') tokens.clear();
    const bearer = /^Bearer (.+)$/.exec(record.authorization ?? '')?.[1];
    if (!bearer || !tokens.has(bearer)) {
      return googleError(
        401,
        'UNAUTHENTICATED',
        'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
        [{ errorCode: { authenticationError: 'OAUTH_TOKEN_INVALID' }, message: 'Oauth token is invalid.' }],
      );
    }
    if (record.developerToken !== developerToken) {
      return googleError(403, 'PERMISSION_DENIED', 'The caller does not have permission', [
        { errorCode: { authorizationError: 'DEVELOPER_TOKEN_NOT_APPROVED' }, message: 'The developer token is not approved.' },
      ]);
    }
    if (fault?.type === 'throttle') {
      return googleError(429, 'RESOURCE_EXHAUSTED', 'Too many requests', [
        { errorCode: { quotaError: 'RESOURCE_EXHAUSTED' }, message: 'Too many requests. Retry in 30 seconds.' },
      ]);
    }
    if (fault?.type === 'server') {
      return googleError(500, 'INTERNAL', 'Internal error encountered.', [
        { errorCode: { internalError: 'INTERNAL_ERROR' }, message: 'An internal error has occurred.' },
      ]);
    }
    if (fault?.type === 'malformed') return { status: 200, body: fault.body };
    if (fault?.type === 'non-json') return { status: 200, body: null, raw: '<html><body>Service Unavailable</body></html>' };
    const account = accounts.get(customerId);
    if (!account) {
      return googleError(400, 'INVALID_ARGUMENT', 'Request contains an invalid argument.', [
        { errorCode: { authenticationError: 'CUSTOMER_NOT_FOUND' }, message: 'No customer found for the provided customer id.' },
      ]);
    }
    if (account.denied || (account.manager && record.loginCustomerId !== account.manager)) {
      return googleError(403, 'PERMISSION_DENIED', 'The caller does not have permission', [
        {
          errorCode: { authorizationError: 'USER_PERMISSION_DENIED' },
          message:
            "User doesn't have permission to access customer. Note: If you're accessing a client customer, the manager's customer id must be set in the 'login-customer-id' header.",
        },
      ]);
    }
    let query: unknown;
    try {
      query = (JSON.parse(raw) as { query?: unknown }).query;
    } catch {
      return googleError(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.');
    }
    const match = typeof query === 'string' ? QUERY.exec(query) : null;
    const selected = match?.[1]?.split(',').map((f) => f.trim()) ?? [];
    if (!match || !FIELDS.every((f) => selected.includes(f))) {
      return googleError(400, 'INVALID_ARGUMENT', 'Request contains an invalid argument.', [
        { errorCode: { queryError: 'UNEXPECTED_INPUT' }, message: `The fake expects the spend query, got: ${String(query)}` },
      ]);
    }
    const [since, until] = [match[2] as string, match[3] as string];
    if (since > until) {
      return googleError(400, 'INVALID_ARGUMENT', 'Request contains an invalid argument.', [
        { errorCode: { queryError: 'INVALID_DATE_RANGE' }, message: 'The start date is after the end date.' },
      ]);
    }
    const results = account.rows
      .filter((r) => r.date >= since && r.date <= until)
      .map((r) => ({
        customer: { resourceName: `customers/${customerId}`, currencyCode: account.currency, timeZone: account.timeZone },
        campaign: {
          resourceName: `customers/${customerId}/campaigns/${r.campaignId}`,
          id: r.campaignId,
          ...(r.campaignName !== undefined && { name: r.campaignName }),
        },
        metrics: { costMicros: r.costMicros },
        segments: { date: r.date },
      }));
    const requestId = randomBytes(11).toString('base64url');
    const batches: unknown[] = [];
    for (let i = 0; i < results.length; i += fake.batchSize) {
      batches.push({ results: results.slice(i, i + fake.batchSize), fieldMask: FIELD_MASK, requestId });
    }
    // Google answers an empty stream with one batch of no rows.
    if (batches.length === 0) batches.push({ fieldMask: FIELD_MASK, requestId });
    if (fault?.type === 'stream-error') {
      const error = googleError(500, 'INTERNAL', 'Internal error encountered.', [
        { errorCode: { internalError: 'TRANSIENT_ERROR' }, message: 'The request failed due to a transient error.' },
      ]);
      return { status: 200, body: [batches[0], error.body] };
    }
    return { status: 200, body: batches };
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const path = (req.url ?? '').split('?')[0] as string;
      let answer: Answer;
      const stream = /^\/(v\d+)\/customers\/(\d+)\/googleAds:searchStream$/.exec(path);
      if (req.method === 'POST' && path === '/token') answer = token(raw);
      else if (req.method === 'POST' && stream) {
        const record: FakeGoogleRequest = {
          customerId: stream[2] as string,
          version: stream[1] as string,
          authorization: req.headers.authorization,
          developerToken: req.headers['developer-token'] as string | undefined,
          loginCustomerId: req.headers['login-customer-id'] as string | undefined,
          query: '',
          status: 0,
        };
        try {
          record.query = String((JSON.parse(raw) as { query?: unknown }).query ?? '');
        } catch {}
        requests.push(record);
        answer = search(record.customerId, raw, record);
        if (answer !== 'hang') record.status = answer.status;
      } else answer = { status: 404, body: { error: { code: 404, message: 'Not Found', status: 'NOT_FOUND' } } };
      if (answer === 'hang') return; // closeAllConnections ends it
      res.writeHead(answer.status, { 'content-type': answer.raw ? 'text/html' : 'application/json' });
      res.end(answer.raw ?? JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const fake: FakeGoogleAdsReports = {
    url,
    tokenUrl: `${url}/token`,
    version,
    developerToken,
    oauthClient,
    requests,
    tokenExchanges: () => exchanges,
    batchSize: options.batchSize ?? 10_000,
    setSpend: (customerId, account) => void accounts.set(customerId, account),
    failNext: (...more) => void faults.push(...more),
    reset: () => {
      requests.length = 0;
      faults.length = 0;
      tokens.clear();
      revoked = false;
    },
    env: () => ({ googleAdsApiUrl: url, googleAdsApiVersion: version, googleOauthTokenUrl: `${url}/token` }),
    credentials: (overrides = {}) => ({ kind: 'google_ads', developerToken, ...oauthClient, ...overrides }),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}
