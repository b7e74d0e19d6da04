// api.md §1 "Rate limits", unauthenticated traffic (docs/deploy.md "Slow and abusive clients"):
// requests without a valid key are limited per client — an IPv4 address or an IPv6 /64, from
// the connection, or from X-Forwarded-For only with TRUST_PROXY — with two buckets of
// IP_RATE_LIMIT_RPS (burst twice that): `ip:` for every answer without a valid key (401 → 429),
// and `lookup:` for every database lookup of a key this instance does not know yet, taken
// before the lookup, so a flood of guessed keys stops costing lookups. A valid key this
// instance has seen is never held back by its address's bad-key budget. Also here: the
// per-client connection cap and the TLS handshake timeout, on a listening server.
import net from 'node:net';
import tls from 'node:tls';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createKey, revokeKey } from '../../src/accounts/accounts.js';
import { buildApp } from '../../src/app.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { KeyStore } from '../../src/http/auth.js';
import {
  clientOf,
  MemoryRateLimiter,
  type RateLimitDecision,
  type RateLimiter,
  type RateLimitPolicy,
} from '../../src/http/rate-limit.js';
import { RedisRateLimiter } from '../../src/http/redis-rate-limit.js';
import { loadTls } from '../../src/tls.js';
import { type ApiResponse, createTestContext, expectError, type TestContext } from '../helpers.js';

const REDIS_URL = process.env.REDIS_URL;

/** The real in-memory limiter, read at a clock the test controls. */
class FrozenClockLimiter implements RateLimiter {
  now = 1_700_000_000_000;
  readonly buckets: string[] = [];
  private readonly inner = new MemoryRateLimiter();
  consume(bucket: string, policy: RateLimitPolicy): Promise<RateLimitDecision> {
    this.buckets.push(bucket);
    return this.inner.consume(bucket, policy, this.now);
  }
}

/** Counts the lookups of keys this instance does not know: each is a database query. */
class CountingKeyStore extends KeyStore {
  queries = 0;
  override async lookupHash(hash: string, now?: number) {
    if (!this.knowsHash(hash)) this.queries++;
    return super.lookupHash(hash, now);
  }
}

let ctx: TestContext | undefined;
const apps: FastifyInstance[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
  await ctx?.close();
  ctx = undefined;
});

/** IP_RATE_LIMIT_RPS 1 → burst 2 in each bucket; generous per-key limits. */
async function setup(env: Record<string, string> = {}, limiter: RateLimiter = new FrozenClockLimiter()) {
  ctx = await createTestContext({ env: { IP_RATE_LIMIT_RPS: '1', RATE_LIMIT_RPS: '1000', RATE_LIMIT_BURST: '1000', ...env } });
  const config = loadConfig({
    DATA_DIR: ctx.dataDir,
    LOG_LEVEL: 'silent',
    META_GRAPH_URL: 'http://127.0.0.1:9',
    IP_RATE_LIMIT_RPS: '1',
    RATE_LIMIT_RPS: '1000',
    RATE_LIMIT_BURST: '1000',
    ...env,
  });
  const keys = new CountingKeyStore(ctx.database);
  const app = await buildApp({ config, database: ctx.database, logger: false, limiter, keys });
  await app.ready();
  apps.push(app);
  return { ctx, app, keys, limiter };
}

const badKey = (i: number) => `wt_live_${String(i).padStart(40, 'Q')}`;

/** One request from `ip` (the connection's address). */
async function from(
  app: FastifyInstance,
  ip: string,
  options: { key?: string; url?: string; method?: 'GET' | 'POST'; headers?: Record<string, string> } = {},
): Promise<ApiResponse> {
  const raw = await app.inject({
    method: options.method ?? 'GET',
    url: options.url ?? '/v1/stores',
    remoteAddress: ip,
    headers: { ...options.headers, ...(options.key && { authorization: `Bearer ${options.key}` }) },
  });
  let body: unknown;
  try {
    body = raw.json();
  } catch {
    body = raw.body;
  }
  return { status: raw.statusCode, body, headers: raw.headers, raw };
}

function expect429(res: ApiResponse, retryAfter = 1) {
  const error = expectError(res, 429, 'rate_limit_exceeded');
  expect(res.headers['retry-after']).toBe(String(retryAfter));
  expect(error.details).toEqual({ retryAfterSeconds: retryAfter });
  expect(res.body.meta.requestId).toBe(res.headers['request-id']);
}

describe('bad keys from one address', () => {
  it('are 401 for the burst, then 429 in the envelope, and stop reaching the database', async () => {
    const { app, keys } = await setup();
    expectError(await from(app, '203.0.113.7', { key: badKey(1) }), 401, 'unauthorized');
    expectError(await from(app, '203.0.113.7', { key: badKey(2) }), 401, 'unauthorized');
    expect(keys.queries).toBe(2);
    for (let i = 3; i < 50; i++) expect429(await from(app, '203.0.113.7', { key: badKey(i) }));
    // 47 refused guesses, not one more lookup: a flood costs this instance no database work.
    expect(keys.queries).toBe(2);
  });

  it('leave another address alone', async () => {
    const { app } = await setup();
    for (let i = 0; i < 10; i++) await from(app, '203.0.113.7', { key: badKey(i) });
    expect429(await from(app, '203.0.113.7', { key: badKey(99) }));
    expectError(await from(app, '198.51.100.23', { key: badKey(99) }), 401, 'unauthorized');
    expectError(await from(app, '198.51.100.23'), 401, 'unauthorized');
  });

  it('never hold back a valid key this instance has seen, from the same address', async () => {
    const { ctx, app } = await setup();
    expect((await from(app, '203.0.113.7', { key: ctx.a.live })).status).toBe(200);
    for (let i = 0; i < 20; i++) await from(app, '203.0.113.7', { key: badKey(i) });
    expect429(await from(app, '203.0.113.7', { key: badKey(99) }));
    for (let i = 0; i < 20; i++) expect((await from(app, '203.0.113.7', { key: ctx.a.live })).status).toBe(200);
  });

  it('still let a known key whose cache entry expired through (a refresh, not a guess)', async () => {
    const limiter = new FrozenClockLimiter();
    const { ctx, app } = await setup({}, limiter);
    expect((await from(app, '203.0.113.7', { key: ctx.a.live })).status).toBe(200);
    for (let i = 0; i < 10; i++) await from(app, '203.0.113.7', { key: badKey(i) });
    await new Promise((resolve) => setTimeout(resolve, 2_100)); // past KEY_CACHE_TTL_MS; the limiter's clock stands still
    expect429(await from(app, '203.0.113.7', { key: badKey(99) }));
    expect((await from(app, '203.0.113.7', { key: ctx.a.live })).status).toBe(200);
  });

  it("hold back a valid key's first request to this instance only while the address's lookup budget is spent", async () => {
    const limiter = new FrozenClockLimiter();
    const { ctx, app } = await setup({}, limiter);
    for (let i = 0; i < 10; i++) await from(app, '203.0.113.7', { key: badKey(i) });
    // Unknown to this instance, it cannot be told from a guess without the lookup it would cost.
    expect429(await from(app, '203.0.113.7', { key: ctx.a.test }));
    limiter.now += 1_000; // the bucket refills: one lookup, and then the key is known
    expect((await from(app, '203.0.113.7', { key: ctx.a.test })).status).toBe(200);
    expect429(await from(app, '203.0.113.7', { key: badKey(99) }));
    expect((await from(app, '203.0.113.7', { key: ctx.a.test })).status).toBe(200);
  });

  it('refill at IP_RATE_LIMIT_RPS', async () => {
    const limiter = new FrozenClockLimiter();
    const { app } = await setup({ IP_RATE_LIMIT_RPS: '5' }, limiter);
    let allowed = 0;
    for (let i = 0; i < 30; i++) if ((await from(app, '203.0.113.7', { key: badKey(i) })).status === 401) allowed++;
    expect(allowed).toBe(10); // burst = 2 × 5
    limiter.now += 1_000;
    allowed = 0;
    for (let i = 0; i < 30; i++) if ((await from(app, '203.0.113.7', { key: badKey(i) })).status === 401) allowed++;
    expect(allowed).toBe(5);
  });

  it('count a revoked key as no key: 401, then 429', async () => {
    const { ctx, app, keys } = await setup();
    const { keyId, key: revoked } = await createKey(ctx.database, { accountId: ctx.a.accountId, mode: 'live', scopes: ['*'] });
    expect((await from(app, '203.0.113.7', { key: revoked })).status).toBe(200);
    await revokeKey(ctx.database, keyId);
    keys.forget(revoked);
    expectError(await from(app, '203.0.113.7', { key: revoked }), 401, 'unauthorized');
    expectError(await from(app, '203.0.113.7', { key: revoked }), 401, 'unauthorized');
    expect429(await from(app, '203.0.113.7', { key: revoked }));
  });
});

describe('requests without a well-formed key', () => {
  it('(no Authorization, another scheme, a malformed key) are 401, then 429, and never looked up', async () => {
    const { app, keys } = await setup();
    expectError(await from(app, '203.0.113.7'), 401, 'unauthorized');
    expectError(await from(app, '203.0.113.7', { headers: { authorization: 'Basic dXNlcjpwYXNz' } }), 401, 'unauthorized');
    expect429(await from(app, '203.0.113.7', { key: 'wt_live_short' }));
    expect429(await from(app, '203.0.113.7', { method: 'POST', url: '/v1/track/click' }));
    expect(keys.queries).toBe(0);
  });

  it('do not spend the lookup budget: a valid key new to this instance still gets in', async () => {
    const { ctx, app } = await setup();
    for (let i = 0; i < 10; i++) await from(app, '203.0.113.7');
    expect429(await from(app, '203.0.113.7'));
    expect((await from(app, '203.0.113.7', { key: ctx.a.live })).status).toBe(200);
  });
});

describe('who the client is', () => {
  it('an IPv6 /64 is one client; another /64 is another', async () => {
    const { app } = await setup();
    await from(app, '2001:db8:1:2::1');
    await from(app, '2001:db8:1:2:ffff:1:2:3');
    expect429(await from(app, '2001:db8:1:2::abcd'));
    expectError(await from(app, '2001:db8:1:3::1'), 401, 'unauthorized');
  });

  it('an IPv4-mapped address is its IPv4 address (dual-stack listeners report those)', async () => {
    const { app } = await setup();
    await from(app, '::ffff:203.0.113.7');
    await from(app, '203.0.113.7');
    expect429(await from(app, '::ffff:203.0.113.7'));
    expectError(await from(app, '::ffff:203.0.113.8'), 401, 'unauthorized');
  });

  it('X-Forwarded-For is ignored without TRUST_PROXY: spoofing it buys no fresh budget', async () => {
    const { app } = await setup();
    for (let i = 0; i < 2; i++) await from(app, '203.0.113.7', { headers: { 'x-forwarded-for': `192.0.2.${i}` } });
    expect429(await from(app, '203.0.113.7', { headers: { 'x-forwarded-for': '192.0.2.77' } }));
  });

  it('with TRUST_PROXY, the client is the address the proxy reports', async () => {
    const { app } = await setup({ TRUST_PROXY: 'true' });
    const via = (client: string) => ({ headers: { 'x-forwarded-for': client, 'x-forwarded-proto': 'https' } });
    for (let i = 0; i < 2; i++) expectError(await from(app, '10.0.0.2', via('192.0.2.1')), 401, 'unauthorized');
    expect429(await from(app, '10.0.0.2', via('192.0.2.1')));
    // The same proxy, another visitor: a budget of its own.
    expectError(await from(app, '10.0.0.2', via('192.0.2.2')), 401, 'unauthorized');
  });

  it('clientOf', () => {
    expect(clientOf('203.0.113.7')).toBe('203.0.113.7');
    expect(clientOf('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientOf('::FFFF:203.0.113.7')).toBe('203.0.113.7');
    expect(clientOf('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(clientOf('2001:0db8:0001:0002::9')).toBe('2001:db8:1:2::/64');
    expect(clientOf('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientOf('::1')).toBe('0:0:0:0::/64');
    expect(clientOf('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
  });
});

describe('what is not limited', () => {
  it('/healthz, /readyz and /tag.js answer however spent the address is, and spend nothing', async () => {
    const { app } = await setup();
    for (let i = 0; i < 10; i++) await from(app, '203.0.113.7', { key: badKey(i) });
    expect429(await from(app, '203.0.113.7', { key: badKey(99) }));
    for (let i = 0; i < 20; i++) {
      for (const url of ['/healthz', '/readyz', '/tag.js']) {
        const res = await from(app, '203.0.113.7', { url });
        expect(res.status, url).not.toBe(429);
        expect(res.status, url).toBeLessThan(500);
      }
    }
    // … and they took no token from a fresh address either.
    for (let i = 0; i < 20; i++) await from(app, '198.51.100.23', { url: '/healthz' });
    expectError(await from(app, '198.51.100.23'), 401, 'unauthorized');
  });
});

describe.skipIf(!REDIS_URL)('with REDIS_URL', () => {
  it('two instances share an address’s budget', async () => {
    const prefix = `waytrack:test:unauth:${Date.now()}:${Math.random().toString(36).slice(2)}:`;
    const first = new RedisRateLimiter(REDIS_URL as string, { keyPrefix: prefix });
    const second = new RedisRateLimiter(REDIS_URL as string, { keyPrefix: prefix });
    try {
      const { app } = await setup({}, first);
      const config = loadConfig({ DATA_DIR: ctx?.dataDir, LOG_LEVEL: 'silent', IP_RATE_LIMIT_RPS: '1' });
      const other = await buildApp({
        config,
        database: ctx?.database as TestContext['database'],
        logger: false,
        limiter: second,
      });
      await other.ready();
      apps.push(other);
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await from(i % 2 ? other : app, '203.0.113.9', { key: badKey(i) })).status);
      // Burst 2, refilling 1/s: the two instances together let at most 3 through in the time this takes.
      expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(3);
      expect(statuses.slice(-2)).toEqual([429, 429]);
      expect(first.status()).toEqual({ shared: true });
    } finally {
      await first.close();
      await second.close();
    }
  });
});

describe('configuration', () => {
  const base = { DATA_DIR: '/tmp/x' };
  it('defaults', () => {
    const config = loadConfig(base);
    expect(config).toMatchObject({
      ipRateLimitRps: 20,
      requestTimeoutMs: 30_000,
      headersTimeoutMs: 10_000,
      keepAliveTimeoutMs: 5_000,
      maxConnections: 10_000,
      maxConnectionsPerIp: 256,
    });
    // Behind a proxy every connection is the proxy's: no per-address connection cap by default.
    expect(loadConfig({ ...base, TRUST_PROXY: 'true' }).maxConnectionsPerIp).toBe(0);
    expect(loadConfig({ ...base, TRUST_PROXY: 'true', MAX_CONNECTIONS_PER_IP: '64' }).maxConnectionsPerIp).toBe(64);
  });

  it.each([
    [{ HEADERS_TIMEOUT_MS: '40000' }, /HEADERS_TIMEOUT_MS \(40000\) must not exceed REQUEST_TIMEOUT_MS \(30000\)/],
    [{ REQUEST_TIMEOUT_MS: '10ms' }, /REQUEST_TIMEOUT_MS must be an integer/],
    [{ KEEP_ALIVE_TIMEOUT_MS: '10' }, /KEEP_ALIVE_TIMEOUT_MS must be between 1000 and 600000/],
    [{ MAX_CONNECTIONS: '0' }, /MAX_CONNECTIONS must be between 1 and/],
    [{ MAX_CONNECTIONS_PER_IP: '-1' }, /MAX_CONNECTIONS_PER_IP must be an integer/],
  ])('refuses %j', (env, message) => {
    expect(() => loadConfig({ ...base, ...env })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, ...env })).toThrow(message);
  });
});

describe('connections per client, on a listening HTTPS server', () => {
  /** A raw TCP connection from `localAddress` (any 127.x.y.z is this machine on Linux). */
  function connect(port: number, localAddress: string): Promise<net.Socket> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ port, host: '127.0.0.1', localAddress }, () => resolve(socket));
      socket.once('error', reject);
    });
  }
  const closed = (socket: net.Socket) =>
    new Promise<number>((resolve) => {
      const started = Date.now();
      if (socket.destroyed) resolve(0);
      socket.on('error', () => {});
      socket.once('close', () => resolve(Date.now() - started));
    });

  it('over MAX_CONNECTIONS_PER_IP a connection is closed at once; other clients and freed slots still get in; a stalled TLS handshake ends at HEADERS_TIMEOUT_MS', async () => {
    ctx = await createTestContext();
    const material = await loadTls(ctx.config);
    const app = await buildApp({
      config: ctx.config,
      database: ctx.database,
      logger: false,
      https: { key: material.key, cert: material.cert },
      limits: { maxConnectionsPerIp: 3, headersMs: 1500, requestMs: 3000 },
    });
    apps.push(app);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as net.AddressInfo;
    const sockets: net.Socket[] = [];
    try {
      // Three connections that never start their TLS handshake hold the address's three slots.
      for (let i = 0; i < 3; i++) sockets.push(await connect(port, '127.0.7.1'));
      const holders = sockets.map((socket) => closed(socket));
      const started = Date.now();
      const extra = await connect(port, '127.0.7.1');
      sockets.push(extra);
      expect(await closed(extra)).toBeLessThan(1000);

      // Another client is served meanwhile, over TLS; its closed connections free their slots:
      // after four requests it can still hold three connections.
      const healthz = async () => {
        const raw = await connect(port, '127.0.7.2');
        return new Promise<string>((resolve, reject) => {
          const socket = tls.connect({ socket: raw, ca: material.cert, servername: 'localhost' }, () =>
            socket.end('GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'),
          );
          let data = '';
          socket.on('data', (chunk) => {
            data += chunk;
          });
          socket.on('close', () => resolve(data.split('\r\n')[0] as string));
          socket.on('error', reject);
        });
      };
      for (let i = 0; i < 4; i++) expect(await healthz()).toBe('HTTP/1.1 200 OK');
      await new Promise((resolve) => setTimeout(resolve, 100));
      const others: net.Socket[] = [];
      for (let i = 0; i < 3; i++) others.push(await connect(port, '127.0.7.2'));
      sockets.push(...others);
      const held = await Promise.race([
        Promise.race(others.map((socket) => closed(socket))).then(() => false),
        new Promise((resolve) => setTimeout(() => resolve(true), 300)),
      ]);
      expect(held).toBe(true);

      // The three stalled handshakes are closed by the server at the headers timeout …
      const lifetimes = await Promise.all(holders);
      const elapsed = Date.now() - started;
      expect(elapsed).toBeGreaterThanOrEqual(1300);
      expect(elapsed).toBeLessThan(5000);
      expect(lifetimes.length).toBe(3);
      // … which gives the address its slots back.
      const again = await connect(port, '127.0.7.1');
      sockets.push(again);
      const stillOpen = await Promise.race([closed(again).then(() => false), new Promise((r) => setTimeout(() => r(true), 500))]);
      expect(stillOpen).toBe(true);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  });
});
