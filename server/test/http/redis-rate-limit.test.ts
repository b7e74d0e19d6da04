import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { RedisRateLimiter } from '../../src/http/redis-rate-limit.js';
import { call, createTestContext } from '../helpers.js';

const REDIS_URL = process.env.REDIS_URL;
if (!REDIS_URL) console.log('shared rate limit tests skipped: set REDIS_URL');

/** A TCP proxy to Redis that the test can cut and restore (an outage without stopping Redis). */
async function proxyTo(target: URL) {
  const sockets = new Set<net.Socket>();
  let open = true;
  const server = net.createServer((client) => {
    if (!open) {
      client.destroy();
      return;
    }
    const upstream = net.connect(Number(target.port || 6379), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {});
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    cut() {
      open = false;
      for (const s of sockets) s.destroy();
    },
    restore() {
      open = true;
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe.skipIf(!REDIS_URL)('rate limits shared through Redis', () => {
  const opened: RedisRateLimiter[] = [];
  const limiter = (url = REDIS_URL as string, log?: { warn(m: string): void; info(m: string): void }) => {
    const made = new RedisRateLimiter(url, { keyPrefix: `waytrack:test:${randomBytes(6).toString('hex')}:`, log });
    opened.push(made);
    return made;
  };
  afterEach(async () => {
    for (const l of opened.splice(0)) await l.close();
  });

  it('two instances draw from one bucket per key', async () => {
    const prefix = `waytrack:test:${randomBytes(6).toString('hex')}:`;
    const a = new RedisRateLimiter(REDIS_URL as string, { keyPrefix: prefix });
    const b = new RedisRateLimiter(REDIS_URL as string, { keyPrefix: prefix });
    opened.push(a, b);
    const policy = { rps: 0.001, burst: 5 }; // no refill to speak of during the test
    const decisions = [];
    for (let i = 0; i < 8; i++) decisions.push(await (i % 2 ? a : b).consume('key:k1', policy));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true, false, false, false]);
    expect(decisions.map((d) => d.remaining).slice(0, 5)).toEqual([4, 3, 2, 1, 0]);
    expect(decisions[7]?.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    // another key has its own bucket
    expect((await a.consume('key:k2', policy)).allowed).toBe(true);
    expect(a.status()).toEqual({ shared: true });
  });

  it('updates the bucket atomically under concurrent requests from both instances', async () => {
    const prefix = `waytrack:test:${randomBytes(6).toString('hex')}:`;
    const a = new RedisRateLimiter(REDIS_URL as string, { keyPrefix: prefix });
    const b = new RedisRateLimiter(REDIS_URL as string, { keyPrefix: prefix });
    opened.push(a, b);
    const policy = { rps: 0.001, burst: 20 };
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).consume('key:busy', policy)));
    expect(results.filter((r) => r.allowed)).toHaveLength(20);
  });

  it('refills over time', async () => {
    const l = limiter();
    const policy = { rps: 20, burst: 2 };
    expect((await l.consume('key:r', policy)).allowed).toBe(true);
    expect((await l.consume('key:r', policy)).allowed).toBe(true);
    expect((await l.consume('key:r', policy)).allowed).toBe(false);
    await new Promise((r) => setTimeout(r, 120)); // 2.4 tokens' worth
    expect((await l.consume('key:r', policy)).allowed).toBe(true);
  });

  it('falls back to per-instance limits while Redis is away (one warning), and shares again when it returns', async () => {
    const proxy = await proxyTo(new URL(REDIS_URL as string));
    const warnings: string[] = [];
    const notices: string[] = [];
    const l = limiter(proxy.url, { warn: (m) => warnings.push(m), info: (m) => notices.push(m) });
    try {
      const policy = { rps: 0.001, burst: 3 };
      expect((await l.consume('key:f', policy)).allowed).toBe(true);
      expect(l.status().shared).toBe(true);
      proxy.cut();
      const started = performance.now();
      const local = [];
      for (let i = 0; i < 20; i++) local.push(await l.consume('key:f', policy));
      expect(performance.now() - started).toBeLessThan(5_000); // never stalls a request for long
      expect(local.slice(0, 3).every((d) => d.allowed)).toBe(true); // this instance's own bucket
      expect(local.slice(3).some((d) => d.allowed)).toBe(false);
      expect(l.status().shared).toBe(false);
      expect(warnings).toHaveLength(1);
      proxy.restore();
      const deadline = Date.now() + 10_000;
      while (!l.status().shared) {
        if (Date.now() > deadline) throw new Error('the limiter did not return to Redis');
        await l.consume('key:probe', policy);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(notices).toHaveLength(1);
      expect(warnings).toHaveLength(1);
      // The shared bucket kept its state: one token was taken before the cut.
      expect((await l.consume('key:f', policy)).remaining).toBe(1);
    } finally {
      await l.close();
      await proxy.close();
    }
  });

  it('/readyz says whether limits are shared', async () => {
    const shared = limiter();
    const withRedis = await createTestContext({ limiter: shared });
    const without = await createTestContext();
    try {
      expect((await call(withRedis.app, 'GET', '/readyz')).body.data).toEqual({
        status: 'ready',
        rateLimits: 'shared',
        redis: 'ok',
      });
      expect((await call(without.app, 'GET', '/readyz')).body.data).toEqual({
        status: 'ready',
        rateLimits: 'instance',
        redis: 'not_configured',
      });
    } finally {
      await withRedis.close();
      await without.close();
    }
  });
});
