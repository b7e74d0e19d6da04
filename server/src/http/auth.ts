import type { FastifyReply, FastifyRequest } from 'fastify';
import { API_KEY_FORMAT, grants, hashApiKey, type Scope } from '../accounts/keys.js';
import type { Database } from '../db/database.js';
import { findApiKeyByHash } from '../db/repositories/accounts.js';
import type { Tenant } from '../tenancy.js';
import { ApiError } from './errors.js';
import { type RateLimitDecision, type RateLimiter, type RateLimitPolicy, rateLimitHeaders } from './rate-limit.js';

export interface AuthContext extends Tenant {
  keyId: string;
  scopes: string[];
}

declare module 'fastify' {
  interface FastifyRequest {
    auth?: AuthContext;
  }
  interface FastifyContextConfig {
    /** The scope a key needs for this route. */
    scope?: Scope;
    /** Served without a key (still limited per client IP). */
    public?: boolean;
  }
}

interface CachedKey {
  id: string;
  accountId: string;
  livemode: boolean;
  scopes: string[];
  revoked: boolean;
  policy: RateLimitPolicy | undefined;
}

/** Revocation must reach every instance within 5 s; cached lookups live for less than that. */
export const KEY_CACHE_TTL_MS = 2_000;

/** API keys looked up by SHA-256 with a short cache; the plaintext key is never stored. */
export class KeyStore {
  private readonly cache = new Map<string, { key: CachedKey | undefined; expires: number }>();

  constructor(private readonly database: Database) {}

  async lookup(key: string, now = Date.now()): Promise<CachedKey | undefined> {
    const hash = hashApiKey(key);
    const hit = this.cache.get(hash);
    if (hit && hit.expires > now) return hit.key;
    const row = await findApiKeyByHash(this.database.read, hash);
    const found: CachedKey | undefined = row && {
      id: row.id,
      accountId: row.account_id,
      livemode: row.mode === 'live',
      scopes: JSON.parse(row.scopes) as string[],
      revoked: row.revoked_at !== null,
      policy:
        row.rate_limit_rps !== null
          ? { rps: row.rate_limit_rps, burst: row.rate_limit_burst ?? row.rate_limit_rps * 2 }
          : undefined,
    };
    // Only known keys are cached; unknown ones are throttled per IP instead.
    if (found) {
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(hash, { key: found, expires: now + KEY_CACHE_TTL_MS });
    }
    return found;
  }

  /** Drops a key from this instance's cache at once (other instances follow within the TTL). */
  forget(key: string): void {
    this.cache.delete(hashApiKey(key));
  }
}

function rateLimited(decision: RateLimitDecision): ApiError {
  return new ApiError(
    'rate_limit_exceeded',
    `Too many requests; retry after ${decision.retryAfterSeconds} s`,
    { retryAfterSeconds: decision.retryAfterSeconds },
    { 'Retry-After': String(decision.retryAfterSeconds), ...rateLimitHeaders(decision) },
  );
}

function bearerKey(header: string | undefined): { key?: string; problem?: string } {
  if (!header) return { problem: 'Missing Authorization header; send Authorization: Bearer <API key>' };
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) return { problem: 'The Authorization header must use the Bearer scheme' };
  const key = match[1] as string;
  if (!API_KEY_FORMAT.test(key)) return { problem: 'Malformed API key' };
  return { key };
}

export interface AuthOptions {
  keys: KeyStore;
  limiter: RateLimiter;
  keyPolicy: RateLimitPolicy;
  ipPolicy: RateLimitPolicy;
}

/**
 * One hook for every /v1 route, in the order api.md fixes: authentication → rate limit → scope.
 * Requests without a valid key are throttled per client IP, so keys cannot be brute-forced.
 */
export function authenticate(options: AuthOptions) {
  return async function authenticateRequest(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const config = request.routeOptions.config;
    const { key, problem } = bearerKey(request.headers.authorization);
    const record = key ? await options.keys.lookup(key) : undefined;
    if (config.public || !record || record.revoked) {
      const decision = await options.limiter.consume(`ip:${request.ip}`, options.ipPolicy);
      if (!decision.allowed) throw rateLimited(decision);
      if (config.public) return;
      throw new ApiError('unauthorized', problem ?? (record?.revoked ? 'This API key has been revoked' : 'Invalid API key'));
    }
    const decision = await options.limiter.consume(`key:${record.id}`, record.policy ?? options.keyPolicy);
    reply.headers(rateLimitHeaders(decision));
    if (!decision.allowed) throw rateLimited(decision);
    if (config.scope && !grants(record.scopes, config.scope)) {
      throw new ApiError('forbidden', `This API key lacks the ${config.scope} scope`, { requiredScope: config.scope });
    }
    request.auth = { accountId: record.accountId, livemode: record.livemode, keyId: record.id, scopes: record.scopes };
  };
}

/** The authenticated tenant of a request (routes run only after `authenticate`). */
export function tenantOf(request: FastifyRequest): AuthContext {
  if (!request.auth) throw new Error('route reached without authentication');
  return request.auth;
}
