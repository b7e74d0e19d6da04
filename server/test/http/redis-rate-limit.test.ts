// api.md §1 "Rate limits", several instances: with REDIS_URL one bucket per key is shared by every
// instance (two limiters on two connections stand for two instances here), and while Redis cannot
// answer each instance limits on its own, without stalling requests, and comes back by itself.
// Outages are made with a TCP proxy in front of Redis, so Redis itself is never stopped. Every
// run writes under a prefix of its own and deletes its keys at the end.
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import Fastify from 'fastify';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { MemoryRateLimiter, type RateLimitDecision } from '../../src/http/rate-limit.js';
import { type RateLimitLog, RedisRateLimiter } from '../../src/http/redis-rate-limit.js';
import { healthRoutes } from '../../src/routes/health.js';

const REDIS_URL = process.env.REDIS_URL;
if (!REDIS_URL) console.log('shared rate limit tests (Redis) skipped: set REDIS_URL');

const RUN = `waytrack:test:${randomBytes(6).toString('hex')}:`;
let prefixes = 0;
const newPrefix = () => `${RUN}${++prefixes}:`;
/** The product's command timeout (RedisRateLimiter's default), which the outage tests measure. */
const OUTAGE_TIMEOUT_MS = 250;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits for `done`, calling `poke` meanwhile; fails after `ms`. */
async function eventually(done: () => boolean, poke: () => unknown, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms`);
    await poke();
    await sleep(50);
  }
}

/**
 * A TCP proxy in front of Redis. `refuse()`: every connection is closed and new ones are refused
 * (Redis down). `blackHole()`: connections stay open but carry nothing, and new ones hang (a
 * network that drops packets); those connections stay dead after `restore()`, as with lost NAT
 * state, so only a client that reconnects by itself gets through again.
 */
async function proxyTo(target: URL) {
  let mode: 'open' | 'refuse' | 'blackHole' = 'open';
  const pairs = new Set<{ sockets: net.Socket[]; live: boolean }>();
  const server = net.createServer((client) => {
    client.on('error', () => {});
    if (mode === 'refuse') {
      client.destroy();
      return;
    }
    const pair = { sockets: [client], live: mode === 'open' };
    pairs.add(pair);
    client.on('close', () => {
      for (const s of pair.sockets) s.destroy();
      pairs.delete(pair);
    });
    if (!pair.live) return;
    const upstream = net.connect(Number(target.port || 6379), target.hostname);
    pair.sockets.push(upstream);
    upstream.on('error', () => {});
    upstream.on('close', () => client.destroy());
    client.on('data', (chunk) => pair.live && upstream.write(chunk));
    upstream.on('data', (chunk) => pair.live && client.write(chunk));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `redis://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    refuse() {
      mode = 'refuse';
      for (const pair of pairs) for (const s of pair.sockets) s.destroy();
    },
    blackHole() {
      mode = 'blackHole';
      for (const pair of pairs) pair.live = false;
    },
    restore() {
      mode = 'open';
    },
    async close() {
      for (const pair of pairs) for (const s of pair.sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A port on which nothing listens (now). */
async function deadPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Collects what a limiter logs. */
function recorder(): RateLimitLog & { warnings: string[]; notices: string[] } {
  const warnings: string[] = [];
  const notices: string[] = [];
  return { warnings, notices, warn: (m) => warnings.push(m), info: (m) => notices.push(m) };
}

/** Times each call. */
async function timed<T>(f: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await f();
  return { value, ms: performance.now() - started };
}

describe.skipIf(!REDIS_URL)('rate limits shared through Redis', () => {
  let redis: Redis;
  const opened: RedisRateLimiter[] = [];
  const proxies: Array<{ close(): Promise<void> }> = [];

  /**
   * A limiter on the test's Redis. Its command timeout is the product's 250 ms in the outage tests
   * (they measure it) and 5 s elsewhere: on a loaded 2-core machine a healthy Redis's answer can
   * take longer than 250 ms, and a request decided by the per-instance fallback then is not what
   * a test of the shared buckets checks (a CI run had 6 of 50 decided that way).
   */
  function limiter(
    options: { url?: string; prefix?: string; log?: RateLimitLog; probeIntervalMs?: number; timeoutMs?: number } = {},
  ) {
    const made = new RedisRateLimiter(options.url ?? (REDIS_URL as string), {
      keyPrefix: options.prefix ?? newPrefix(),
      log: options.log,
      probeIntervalMs: options.probeIntervalMs,
      timeoutMs: options.timeoutMs ?? 5_000,
    });
    opened.push(made);
    return made;
  }

  beforeAll(() => {
    redis = new Redis(REDIS_URL as string);
  });
  afterEach(async () => {
    for (const l of opened.splice(0)) await l.close();
    for (const p of proxies.splice(0)) await p.close();
  });
  afterAll(async () => {
    const keys = [];
    for await (const batch of redis.scanStream({ match: `${RUN}*`, count: 1000 })) keys.push(...(batch as string[]));
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  });

  it('two instances draw from one bucket per key, with the in-memory limiter’s decisions', async () => {
    const prefix = newPrefix();
    const [a, b] = [limiter({ prefix }), limiter({ prefix })];
    // 0.1/s: what refills while the test runs (well under a second) changes no rounded figure.
    const policy = { rps: 0.1, burst: 5 };
    const memory = new MemoryRateLimiter();
    const shared: RateLimitDecision[] = [];
    const expected: RateLimitDecision[] = [];
    for (let i = 0; i < 8; i++) {
      shared.push(await (i % 2 ? a : b).consume('key:k1', policy));
      expected.push(await memory.consume('key:k1', policy, 1_000_000));
    }
    const figures = (d: RateLimitDecision) => [d.allowed, d.remaining, d.resetSeconds, d.retryAfterSeconds];
    expect(shared.map(figures)).toEqual([
      [true, 4, 10, 0],
      [true, 3, 20, 0],
      [true, 2, 30, 0],
      [true, 1, 40, 0],
      [true, 0, 50, 0],
      [false, 0, 50, 10],
      [false, 0, 50, 10],
      [false, 0, 50, 10],
    ]);
    expect(shared.map(figures)).toEqual(expected.map(figures));
    expect(shared[7]?.policy).toEqual(policy);
    // Another key, and the same key under another prefix, are other buckets.
    expect(await a.consume('key:k2', policy)).toMatchObject({ allowed: true, remaining: 4 });
    expect(await limiter().consume('key:k1', policy)).toMatchObject({ allowed: true, remaining: 4 });
    expect(a.status()).toEqual({ shared: true });
    expect(b.status()).toEqual({ shared: true });
  });

  it('takes many tokens in one step (a batch), as the in-memory limiter does', async () => {
    const prefix = newPrefix();
    const [a, b] = [limiter({ prefix }), limiter({ prefix })];
    const policy = { rps: 0.1, burst: 10 };
    const memory = new MemoryRateLimiter();
    const steps = [
      [a, 4],
      [b, 5],
      [a, 3],
      [b, 2],
    ] as const;
    for (const [instance, count] of steps) {
      const shared = await instance.take('key:batch', policy, count);
      const expected = await memory.take('key:batch', policy, count, 1_000_000);
      expect([shared.taken, shared.decision.allowed, shared.decision.remaining]).toEqual([
        expected.taken,
        expected.decision.allowed,
        expected.decision.remaining,
      ]);
    }
    // 4 + 5 of 10, then 1 of 3, then none.
    expect((await a.take('key:batch', policy, 1)).taken).toBe(0);
  });

  it('takes each token once under 50 concurrent requests from two instances (burst 20)', async () => {
    const prefix = newPrefix();
    const [a, b] = [limiter({ prefix }), limiter({ prefix })];
    await Promise.all([a.consume('key:warm', { rps: 1, burst: 1 }), b.consume('key:warm', { rps: 1, burst: 1 })]);
    const policy = { rps: 0.001, burst: 20 };
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).consume('key:busy', policy)));
    const allowed = results.filter((r) => r.allowed);
    expect(allowed).toHaveLength(20);
    // Every token was handed out exactly once: the remainders are 19, 18, …, 0.
    expect(allowed.map((r) => r.remaining).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(a.status().shared && b.status().shared).toBe(true);
  });

  it('refills over time, and a bucket expires once it would be full again', async () => {
    const prefix = newPrefix();
    const l = limiter({ prefix });
    const policy = { rps: 20, burst: 2 };
    expect((await l.consume('key:r', policy)).allowed).toBe(true);
    expect((await l.consume('key:r', policy)).allowed).toBe(true);
    expect((await l.consume('key:r', policy)).allowed).toBe(false);
    await sleep(120); // 2.4 tokens' worth, capped at the burst
    expect(await l.consume('key:r', policy)).toMatchObject({ allowed: true, remaining: 1 });
    // Full after 2 / 20 s = 100 ms; the key lives that long plus a second.
    const ttl = await redis.pttl(`${prefix}key:r`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(1_100);
  });

  it('survives a flushed script cache (as after a Redis restart)', async () => {
    const l = limiter();
    const policy = { rps: 0.001, burst: 3 };
    expect(await l.consume('key:s', policy)).toMatchObject({ allowed: true, remaining: 2 });
    await redis.script('FLUSH');
    expect(await l.consume('key:s', policy)).toMatchObject({ allowed: true, remaining: 1 });
    expect(l.status()).toEqual({ shared: true });
  });

  it('while Redis is down: per-instance limits, one warning, fast answers; shared again when it returns', async () => {
    const proxy = await proxyTo(new URL(REDIS_URL as string));
    proxies.push(proxy);
    const log = recorder();
    const prefix = newPrefix();
    const l = limiter({ url: proxy.url, prefix, log, probeIntervalMs: 100, timeoutMs: OUTAGE_TIMEOUT_MS });
    const policy = { rps: 0.001, burst: 3 };
    expect(await l.consume('key:f', policy)).toMatchObject({ allowed: true, remaining: 2 });
    expect(l.status()).toEqual({ shared: true });

    proxy.refuse();
    const local = [];
    for (let i = 0; i < 30; i++) {
      const { value, ms } = await timed(() => l.consume('key:f', policy));
      expect(ms).toBeLessThan(1_000);
      local.push(value);
      expect(l.status().shared).toBe(false);
    }
    // This instance's own bucket for the key: full, as it has never seen the key.
    expect(local.map((d) => d.allowed)).toEqual([true, true, true, ...Array(27).fill(false)]);
    expect(l.status().error).toBeTruthy();
    expect(log.warnings).toHaveLength(1);
    expect(log.warnings[0]).toMatch(/per instance/);
    expect(log.notices).toEqual([]);

    // Back without any request: readiness checks alone notice it.
    proxy.restore();
    await eventually(
      () => l.status().shared,
      () => undefined,
    );
    expect(log.warnings).toHaveLength(1);
    expect(log.notices).toHaveLength(1);
    // The shared bucket kept its state: one token was taken before the outage.
    expect(await l.consume('key:f', policy)).toMatchObject({ allowed: true, remaining: 1 });
    expect(await redis.exists(`${prefix}key:f`)).toBe(1);
  });

  it('while Redis is black-holed: no request waits longer than one timeout, and it reconnects by itself', async () => {
    const proxy = await proxyTo(new URL(REDIS_URL as string));
    proxies.push(proxy);
    const log = recorder();
    const l = limiter({ url: proxy.url, log, probeIntervalMs: 100, timeoutMs: OUTAGE_TIMEOUT_MS });
    const policy = { rps: 0.001, burst: 1_000 };
    expect((await l.consume('key:h', policy)).allowed).toBe(true);
    expect(l.status().shared).toBe(true);

    proxy.blackHole();
    const waits = [];
    const deadline = Date.now() + 1_500;
    while (Date.now() < deadline) {
      const { value, ms } = await timed(() => l.consume('key:h', policy));
      expect(value.allowed).toBe(true);
      waits.push(ms);
      await sleep(20);
    }
    // The first request waits for the command timeout (250 ms); the rest are decided at once.
    expect(Math.max(...waits)).toBeLessThan(1_000);
    expect(waits.filter((ms) => ms > 100).length).toBeLessThanOrEqual(1);
    expect(l.status()).toMatchObject({ shared: false });
    expect(log.warnings).toHaveLength(1);

    // The old connection stays dead: only a new one gets through.
    proxy.restore();
    await eventually(
      () => l.status().shared,
      () => l.consume('key:h', policy),
    );
    expect(log.warnings).toHaveLength(1);
    expect(log.notices).toHaveLength(1);
  });

  it('a Redis that is down from the start never slows requests down', async () => {
    const log = recorder();
    const l = limiter({ url: `redis://127.0.0.1:${await deadPort()}`, log, timeoutMs: OUTAGE_TIMEOUT_MS });
    const policy = { rps: 0.001, burst: 2 };
    const first = await timed(() => l.consume('ip:192.0.2.1', policy));
    expect(first.ms).toBeLessThan(1_000);
    const rest = [];
    for (let i = 0; i < 20; i++) rest.push(await timed(() => l.consume('ip:192.0.2.1', policy)));
    expect(Math.max(...rest.map((r) => r.ms))).toBeLessThan(50);
    expect([first, ...rest].map((r) => r.value.allowed)).toEqual([true, true, ...Array(19).fill(false)]);
    expect(l.status()).toMatchObject({ shared: false, error: expect.stringMatching(/ECONNREFUSED/) });
    expect(log.warnings).toHaveLength(1);
  });

  describe('/readyz', () => {
    const database = { ping: async () => {} } as unknown as Database;

    async function readyz(limiter?: RedisRateLimiter | MemoryRateLimiter) {
      const app = Fastify();
      await app.register(healthRoutes, { database, registry: new Registry(), limiter });
      try {
        const res = await app.inject({ method: 'GET', url: '/readyz' });
        return { status: res.statusCode, data: res.json().data };
      } finally {
        await app.close();
      }
    }

    it('says whether limits are shared, and stays ready while Redis is away', async () => {
      const shared = limiter();
      await shared.consume('key:ready', { rps: 1, burst: 1 });
      expect(await readyz(shared)).toEqual({ status: 200, data: { status: 'ready', rateLimits: 'shared', redis: 'ok' } });

      const away = limiter({ url: `redis://127.0.0.1:${await deadPort()}`, timeoutMs: OUTAGE_TIMEOUT_MS });
      await away.consume('key:ready', { rps: 1, burst: 1 });
      expect(await readyz(away)).toEqual({
        status: 200,
        data: { status: 'ready', rateLimits: 'instance', redis: 'unreachable' },
      });

      for (const none of [new MemoryRateLimiter(), undefined]) {
        expect(await readyz(none)).toEqual({
          status: 200,
          data: { status: 'ready', rateLimits: 'instance', redis: 'not_configured' },
        });
      }
    });
  });
});
