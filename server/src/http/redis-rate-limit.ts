import { Redis } from 'ioredis';
import { decide, MemoryRateLimiter, type RateLimitDecision, type RateLimiter, type RateLimitPolicy } from './rate-limit.js';

/**
 * The token bucket in Redis, so that every instance sharing it draws from one bucket per key.
 * One script reads, refills, takes and writes atomically; the time is Redis's own, so
 * instances whose clocks disagree still agree on the bucket. The tokens left come back as a
 * string: a Lua number would reach the client truncated to an integer. A bucket expires once it
 * would have refilled completely, when it no longer holds any information.
 */
const TAKE = `
local key = KEYS[1]
local rps = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local want = tonumber(ARGV[3]) or 1
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local state = redis.call('HMGET', key, 'tokens', 'at')
local tokens = tonumber(state[1])
local at = tonumber(state[2])
if tokens == nil or at == nil then tokens = burst; at = now end
local elapsed = math.max(0, now - at)
tokens = math.min(burst, tokens + elapsed / 1000 * rps)
local taken = math.max(0, math.min(want, math.floor(tokens)))
tokens = tokens - taken
redis.call('HSET', key, 'tokens', tostring(tokens), 'at', tostring(math.max(now, at)))
redis.call('PEXPIRE', key, math.ceil(burst / rps * 1000) + 1000)
return { taken, tostring(tokens) }
`;

/** Gives tokens back, refilled to now and capped at the burst; a bucket that expired was full. */
const REFUND = `
local key = KEYS[1]
local rps = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local give = tonumber(ARGV[3])
local state = redis.call('HMGET', key, 'tokens', 'at')
local tokens = tonumber(state[1])
local at = tonumber(state[2])
if tokens == nil or at == nil then return 0 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
tokens = math.min(burst, tokens + math.max(0, now - at) / 1000 * rps + give)
redis.call('HSET', key, 'tokens', tostring(tokens), 'at', tostring(math.max(now, at)))
redis.call('PEXPIRE', key, math.ceil(burst / rps * 1000) + 1000)
return 1
`;

interface TakeCommand {
  /** Takes up to `count` tokens (default 1): how many it took, and the tokens left. */
  waytrackTake(key: string, rps: number, burst: number, count?: number): Promise<[number, string]>;
  waytrackRefund(key: string, rps: number, burst: number, count: number): Promise<number>;
}

/** Pino's and Fastify's loggers fit. */
export interface RateLimitLog {
  warn(message: string): void;
  info(message: string): void;
}

export interface RedisRateLimiterOptions {
  /** One warning when limits become per instance, one notice when they are shared again. */
  log?: RateLimitLog;
  /** Bound on one Redis round trip before the request is decided locally (default 250 ms). */
  timeoutMs?: number;
  /** While limits are per instance, how often Redis is tried again (default 1000 ms). */
  probeIntervalMs?: number;
  /** Default `waytrack:rl:`. */
  keyPrefix?: string;
}

/** Probes that time out on a connection that looks open before it is replaced by a new one. */
const PROBE_TIMEOUTS_BEFORE_RECONNECT = 3;

/**
 * Rate limits shared by every instance through Redis (REDIS_URL). While Redis cannot answer —
 * down, unreachable, slower than `timeoutMs` — requests are decided by this instance's own
 * buckets instead: a limit that is briefly per instance is better than refusing or stalling
 * every request. Requests then never wait for Redis: a background probe (at most one per
 * `probeIntervalMs`, and whenever ioredis has reconnected) finds out when it answers again.
 *
 * Transitions are logged when a request or a readiness check notices them, never from a
 * connection event: at start the log may not exist yet (Fastify's logger is made after the
 * limiter), and the one warning of an outage must not be lost.
 *
 * The `now` given to `consume` only clocks the per-instance fallback; shared buckets run on
 * Redis's clock.
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly redis: Redis & TakeCommand;
  private readonly local = new MemoryRateLimiter();
  private readonly timeoutMs: number;
  private readonly probeIntervalMs: number;
  private readonly prefix: string;
  /** The last script run succeeded, and the connection has not closed since. */
  private healthy = false;
  private lastError: string | undefined;
  /** What was last logged; `starting` until the first connection attempt has an outcome. */
  private reported: 'starting' | 'shared' | 'local' = 'starting';
  private started = false;
  private readonly startup: Promise<void>;
  private endStartup: () => void = () => {};
  private readonly startupTimer: NodeJS.Timeout;
  private probing = false;
  private lastProbeAt = 0;
  private probeTimeouts = 0;
  private closed = false;

  constructor(
    url: string,
    private readonly options: RedisRateLimiterOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? 250;
    this.probeIntervalMs = options.probeIntervalMs ?? 1000;
    this.prefix = options.keyPrefix ?? 'waytrack:rl:';
    this.redis = new Redis(url, {
      // A command while disconnected fails at once instead of waiting in a queue.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: this.timeoutMs * 2,
      // Also bounds the handshake, so a Redis that accepts connections but never answers is
      // abandoned and retried like one that refuses them.
      commandTimeout: this.timeoutMs,
      // Reconnects forever, at most every 2 s: the shared limits come back without a restart.
      retryStrategy: (times) => Math.min(times * 200, 2000),
    }) as Redis & TakeCommand;
    this.redis.defineCommand('waytrackTake', { numberOfKeys: 1, lua: TAKE });
    this.redis.defineCommand('waytrackRefund', { numberOfKeys: 1, lua: REFUND });

    // Requests at start wait for the first connection, once and briefly, rather than being
    // decided locally just because they came before it.
    this.startup = new Promise((resolve) => {
      this.endStartup = resolve;
    });
    this.startupTimer = setTimeout(() => this.startupOver(), this.timeoutMs * 3);
    this.startupTimer.unref();

    this.redis.on('ready', () => this.probe(true));
    this.redis.on('error', (error: Error) => {
      this.lastError = error.message;
      this.startupOver();
    });
    this.redis.on('close', () => {
      if (this.healthy) this.lastError = 'connection to Redis lost';
      this.healthy = false;
    });
  }

  async consume(bucket: string, policy: RateLimitPolicy, now = Date.now()): Promise<RateLimitDecision> {
    return (await this.take(bucket, policy, 1, now)).decision;
  }

  /** Up to `count` tokens in one script run (a batch's events take theirs in one round trip). */
  async take(
    bucket: string,
    policy: RateLimitPolicy,
    count: number,
    now = Date.now(),
  ): Promise<{ taken: number; decision: RateLimitDecision }> {
    if (!this.started) await this.startup;
    if (!this.isShared()) {
      this.probe();
      this.report();
      return this.local.take(bucket, policy, count, now);
    }
    try {
      const [taken, tokens] = await this.redis.waytrackTake(`${this.prefix}${bucket}`, policy.rps, policy.burst, count);
      this.report();
      return { taken, decision: decide(taken === count, Number(tokens), policy) };
    } catch (error) {
      this.failed(error);
      this.report();
      return this.local.take(bucket, policy, count, now);
    }
  }

  /**
   * Gives tokens back where they were most likely taken: in Redis while it answers, else (or if
   * it fails now) in this instance's own buckets.
   */
  async refund(bucket: string, policy: RateLimitPolicy, count: number, now = Date.now()): Promise<void> {
    if (count <= 0) return;
    if (this.isShared()) {
      try {
        await this.redis.waytrackRefund(`${this.prefix}${bucket}`, policy.rps, policy.burst, count);
        return;
      } catch (error) {
        this.failed(error);
        this.report();
      }
    }
    await this.local.refund(bucket, policy, count, now);
  }

  /** Whether limits are shared right now (for /readyz), and why not when they are not. */
  status(): { shared: boolean; error?: string } {
    // Readiness checks come regularly even without traffic: they keep the answer current.
    this.probe();
    this.report();
    if (this.isShared()) return { shared: true };
    return { shared: false, error: this.started ? (this.lastError ?? 'Redis is unreachable') : 'connecting to Redis' };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.startupTimer);
    this.startupOver();
    this.redis.disconnect();
  }

  private isShared(): boolean {
    return this.healthy && this.redis.status === 'ready';
  }

  private startupOver(): void {
    if (this.started) return;
    this.started = true;
    clearTimeout(this.startupTimer);
    this.endStartup();
  }

  private failed(error: unknown): void {
    this.healthy = false;
    this.lastError = error instanceof Error ? error.message : String(error);
  }

  /**
   * Runs the script once on a bucket of its own (bucket names are `ip:…`, `lookup:…`, `key:…`, …), off any
   * request's path. `force` skips the interval: a fresh connection is worth trying at once.
   */
  private probe(force = false): void {
    if (this.closed || this.probing || this.isShared() || this.redis.status !== 'ready') return;
    if (!force && Date.now() - this.lastProbeAt < this.probeIntervalMs) return;
    this.probing = true;
    this.lastProbeAt = Date.now();
    this.redis
      .waytrackTake(`${this.prefix}_probe`, 1000, 1)
      .then(
        () => {
          this.healthy = true;
          this.probeTimeouts = 0;
        },
        (error: unknown) => {
          this.failed(error);
          // A connection that silently stopped carrying anything may never close by itself.
          const timedOut = error instanceof Error && error.message === 'Command timed out';
          this.probeTimeouts = timedOut ? this.probeTimeouts + 1 : 0;
          if (this.probeTimeouts >= PROBE_TIMEOUTS_BEFORE_RECONNECT && !this.closed) {
            this.probeTimeouts = 0;
            this.redis.disconnect(true);
          }
        },
      )
      .finally(() => {
        this.probing = false;
        this.startupOver();
      });
  }

  private report(): void {
    if (this.closed) return;
    const now = this.isShared() ? 'shared' : this.started ? 'local' : 'starting';
    if (now === this.reported) return;
    const before = this.reported;
    this.reported = now;
    if (now === 'local') {
      this.options.log?.warn(`Redis is unreachable (${this.lastError}): rate limits are per instance until it answers again`);
    } else if (now === 'shared' && before === 'local') {
      this.options.log?.info('Redis answers again: rate limits are shared by every instance');
    }
  }
}
