/** Token-bucket rate limiting behind an interface, so a shared (Redis) store can replace memory. */

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
    this.sweep(now);
    const bucket = this.buckets.get(key) ?? { tokens: policy.burst, updatedAt: now };
    // A clock that steps back refills nothing (and takes nothing away).
    const elapsed = Math.max(0, now - bucket.updatedAt);
    bucket.tokens = Math.min(policy.burst, bucket.tokens + (elapsed / 1000) * policy.rps);
    bucket.updatedAt = Math.max(now, bucket.updatedAt);
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    this.buckets.set(key, bucket);
    return decide(allowed, bucket.tokens, policy);
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

export function decide(allowed: boolean, tokens: number, policy: RateLimitPolicy): RateLimitDecision {
  return {
    allowed,
    policy,
    remaining: Math.max(0, Math.floor(tokens)),
    resetSeconds: Math.max(0, Math.ceil((policy.burst - tokens) / policy.rps)),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / policy.rps)),
  };
}

/** IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers, current form). */
export function rateLimitHeaders(decision: RateLimitDecision): Record<string, string> {
  return {
    'RateLimit-Policy': `"default";q=${decision.policy.burst};w=1`,
    RateLimit: `"default";r=${decision.remaining};t=${decision.resetSeconds}`,
  };
}
