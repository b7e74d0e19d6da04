import { Redis } from 'ioredis';
import { decide, MemoryRateLimiter, type RateLimitDecision, type RateLimiter, type RateLimitPolicy } from './rate-limit.js';

/**
 * The token bucket in Redis, so that every instance sharing it draws from one bucket per key.
 * One script reads, refills, takes and writes atomically; the time is Redis's own, so
 * instances whose clocks disagree still agree on the bucket. Returns the tokens left (×1000,
 * as an integer: Lua numbers reach Redis as integers) and whether the request was allowed.
 */
const TAKE = `
local key = KEYS[1]
local rps = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local state = redis.call('HMGET', key, 'tokens', 'at')
local tokens = tonumber(state[1])
local at = tonumber(state[2])
if tokens == nil then tokens = burst; at = now end
local elapsed = math.max(0, now - at)
tokens = math.min(burst, tokens + elapsed / 1000 * rps)
local allowed = 0
if tokens >= 1 then tokens = tokens - 1; allowed = 1 end
redis.call('HSET', key, 'tokens', tostring(tokens), 'at', tostring(math.max(now, at)))
redis.call('PEXPIRE', key, math.ceil(burst / rps * 1000) + 1000)
return { allowed, math.floor(tokens * 1000) }
`;

interface TakeCommand {
  waytrackTake(key: string, rps: number, burst: number): Promise<[number, number]>;
}

export interface RedisRateLimiterOptions {
  /** Warnings when Redis is lost (once) and back (once). */
  log?: { warn(message: string): void; info(message: string): void };
  /** Bound on one Redis round trip before the request is decided locally (default 250 ms). */
  timeoutMs?: number;
  keyPrefix?: string;
}

/**
 * Rate limits shared by every instance through Redis (REDIS_URL). When Redis cannot answer —
 * down, unreachable, slower than `timeoutMs` — each request is decided by this instance's own
 * buckets instead (one warning when that starts, one notice when Redis is back): a limit
 * that is briefly per instance is better than refusing or stalling every request. ioredis
 * reconnects by itself, and the next request after it has goes to Redis again.
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly redis: Redis & TakeCommand;
  private readonly local = new MemoryRateLimiter();
  private shared = true;
  private lastError: string | undefined;
  private readonly timeoutMs: number;
  private readonly prefix: string;
  /** Resolves when the first connection is up: requests at start wait for it briefly. */
  private readonly firstConnection: Promise<void>;
  private everConnected = false;

  constructor(
    url: string,
    private readonly options: RedisRateLimiterOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? 250;
    this.prefix = options.keyPrefix ?? 'waytrack:rl:';
    this.redis = new Redis(url, {
      // A command while disconnected fails at once instead of waiting in a queue.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 1000,
      commandTimeout: this.timeoutMs,
      retryStrategy: (times) => Math.min(times * 200, 2000),
      lazyConnect: false,
    }) as Redis & TakeCommand;
    this.redis.defineCommand('waytrackTake', { numberOfKeys: 1, lua: TAKE });
    this.firstConnection = new Promise((resolve) =>
      this.redis.once('ready', () => {
        this.everConnected = true;
        resolve();
      }),
    );
    // Connection errors are reported through requests falling back (below), not as crashes.
    this.redis.on('error', (error: Error) => {
      this.lastError = error.message;
    });
  }

  async consume(bucket: string, policy: RateLimitPolicy, now = Date.now()): Promise<RateLimitDecision> {
    try {
      if (!this.everConnected) {
        // Just started: wait for the first connection a moment rather than fall back at once.
        await Promise.race([this.firstConnection, new Promise((r) => setTimeout(r, this.timeoutMs * 4))]);
      }
      const [allowed, milliTokens] = await this.redis.waytrackTake(`${this.prefix}${bucket}`, policy.rps, policy.burst);
      this.markShared(true);
      return decide(allowed === 1, milliTokens / 1000, policy);
    } catch (error) {
      this.lastError = (error as Error).message;
      this.markShared(false);
      return this.local.consume(bucket, policy, now);
    }
  }

  /** Whether limits are shared right now (for /readyz), and the last Redis error when not. */
  status(): { shared: boolean; error?: string } {
    return this.shared ? { shared: true } : { shared: false, error: this.lastError };
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }

  private markShared(shared: boolean): void {
    if (shared === this.shared) return;
    this.shared = shared;
    if (shared) this.options.log?.info('Redis is reachable again: rate limits are shared across instances');
    else this.options.log?.warn(`Redis is unreachable (${this.lastError}): rate limits are per instance until it returns`);
  }
}
