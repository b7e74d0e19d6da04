/** Token-bucket rate limiting behind an interface, so a shared (Redis) store can replace memory. */
import { ApiError } from './errors.js';

export interface RateLimitPolicy {
  /** Tokens added per second. */
  rps: number;
  /** Bucket size: the largest burst allowed. */
  burst: number;
}

export interface RateLimitDecision {
  allowed: boolean;
  policy: RateLimitPolicy;
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
  /** Seconds until one request is allowed (0 when allowed now). */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  consume(bucket: string, policy: RateLimitPolicy, now?: number): Promise<RateLimitDecision>;
  /**
   * Takes up to `count` tokens at once (a batch's events): how many it took, and the decision
   * for the bucket after (allowed when it took them all). Optional: without it, `takeTokens`
   * consumes one at a time.
   */
  take?(
    bucket: string,
    policy: RateLimitPolicy,
    count: number,
    now?: number,
  ): Promise<{ taken: number; decision: RateLimitDecision }>;
  /**
   * Gives back `count` tokens taken earlier (never past the burst): for a request that took one
   * before it could tell whether it owed it (a shop delivery, before its signature is checked).
   * Optional: a limiter without it keeps what was taken.
   */
  refund?(bucket: string, policy: RateLimitPolicy, count: number, now?: number): Promise<void>;
  /** For a shared limiter: whether its limits are shared right now (readiness details). */
  status?(): { shared: boolean; error?: string };
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

export class MemoryRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private lastSweep = 0;

  async consume(key: string, policy: RateLimitPolicy, now = Date.now()): Promise<RateLimitDecision> {
    return (await this.take(key, policy, 1, now)).decision;
  }

  async take(key: string, policy: RateLimitPolicy, count: number, now = Date.now()) {
    this.sweep(now);
    const bucket = this.buckets.get(key) ?? { tokens: policy.burst, updatedAt: now };
    // A clock that steps back refills nothing (and takes nothing away).
    const elapsed = Math.max(0, now - bucket.updatedAt);
    bucket.tokens = Math.min(policy.burst, bucket.tokens + (elapsed / 1000) * policy.rps);
    bucket.updatedAt = Math.max(now, bucket.updatedAt);
    const taken = Math.max(0, Math.min(count, Math.floor(bucket.tokens)));
    bucket.tokens -= taken;
    this.buckets.set(key, bucket);
    return { taken, decision: decide(taken === count, bucket.tokens, policy) };
  }

  async refund(key: string, policy: RateLimitPolicy, count: number, now = Date.now()): Promise<void> {
    // A bucket already forgotten was full: nothing to give back to.
    const bucket = this.buckets.get(key);
    if (!bucket || count <= 0) return;
    const elapsed = Math.max(0, now - bucket.updatedAt);
    bucket.tokens = Math.min(policy.burst, bucket.tokens + (elapsed / 1000) * policy.rps + count);
    bucket.updatedAt = Math.max(now, bucket.updatedAt);
  }

  /** Forgets buckets that have refilled completely: they hold no information. */
  private sweep(now: number): void {
    if (now - this.lastSweep < 10_000) return;
    this.lastSweep = now;
    for (const [key, bucket] of this.buckets) {
      if (now - bucket.updatedAt > 60_000) this.buckets.delete(key);
    }
  }
}

/** A key's bucket as the auth hook found it (http/auth.ts), for a request that takes more tokens. */
export interface KeyBucket {
  limiter: RateLimiter;
  bucket: string;
  policy: RateLimitPolicy;
}

/**
 * Takes up to `count` more tokens from a key's bucket, in one step when the limiter can (one
 * Redis round trip for a whole batch), else one at a time stopping at the first refusal: the
 * number taken and the last decision (for the RateLimit headers and Retry-After).
 */
export async function takeTokens(
  { limiter, bucket, policy }: KeyBucket,
  count: number,
): Promise<{ taken: number; last?: RateLimitDecision }> {
  if (count <= 0) return { taken: 0 };
  if (limiter.take) {
    const { taken, decision } = await limiter.take(bucket, policy, count);
    return { taken, last: decision };
  }
  let last: RateLimitDecision | undefined;
  let taken = 0;
  while (taken < count) {
    last = await limiter.consume(bucket, policy);
    if (!last.allowed) break;
    taken++;
  }
  return { taken, last };
}

export function decide(allowed: boolean, tokens: number, policy: RateLimitPolicy): RateLimitDecision {
  return {
    allowed,
    policy,
    remaining: Math.max(0, Math.floor(tokens)),
    resetSeconds: Math.max(0, Math.ceil((policy.burst - tokens) / policy.rps)),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / policy.rps)),
  };
}

/** The 429 of a refused decision: Retry-After and details.retryAfterSeconds, with the RateLimit headers. */
export function rateLimited(decision: RateLimitDecision): ApiError {
  return new ApiError(
    'rate_limit_exceeded',
    `Too many requests; retry after ${decision.retryAfterSeconds} s`,
    { retryAfterSeconds: decision.retryAfterSeconds },
    { 'Retry-After': String(decision.retryAfterSeconds), ...rateLimitHeaders(decision) },
  );
}

/** IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers, current form). */
export function rateLimitHeaders(decision: RateLimitDecision): Record<string, string> {
  return {
    'RateLimit-Policy': `"default";q=${decision.policy.burst};w=1`,
    RateLimit: `"default";r=${decision.remaining};t=${decision.resetSeconds}`,
  };
}

/**
 * The client a per-IP limit counts: an IPv4 address (also when written IPv4-mapped, as a
 * dual-stack listener reports it), or the /64 an IPv6 address is in — one host or one home
 * network usually has a whole /64, and limits per single IPv6 address would give it 2^64
 * fresh budgets.
 */
export function clientOf(ip: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  if (mapped) return mapped[1] as string;
  if (!ip.includes(':')) return ip;
  const address = ip.split('%')[0] as string; // a zone (fe80::1%eth0) names an interface, not a host
  const [head = '', tail] = address.split('::');
  const front = head ? head.split(':') : [];
  const back = tail ? tail.split(':') : [];
  const groups =
    tail === undefined ? front : [...front, ...Array<string>(Math.max(0, 8 - front.length - back.length)).fill('0'), ...back];
  const prefix = groups.slice(0, 4).map((group) => (Number.parseInt(group, 16) || 0).toString(16));
  return `${prefix.join(':')}::/64`;
}
