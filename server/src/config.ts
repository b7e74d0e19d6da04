import { isIP } from 'node:net';
import path from 'node:path';

/** Typed, validated configuration, read once from the environment at start. */
export interface Config {
  port: number;
  host: string;
  httpPort: number | undefined;
  tlsCert: string | undefined;
  tlsKey: string | undefined;
  trustProxy: boolean;
  dataDir: string;
  databaseUrl: string | undefined;
  /** PostgreSQL: run frequent statements as named prepared statements (DATABASE_PREPARED_STATEMENTS, default true). */
  preparedStatements: boolean;
  redisUrl: string | undefined;
  metaGraphUrl: string;
  metaGraphVersion: string;
  /** Destinations other than Meta (api.md §8): where Google's and TikTok's APIs are. */
  googleAdsApiUrl: string;
  googleAdsApiVersion: string;
  googleOauthTokenUrl: string;
  /** GOOGLE_DATA_MANAGER_URL: Google's Data Manager API (api.md §12), the google_ads destination's default path. */
  googleDataManagerUrl: string;
  tiktokApiUrl: string;
  microsoftCapiUrl: string;
  /** REDDIT_API_URL: Reddit's Ads API (api.md §12), the reddit destination's Conversions API. */
  redditApiUrl: string;
  /** LINKEDIN_API_URL: LinkedIn's REST API (api.md §12), the linkedin destination's Conversions API. */
  linkedinApiUrl: string;
  /** PINTEREST_API_URL (api.md §12): Pinterest's API, the pinterest destination's Conversions API. */
  pinterestApiUrl: string;
  /** SNAPCHAT_API_URL (api.md §12): Snap's Conversions API host. */
  snapchatApiUrl: string;
  capiSyncWaitMs: number;
  /** DESTINATION_ALERT_AFTER_S: a job pending longer turns its destination `failing` (api.md §12). */
  destinationAlertAfterS: number;
  /** SPEND_SYNC_INTERVAL_S: how often each spend source re-pulls its platform's spend (api.md §11). */
  spendSyncIntervalS: number;
  /** SPEND_RESTATE_DAYS: the days each periodic spend sync re-pulls (platforms revise spend). */
  spendRestateDays: number;
  /** AES-256 key for secrets at rest (SECRETS_KEY); unset → a key generated into DATA_DIR. */
  secretsKey: Buffer | undefined;
  rateLimitRps: number;
  /** RATE_LIMIT_BURST: default 500, the batch maximum, so a rested key's full batch is served whole (a batch's events take a token each). */
  rateLimitBurst: number;
  ipRateLimitRps: number;
  /** SHOP_WEBHOOK_RATE_LIMIT_RPS / _BURST: signed shop deliveries, per store (http/shop-webhook-limits.ts). */
  shopWebhookRateLimitRps: number;
  shopWebhookRateLimitBurst: number;
  /**
   * Slow and abusive clients (docs/deploy.md): REQUEST_TIMEOUT_MS, HEADERS_TIMEOUT_MS (also
   * bounds the TLS handshake), KEEP_ALIVE_TIMEOUT_MS, MAX_CONNECTIONS, MAX_CONNECTIONS_PER_IP
   * (0 = no cap; default 256, or 0 with TRUST_PROXY, where every connection is the proxy's).
   */
  requestTimeoutMs: number;
  headersTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxConnections: number;
  maxConnectionsPerIp: number;
  logLevel: string;
  /**
   * METRICS_PORT: `/metrics` is served by a plain-HTTP listener of its own on METRICS_HOST
   * (default 127.0.0.1) and no longer on the API port; unset → on the API port, as before.
   */
  metricsPort: number | undefined;
  metricsHost: string;
  /** METRICS_TOKEN: `/metrics` answers only `Authorization: Bearer <token>` (401 otherwise). */
  metricsToken: string | undefined;
  /** RETENTION_DAYS: clicks and conversions older than this are deleted; unset → kept forever. */
  retentionDays: number | undefined;
  /** WEBHOOK_RETRY_SCALE: multiplies every webhook retry delay and the 3-day limit (api.md §9); tests set it small. */
  webhookRetryScale: number;
  /** WEBHOOKS_ALLOW_PRIVATE: webhook endpoints may be on private and loopback addresses (tests, local development). */
  webhooksAllowPrivate: boolean;
  /** WEBHOOK_MAX_ENDPOINTS: webhook endpoints per account and mode (default 20; docs/api.md "Webhooks out"). */
  webhookMaxEndpoints: number;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be an integer, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${raw}`);
  return value;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function url(env: Env, name: string, fallback: string | undefined, protocols: string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL, got "${raw}"`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got "${parsed.protocol}"`);
  }
  return raw.replace(/\/+$/, '');
}

/**
 * SECRETS_KEY: exactly 32 bytes, as 64 hex characters or base64 (standard or URL-safe). The
 * message never repeats the value: it is a secret.
 */
function secretsKey(env: Env): Buffer | undefined {
  const raw = env.SECRETS_KEY?.trim();
  if (!raw) return undefined;
  let key: Buffer | undefined;
  if (/^[0-9a-fA-F]{64}$/.test(raw)) key = Buffer.from(raw, 'hex');
  else if (/^[A-Za-z0-9+/_-]{43}=?$/.test(raw)) key = Buffer.from(raw.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  if (key?.length !== 32) {
    throw new ConfigError('SECRETS_KEY must be 32 bytes written as 64 hex characters or 44 base64 characters');
  }
  return key;
}

/** A bind address: an IP address or a host name (as HOST takes). */
function host(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (
    isIP(raw) === 0 &&
    !/^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,62}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*$/.test(raw)
  ) {
    throw new ConfigError(`${name} must be an IP address or a host name, got "${raw}"`);
  }
  return raw;
}

/**
 * METRICS_PORT, METRICS_HOST, METRICS_TOKEN. The token is compared with what a scraper sends
 * in a header, so it must be header-safe; short tokens are refused (the endpoint is never rate
 * limited). The message never repeats the token.
 */
function metrics(env: Env, apiPorts: { port: number; httpPort: number | undefined }) {
  const metricsPort = env.METRICS_PORT ? int(env, 'METRICS_PORT', 0, 0, 65535) : undefined;
  if (env.METRICS_HOST && metricsPort === undefined) {
    throw new ConfigError('METRICS_HOST is set but METRICS_PORT is not: set METRICS_PORT to serve /metrics on METRICS_HOST');
  }
  if (metricsPort !== undefined && metricsPort !== 0) {
    if (metricsPort === apiPorts.port) throw new ConfigError(`METRICS_PORT must differ from PORT (both ${metricsPort})`);
    if (metricsPort === apiPorts.httpPort) throw new ConfigError(`METRICS_PORT must differ from HTTP_PORT (both ${metricsPort})`);
  }
  const token = env.METRICS_TOKEN || undefined;
  if (token !== undefined && !/^[\x21-\x7e]{16,}$/.test(token)) {
    throw new ConfigError('METRICS_TOKEN must be at least 16 characters, printable ASCII without spaces');
  }
  return { metricsPort, metricsHost: host(env, 'METRICS_HOST', '127.0.0.1'), metricsToken: token };
}

/**
 * The connection limits (app.ts ConnectionLimits). Node refuses a headers timeout longer than
 * the request timeout, so that is a configuration error here rather than a crash at listen.
 */
function connections(env: Env, trustProxy: boolean) {
  const requestTimeoutMs = int(env, 'REQUEST_TIMEOUT_MS', 30_000, 1000, 600_000);
  const headersTimeoutMs = int(env, 'HEADERS_TIMEOUT_MS', 10_000, 1000, 600_000);
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(`HEADERS_TIMEOUT_MS (${headersTimeoutMs}) must not exceed REQUEST_TIMEOUT_MS (${requestTimeoutMs})`);
  }
  return {
    requestTimeoutMs,
    headersTimeoutMs,
    keepAliveTimeoutMs: int(env, 'KEEP_ALIVE_TIMEOUT_MS', 5_000, 1000, 600_000),
    maxConnections: int(env, 'MAX_CONNECTIONS', 10_000, 1, 1_000_000),
    maxConnectionsPerIp: int(env, 'MAX_CONNECTIONS_PER_IP', trustProxy ? 0 : 256, 0, 1_000_000),
  };
}

/** GOOGLE_ADS_API_URL, GOOGLE_ADS_API_VERSION, GOOGLE_OAUTH_TOKEN_URL, TIKTOK_API_URL (api.md §8), GOOGLE_DATA_MANAGER_URL, MICROSOFT_CAPI_URL (§12). */
/** GOOGLE_ADS_API_URL, GOOGLE_ADS_API_VERSION, GOOGLE_OAUTH_TOKEN_URL, TIKTOK_API_URL (api.md §8), GOOGLE_DATA_MANAGER_URL, REDDIT_API_URL, LINKEDIN_API_URL (§12). */
/** GOOGLE_ADS_API_URL, GOOGLE_ADS_API_VERSION, GOOGLE_OAUTH_TOKEN_URL, TIKTOK_API_URL (api.md §8), GOOGLE_DATA_MANAGER_URL, PINTEREST_API_URL, SNAPCHAT_API_URL (§12). */
function destinations(env: Env) {
  const googleAdsApiVersion = env.GOOGLE_ADS_API_VERSION || 'v22';
  if (!/^v\d+$/.test(googleAdsApiVersion)) {
    throw new ConfigError(`GOOGLE_ADS_API_VERSION must look like v22, got "${googleAdsApiVersion}"`);
  }
  const base = (name: string, fallback: string) => (url(env, name, fallback, ['http:', 'https:']) as string).replace(/\/+$/, '');
  return {
    googleAdsApiUrl: base('GOOGLE_ADS_API_URL', 'https://googleads.googleapis.com'),
    googleAdsApiVersion,
    googleOauthTokenUrl: url(env, 'GOOGLE_OAUTH_TOKEN_URL', 'https://oauth2.googleapis.com/token', ['http:', 'https:']) as string,
    googleDataManagerUrl: base('GOOGLE_DATA_MANAGER_URL', 'https://datamanager.googleapis.com'),
    tiktokApiUrl: base('TIKTOK_API_URL', 'https://business-api.tiktok.com'),
    microsoftCapiUrl: base('MICROSOFT_CAPI_URL', 'https://capi.uet.microsoft.com'),
    redditApiUrl: base('REDDIT_API_URL', 'https://ads-api.reddit.com'),
    linkedinApiUrl: base('LINKEDIN_API_URL', 'https://api.linkedin.com'),
    pinterestApiUrl: base('PINTEREST_API_URL', 'https://api.pinterest.com'),
    snapchatApiUrl: base('SNAPCHAT_API_URL', 'https://tr.snapchat.com'),
  };
}

/** WEBHOOK_RETRY_SCALE: a positive decimal number (0.001 makes the 5 s first retry 5 ms). */
function retryScale(env: Env): number {
  const raw = env.WEBHOOK_RETRY_SCALE;
  if (raw === undefined || raw === '') return 1;
  const value = /^\d+(\.\d+)?$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value > 0 && value <= 1000)) {
    throw new ConfigError(`WEBHOOK_RETRY_SCALE must be a number greater than 0 and at most 1000, got "${raw}"`);
  }
  return value;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function loadConfig(env: Env = process.env): Config {
  const tlsCert = env.TLS_CERT || undefined;
  const tlsKey = env.TLS_KEY || undefined;
  if (Boolean(tlsCert) !== Boolean(tlsKey)) throw new ConfigError('TLS_CERT and TLS_KEY must be set together');
  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  const graphVersion = env.META_GRAPH_VERSION || 'v24.0';
  if (!/^v\d+\.\d+$/.test(graphVersion)) throw new ConfigError(`META_GRAPH_VERSION must look like v24.0, got "${graphVersion}"`);
  const httpPort = env.HTTP_PORT ? int(env, 'HTTP_PORT', 0, 0, 65535) : undefined;
  const retentionDays = env.RETENTION_DAYS ? int(env, 'RETENTION_DAYS', 0, 1, 36_500) : undefined;
  const port = int(env, 'PORT', 8443, 0, 65535);
  const trustProxy = bool(env, 'TRUST_PROXY', false);
  return {
    port,
    host: env.HOST || '127.0.0.1',
    httpPort,
    tlsCert,
    tlsKey,
    trustProxy,
    dataDir: path.resolve(env.DATA_DIR || './data'),
    databaseUrl: url(env, 'DATABASE_URL', undefined, ['postgres:', 'postgresql:']),
    preparedStatements: bool(env, 'DATABASE_PREPARED_STATEMENTS', true),
    redisUrl: url(env, 'REDIS_URL', undefined, ['redis:', 'rediss:']),
    metaGraphUrl: url(env, 'META_GRAPH_URL', 'https://graph.facebook.com', ['http:', 'https:']) as string,
    metaGraphVersion: graphVersion,
    ...destinations(env),
    capiSyncWaitMs: int(env, 'CAPI_SYNC_WAIT_MS', 1500, 0, 60_000),
    destinationAlertAfterS: int(env, 'DESTINATION_ALERT_AFTER_S', 900, 1, 30 * 86_400),
    spendSyncIntervalS: int(env, 'SPEND_SYNC_INTERVAL_S', 3600, 1, 7 * 86_400),
    spendRestateDays: int(env, 'SPEND_RESTATE_DAYS', 7, 1, 90),
    secretsKey: secretsKey(env),
    rateLimitRps: int(env, 'RATE_LIMIT_RPS', 100, 1, 1_000_000),
    rateLimitBurst: int(env, 'RATE_LIMIT_BURST', 500, 1, 10_000_000),
    ipRateLimitRps: int(env, 'IP_RATE_LIMIT_RPS', 20, 1, 1_000_000),
    shopWebhookRateLimitRps: int(env, 'SHOP_WEBHOOK_RATE_LIMIT_RPS', 50, 1, 1_000_000),
    shopWebhookRateLimitBurst: int(env, 'SHOP_WEBHOOK_RATE_LIMIT_BURST', 200, 1, 10_000_000),
    ...connections(env, trustProxy),
    logLevel,
    ...metrics(env, { port, httpPort }),
    retentionDays,
    webhookRetryScale: retryScale(env),
    webhooksAllowPrivate: bool(env, 'WEBHOOKS_ALLOW_PRIVATE', false),
    webhookMaxEndpoints: int(env, 'WEBHOOK_MAX_ENDPOINTS', 20, 1, 10_000),
  };
}
