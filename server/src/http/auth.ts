import type { FastifyReply, FastifyRequest } from 'fastify';
import { grants, hashApiKey, type KeyKind, keyKindOf, type Scope } from '../accounts/keys.js';
import { type OriginRule, originAllowed } from '../accounts/publishable.js';
import type { Database } from '../db/database.js';
import { findApiKeyByHash } from '../db/repositories/accounts.js';
import { findStore } from '../db/repositories/stores.js';
import type { Tenant } from '../tenancy.js';
import { allowOrigin, varyOnOrigin } from './cors.js';
import { ApiError } from './errors.js';
import { clientOf, type KeyBucket, type RateLimiter, type RateLimitPolicy, rateLimited, rateLimitHeaders } from './rate-limit.js';
import { admitShopDelivery, type DeliveryVerified } from './shop-webhook-limits.js';

export interface AuthContext extends Tenant {
  keyId: string;
  scopes: string[];
  /**
   * Set for a publishable key (api.md §6): the store it is bound to, the page's origin (`null`
   * from a sandboxed frame, on a `publishable: 'sandboxed'` route only) and the key's origin rule.
   */
  publishable?: { storeId: string; origin: string; rule: OriginRule };
}

declare module 'fastify' {
  interface FastifyRequest {
    auth?: AuthContext;
    /** The key's rate-limit bucket, for a route whose request takes more than one token (a batch's events). */
    keyBucket?: KeyBucket;
    /** On a `signed` route: what the handler calls once the delivery's signature verified (shop-webhook-limits.ts). */
    deliveryVerified?: DeliveryVerified;
  }
  interface FastifyContextConfig {
    /** The scope a key needs for this route. */
    scope?: Scope;
    /** Instead of one `scope`: the key needs at least one of these (POST /v1/track/batch). */
    anyScope?: Scope[];
    /** Served without a key (still limited per client IP). */
    public?: boolean;
    /**
     * Authenticated by a signature its handler checks (shop webhooks), not by a key: limited per
     * store once signed, per client IP only when the signature fails (shop-webhook-limits.ts).
     */
    signed?: boolean;
    /**
     * Also accepts publishable keys (from an allowed Origin); every other route refuses them.
     * `sandboxed`: also from the opaque origin `null` of a sandboxed frame (Shopify's custom
     * pixels run in one); the route then checks the page's URL against `auth.publishable.rule`.
     */
    publishable?: boolean | 'sandboxed';
  }
}

interface CachedKey {
  id: string;
  accountId: string;
  livemode: boolean;
  scopes: string[];
  revoked: boolean;
  policy: RateLimitPolicy | undefined;
  kind: KeyKind;
  /** A publishable key's store and the origins its requests are accepted from. */
  publishable?: { storeId: string; rule: OriginRule };
}

/**
 * How long an instance trusts a key it looked up: a revoked key is refused by every instance
 * within this time (the contract allows 5 s). The docs state it as "within 2 s" (README,
 * docs/api.md, docs/dashboard.md, the dashboard's Revoke dialog; server/test/routes/documented.test.ts).
 */
export const KEY_CACHE_TTL_MS = 2_000;

/** API keys looked up by SHA-256 with a short cache; the plaintext key is never stored. */
export class KeyStore {
  private readonly cache = new Map<string, { key: CachedKey | undefined; expires: number }>();

  constructor(private readonly database: Database) {}

  lookup(key: string, now = Date.now()): Promise<CachedKey | undefined> {
    return this.lookupHash(hashApiKey(key), now);
  }

  /** `lookup` by the key's hash (a request hashes its key once). */
  async lookupHash(hash: string, now = Date.now()): Promise<CachedKey | undefined> {
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
      kind: row.kind ?? 'secret',
    };
    if (found?.kind === 'publishable') {
      // Cached with the key: a changed store domain is seen within the same TTL as a revocation.
      const storeId = row?.store_id ?? '';
      const store = storeId ? await findStore(this.database.read, found.accountId, storeId) : undefined;
      const origins = row?.origins ? (JSON.parse(row.origins) as string[]) : [];
      found.publishable = { storeId, rule: { domain: store?.domain ?? '', origins } };
    }
    // Only known keys are cached; unknown ones are throttled per IP instead.
    if (found) {
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(hash, { key: found, expires: now + KEY_CACHE_TTL_MS });
    } else {
      this.cache.delete(hash);
    }
    return found;
  }

  /**
   * Whether this instance has found the key before (its entry may have expired): such a key's
   * lookup is a refresh, not a guess, so it draws on no client's lookup budget.
   */
  knows(key: string): boolean {
    return this.knowsHash(hashApiKey(key));
  }

  knowsHash(hash: string): boolean {
    return this.cache.has(hash);
  }

  /** Drops a key from this instance's cache at once (other instances follow within the TTL). */
  forget(key: string): void {
    this.cache.delete(hashApiKey(key));
  }
}

function bearerKey(header: string | undefined): { key?: string; problem?: string } {
  if (!header) return { problem: 'Missing Authorization header; send Authorization: Bearer <API key>' };
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) return { problem: 'The Authorization header must use the Bearer scheme' };
  const key = match[1] as string;
  if (!keyKindOf(key)) return { problem: 'Malformed API key' };
  return { key };
}

/** A publishable key whose store cannot be read allows no origin. */
const NO_STORE = { storeId: '', rule: { domain: '', origins: [] } };

export interface AuthOptions {
  keys: KeyStore;
  limiter: RateLimiter;
  keyPolicy: RateLimitPolicy;
  ipPolicy: RateLimitPolicy;
  /** Per visitor IP, for publishable keys (besides the key's own limit); default `ipPolicy`. */
  visitorPolicy?: RateLimitPolicy;
  /** Per store, signed shop deliveries (SHOP_WEBHOOK_RATE_LIMIT_RPS / _BURST). */
  shopWebhookPolicy: RateLimitPolicy;
}

/**
 * The part of authentication only publishable keys have, before the key's own rate limit: the
 * CORS headers when the page's origin is allowed (so that the page can read every answer,
 * errors included), and the visitor's IP limit. The visitor's limit is taken first: one
 * abusive address must not drain the bucket every visitor of the store shares.
 */
async function admitVisitor(
  request: FastifyRequest,
  reply: FastifyReply,
  options: AuthOptions,
  rule: OriginRule,
): Promise<string | undefined> {
  const header = request.headers.origin;
  const sandboxed = header === 'null' && request.routeOptions.config.publishable === 'sandboxed';
  const origin = typeof header === 'string' && (sandboxed || originAllowed(header, rule)) ? header : undefined;
  if (origin && request.routeOptions.config.publishable) allowOrigin(reply, origin);
  else varyOnOrigin(reply);
  const visitor = await options.limiter.consume(`visitor:${clientOf(request.ip)}`, options.visitorPolicy ?? options.ipPolicy);
  if (!visitor.allowed) throw rateLimited(visitor);
  return origin;
}

/**
 * One hook for every /v1 route, in the order api.md fixes: authentication → rate limit → scope.
 *
 * Requests without a valid key are throttled per client (clientOf: an IPv4 address or an IPv6
 * /64), so keys cannot be brute-forced, with two buckets of `ipPolicy` (IP_RATE_LIMIT_RPS):
 * - `lookup:` — a key this instance does not know yet costs a database lookup, and takes a
 *   token before it: once a client has spent its budget on guesses, further unknown keys are
 *   429 without touching the database. Keys this instance has found before (valid or revoked,
 *   cached or expired) take nothing, so a client flooding bad keys never locks out a valid key
 *   in use from the same address; only a valid key's very first request to this instance
 *   competes with the flood (and gets 429 with Retry-After if it loses).
 * - `ip:` — every answer without a valid key (401, and the public routes) takes a token: when
 *   empty, 429 instead of 401, as api.md says.
 * Shop webhook routes (`signed`) have limits of their own, per store once the signature verified
 * (shop-webhook-limits.ts), and take nothing from these buckets.
 */
export function authenticate(options: AuthOptions) {
  return async function authenticateRequest(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const config = request.routeOptions.config;
    const client = clientOf(request.ip);
    if (config.signed) {
      // No key to look up (an Authorization header is ignored): the handler checks the signature.
      const limits = {
        limiter: options.limiter,
        clientPolicy: options.ipPolicy,
        storePolicy: options.shopWebhookPolicy,
      };
      request.deliveryVerified = await admitShopDelivery(limits, client, reply);
      return;
    }
    const { key, problem } = bearerKey(request.headers.authorization);
    const hash = key ? hashApiKey(key) : undefined;
    if (hash && !options.keys.knowsHash(hash)) {
      const lookups = await options.limiter.consume(`lookup:${client}`, options.ipPolicy);
      if (!lookups.allowed) throw rateLimited(lookups);
    }
    const record = hash ? await options.keys.lookupHash(hash) : undefined;
    if (config.public || !record || record.revoked) {
      const decision = await options.limiter.consume(`ip:${client}`, options.ipPolicy);
      if (!decision.allowed) throw rateLimited(decision);
      if (config.public) return;
      throw new ApiError('unauthorized', problem ?? (record?.revoked ? 'This API key has been revoked' : 'Invalid API key'));
    }
    const publishable = record.kind === 'publishable' ? (record.publishable ?? NO_STORE) : undefined;
    const origin = publishable ? await admitVisitor(request, reply, options, publishable.rule) : undefined;
    const bucket = { limiter: options.limiter, bucket: `key:${record.id}`, policy: record.policy ?? options.keyPolicy };
    const decision = await bucket.limiter.consume(bucket.bucket, bucket.policy);
    reply.headers(rateLimitHeaders(decision));
    if (!decision.allowed) throw rateLimited(decision);
    request.keyBucket = bucket;
    if (publishable && !config.publishable) {
      throw new ApiError(
        'forbidden',
        'A publishable key is accepted only by POST /v1/track/click, /v1/track/identify and /v1/track/checkout; use a secret key',
        {
          reason: 'publishable_key_not_allowed',
        },
      );
    }
    if (config.scope && !grants(record.scopes, config.scope)) {
      throw new ApiError('forbidden', `This API key lacks the ${config.scope} scope`, { requiredScope: config.scope });
    }
    if (config.anyScope && !config.anyScope.some((scope) => grants(record.scopes, scope))) {
      // requiredScope on every scope 403 (api.md §1), the first that would do; requiredScopes names them all.
      throw new ApiError('forbidden', `This API key needs at least one of the scopes ${config.anyScope.join(', ')}`, {
        requiredScope: config.anyScope[0],
        requiredScopes: config.anyScope,
      });
    }
    const auth: AuthContext = { accountId: record.accountId, livemode: record.livemode, keyId: record.id, scopes: record.scopes };
    if (publishable) {
      if (!origin) {
        throw new ApiError(
          'forbidden',
          "This publishable key is accepted only from pages on its store's domain (or its extra origins), over https",
          { reason: 'origin_not_allowed' },
        );
      }
      auth.publishable = { storeId: publishable.storeId, origin, rule: publishable.rule };
    }
    request.auth = auth;
  };
}

/** The authenticated tenant of a request (routes run only after `authenticate`). */
export function tenantOf(request: FastifyRequest): AuthContext {
  if (!request.auth) throw new Error('route reached without authentication');
  return request.auth;
}
