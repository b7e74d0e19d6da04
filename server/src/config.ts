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
  redisUrl: string | undefined;
  metaGraphUrl: string;
  metaGraphVersion: string;
  capiSyncWaitMs: number;
  /** AES-256 key for secrets at rest (SECRETS_KEY); unset → a key generated into DATA_DIR. */
  secretsKey: Buffer | undefined;
  rateLimitRps: number;
  rateLimitBurst: number;
  ipRateLimitRps: number;
  logLevel: string;
  /** RETENTION_DAYS: clicks and conversions older than this are deleted; unset → kept forever. */
  retentionDays: number | undefined;
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
  return {
    port: int(env, 'PORT', 8443, 0, 65535),
    host: env.HOST || '127.0.0.1',
    httpPort,
    tlsCert,
    tlsKey,
    trustProxy: bool(env, 'TRUST_PROXY', false),
    dataDir: path.resolve(env.DATA_DIR || './data'),
    databaseUrl: url(env, 'DATABASE_URL', undefined, ['postgres:', 'postgresql:']),
    redisUrl: url(env, 'REDIS_URL', undefined, ['redis:', 'rediss:']),
    metaGraphUrl: url(env, 'META_GRAPH_URL', 'https://graph.facebook.com', ['http:', 'https:']) as string,
    metaGraphVersion: graphVersion,
    capiSyncWaitMs: int(env, 'CAPI_SYNC_WAIT_MS', 1500, 0, 60_000),
    secretsKey: secretsKey(env),
    rateLimitRps: int(env, 'RATE_LIMIT_RPS', 100, 1, 1_000_000),
    rateLimitBurst: int(env, 'RATE_LIMIT_BURST', 200, 1, 10_000_000),
    ipRateLimitRps: int(env, 'IP_RATE_LIMIT_RPS', 20, 1, 1_000_000),
    logLevel,
    retentionDays,
  };
}
