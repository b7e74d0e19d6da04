// api.md §1 "Rate limits" and §9 shop webhooks (docs/api.md "Shop webhooks in"): a shop's
// signed deliveries are limited per store (SHOP_WEBHOOK_RATE_LIMIT_RPS / _BURST), counted once
// the signature verified, never against the anonymous per-address budget — Shopify sends every
// shop's webhooks from a few shared addresses. What does not verify is limited per client
// address (IP_RATE_LIMIT_RPS, burst twice that) in a bucket of its own, taken before the check,
// so a flood of bad signatures stops costing store lookups and HMACs. The limiter's clock is
// frozen and moved by the tests.
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { MemoryRateLimiter, type RateLimitDecision, type RateLimiter, type RateLimitPolicy } from '../../src/http/rate-limit.js';
import { RedisRateLimiter } from '../../src/http/redis-rate-limit.js';
import { type ApiResponse, createTestContext, expectError, makeStore, type TestContext } from '../helpers.js';
import { shopifyOrderJson, sign, wooOrder } from '../shops/payloads.js';

const REDIS_URL = process.env.REDIS_URL;
const SHOPIFY_SECRET = 'shpss_limits_0123456789abcdef';
const WOO_SECRET = 'woo-limits-secret';
const SHOP_ADDRESS = '23.227.38.65'; // one of Shopify's shared senders, for every store here

/** The real in-memory limiter (refunds included), read at a clock the test controls. */
class FrozenClockLimiter implements RateLimiter {
  now = 1_700_000_000_000;
  private readonly inner = new MemoryRateLimiter();
  consume(bucket: string, policy: RateLimitPolicy): Promise<RateLimitDecision> {
    return this.inner.consume(bucket, policy, this.now);
  }
  refund(bucket: string, policy: RateLimitPolicy, count: number): Promise<void> {
    return this.inner.refund(bucket, policy, count, this.now);
  }
}

let ctx: TestContext | undefined;
afterEach(async () => {
  await ctx?.close();
  ctx = undefined;
});

/**
 * IP_RATE_LIMIT_RPS 1 (burst 2) unless told, the default shop limits, two stores with both secrets;
 * the frozen-clock limiter unless a `shared` one is given.
 */
async function setup(env: Record<string, string> = {}, shared?: RateLimiter) {
  const limiter = new FrozenClockLimiter();
  ctx = await createTestContext({
    env: { IP_RATE_LIMIT_RPS: '1', SHOP_WEBHOOK_RATE_LIMIT_RPS: '', SHOP_WEBHOOK_RATE_LIMIT_BURST: '', ...env },
    limiter: shared ?? limiter,
  });
  const secrets = { shopifyWebhookSecret: SHOPIFY_SECRET, woocommerceWebhookSecret: WOO_SECRET };
  const stores = [await makeStore(ctx.app, ctx.a.live, secrets), await makeStore(ctx.app, ctx.b.live, secrets)] as const;
  return { ctx, stores, limiter };
}

let orders = 0;

/** A Shopify orders/paid (or `topic`) delivery of a new order to `storeId` from `ip`, signed with `secret`. */
async function deliver(
  storeId: string,
  options: { ip?: string; secret?: string | null; orderId?: string; topic?: string; app?: TestContext['app'] } = {},
): Promise<ApiResponse & { orderId: string }> {
  const orderId = options.orderId ?? String(9_000_000_000_000 + ++orders);
  const raw = shopifyOrderJson({ id: orderId });
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-shopify-topic': options.topic ?? 'orders/paid',
    'x-shopify-webhook-id': `limits-${orderId}`,
  };
  if (options.secret !== null) headers['x-shopify-hmac-sha256'] = sign(raw, options.secret ?? SHOPIFY_SECRET);
  const res = await (options.app ?? (ctx as TestContext).app).inject({
    method: 'POST',
    url: `/v1/webhooks/shopify/${storeId}`,
    remoteAddress: options.ip ?? SHOP_ADDRESS,
    headers,
    payload: raw,
  });
  return { status: res.statusCode, body: res.json(), headers: res.headers, raw: res, orderId };
}

function expect429(res: ApiResponse, retryAfter = 1) {
  const error = expectError(res, 429, 'rate_limit_exceeded');
  expect(res.headers['retry-after']).toBe(String(retryAfter));
  expect(error.details).toEqual({ retryAfterSeconds: retryAfter });
}

async function recorded(orderId: string): Promise<boolean> {
  const row = await (ctx as TestContext).database.read
    .selectFrom('conversions')
    .select('id')
    .where('order_id', '=', orderId)
    .executeTakeFirst();
  return row !== undefined;
}

describe('signed deliveries from one shared address', () => {
  it('are not held to the anonymous per-address limit (IP_RATE_LIMIT_RPS 1 → burst 2)', async () => {
    const { stores } = await setup();
    for (let i = 0; i < 12; i++) {
      const res = await deliver(stores[i % 2] as string);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(await recorded(res.orderId)).toBe(true);
    }
  });

  it('neither spend the anonymous budget nor are refused when other keyless traffic spent it', async () => {
    const { ctx, stores } = await setup();
    const stores401 = () => ctx.app.inject({ method: 'GET', url: '/v1/stores', remoteAddress: SHOP_ADDRESS });
    expect((await stores401()).statusCode).toBe(401);
    for (let i = 0; i < 5; i++) expect((await deliver(stores[0])).status).toBe(200);
    expect((await stores401()).statusCode).toBe(401); // the delivery took none of the address's two tokens
    expect((await stores401()).statusCode).toBe(429);
    expect((await deliver(stores[0])).status).toBe(200);
  });

  it('carry the store bucket’s RateLimit headers', async () => {
    const { stores } = await setup({ SHOP_WEBHOOK_RATE_LIMIT_RPS: '1', SHOP_WEBHOOK_RATE_LIMIT_BURST: '3' });
    const res = await deliver(stores[0]);
    expect(res.status).toBe(200);
    expect(res.headers['ratelimit-policy']).toBe('"default";q=3;w=1');
    expect(res.headers.ratelimit).toBe('"default";r=2;t=1');
  });
});

describe('the per-store limit', () => {
  it('refuses a store’s deliveries past its burst with 429 (nothing recorded), leaves other stores alone, refills at the rate', async () => {
    const { stores, limiter } = await setup({ SHOP_WEBHOOK_RATE_LIMIT_RPS: '1', SHOP_WEBHOOK_RATE_LIMIT_BURST: '3' });
    for (let i = 0; i < 3; i++) expect((await deliver(stores[0])).status).toBe(200);
    const refused = await deliver(stores[0]);
    expect429(refused);
    expect(await recorded(refused.orderId)).toBe(false);
    // Shopify redelivers the same webhook later: then it is recorded.
    expect((await deliver(stores[1])).status).toBe(200);
    limiter.now += 1_000;
    expect((await deliver(stores[0], { orderId: refused.orderId })).status).toBe(200);
    expect(await recorded(refused.orderId)).toBe(true);
    expect429(await deliver(stores[0]));
  });

  it('counts WooCommerce deliveries to the same store in the same bucket', async () => {
    const { ctx, stores } = await setup({ SHOP_WEBHOOK_RATE_LIMIT_RPS: '1', SHOP_WEBHOOK_RATE_LIMIT_BURST: '2' });
    const woo = async () => {
      const raw = JSON.stringify(wooOrder({ id: 7_000 + ++orders }));
      const res = await ctx.app.inject({
        method: 'POST',
        url: `/v1/webhooks/woocommerce/${stores[0]}`,
        remoteAddress: '198.51.100.80',
        headers: {
          'content-type': 'application/json',
          'x-wc-webhook-topic': 'order.updated',
          'x-wc-webhook-delivery-id': `wl${orders}`,
          'x-wc-webhook-signature': sign(raw, WOO_SECRET),
        },
        payload: raw,
      });
      return { status: res.statusCode, body: res.json(), headers: res.headers, raw: res };
    };
    expect((await woo()).status).toBe(200);
    expect((await deliver(stores[0])).status).toBe(200);
    expect429(await woo());
  });

  it('defaults to 50/s with a burst of 200', async () => {
    expect(loadConfig({ DATA_DIR: '/tmp/x' })).toMatchObject({ shopWebhookRateLimitRps: 50, shopWebhookRateLimitBurst: 200 });
    const { stores } = await setup();
    let served = 0;
    // A topic Waytrack ignores: verified and counted, then answered without recording anything.
    for (let i = 0; i < 201; i++) if ((await deliver(stores[0], { topic: 'customers/create' })).status === 200) served++;
    expect(served).toBe(200);
  });

  it('refuses settings that are not positive integers, naming the variable', () => {
    expect(() => loadConfig({ DATA_DIR: '/tmp/x', SHOP_WEBHOOK_RATE_LIMIT_RPS: '0' })).toThrow(/SHOP_WEBHOOK_RATE_LIMIT_RPS/);
    expect(() => loadConfig({ DATA_DIR: '/tmp/x', SHOP_WEBHOOK_RATE_LIMIT_BURST: 'lots' })).toThrow(
      /SHOP_WEBHOOK_RATE_LIMIT_BURST/,
    );
  });
});

describe('deliveries that do not verify', () => {
  it('are limited per client address: 401 for the burst, then 429 before any check', async () => {
    const { stores, limiter } = await setup();
    const attacker = '203.0.113.66';
    expectError(await deliver(stores[0], { ip: attacker, secret: 'guess-1' }), 401, 'unauthorized');
    expectError(await deliver(stores[0], { ip: attacker, secret: null }), 401, 'unauthorized');
    expect429(await deliver(stores[0], { ip: attacker, secret: 'guess-3' }));
    expect429(await deliver('st_unknown', { ip: attacker, secret: 'guess-4' }));
    // The spent address cannot be told from a shop until its budget refills, even when it signs …
    const signed = await deliver(stores[0], { ip: attacker });
    expect429(signed);
    expect(await recorded(signed.orderId)).toBe(false);
    // … while the shops' own address, and the store's bucket, are untouched.
    for (let i = 0; i < 3; i++) expect((await deliver(stores[0])).status).toBe(200);
    limiter.now += 1_000;
    expect((await deliver(stores[0], { ip: attacker })).status).toBe(200);
  });

  it('include WooCommerce’s unsigned pings, which spend the address’s budget like any unsigned request', async () => {
    const { ctx, stores } = await setup();
    const ping = () =>
      ctx.app.inject({
        method: 'POST',
        url: `/v1/webhooks/woocommerce/${stores[0]}`,
        remoteAddress: '198.51.100.81',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'webhook_id=12',
      });
    expect((await ping()).statusCode).toBe(200);
    expect((await ping()).statusCode).toBe(200);
    expect((await ping()).statusCode).toBe(429);
  });

  it('an API key is no credential here: without a signature the answer is 401', async () => {
    const { ctx, stores } = await setup();
    const res = await ctx.app.inject({
      method: 'POST',
      url: `/v1/webhooks/shopify/${stores[0]}`,
      remoteAddress: '198.51.100.82',
      headers: { authorization: `Bearer ${ctx.a.live}`, 'content-type': 'application/json', 'x-shopify-topic': 'orders/paid' },
      payload: '{}',
    });
    expectError({ status: res.statusCode, body: res.json(), headers: res.headers, raw: res }, 401, 'unauthorized');
  });
});

describe('MemoryRateLimiter.refund', () => {
  const policy = { rps: 1, burst: 2 };
  it('gives tokens back, never past the burst, and nothing to a bucket it never saw', async () => {
    const limiter = new MemoryRateLimiter();
    const T = 1_000_000;
    await limiter.consume('k', policy, T);
    await limiter.consume('k', policy, T);
    expect((await limiter.consume('k', policy, T)).allowed).toBe(false);
    await limiter.refund('k', policy, 1, T);
    expect(await limiter.consume('k', policy, T)).toMatchObject({ allowed: true, remaining: 0 });
    await limiter.refund('k', policy, 10, T);
    expect((await limiter.consume('k', policy, T)).remaining).toBe(1);
    await limiter.refund('never', policy, 5, T);
    expect((await limiter.consume('never', policy, T)).remaining).toBe(1);
  });
});

describe.skipIf(!REDIS_URL)('with REDIS_URL', () => {
  const prefix = () => `waytrack:test:shop-limits:${Date.now()}:${Math.random().toString(36).slice(2)}:`;

  it('the Redis limiter gives tokens back in the shared bucket, capped at the burst', async () => {
    const limiter = new RedisRateLimiter(REDIS_URL as string, { keyPrefix: prefix() });
    try {
      const policy = { rps: 0.001, burst: 2 }; // no refill worth a token while the test runs
      expect((await limiter.consume('b', policy)).allowed).toBe(true);
      expect((await limiter.consume('b', policy)).allowed).toBe(true);
      expect((await limiter.consume('b', policy)).allowed).toBe(false);
      await limiter.refund('b', policy, 1);
      expect((await limiter.consume('b', policy)).allowed).toBe(true);
      await limiter.refund('b', policy, 5);
      expect((await limiter.consume('b', policy)).remaining).toBe(1);
      await limiter.refund('unknown', policy, 5); // an expired bucket is full: nothing to add
      expect((await limiter.consume('unknown', policy)).remaining).toBe(1);
      expect(limiter.status()).toEqual({ shared: true });
    } finally {
      await limiter.close();
    }
  });

  it('two instances share a store’s bucket, and a shared address’s signed deliveries spend no per-address budget', async () => {
    const keyPrefix = prefix();
    const limiters = [
      new RedisRateLimiter(REDIS_URL as string, { keyPrefix }),
      new RedisRateLimiter(REDIS_URL as string, { keyPrefix }),
    ];
    const { ctx, stores } = await setup();
    // Two instances on the same database and Redis. A refill of one token in 100 s (below what
    // the environment can set), so however slow the machine, no token comes back during the test.
    const config = { ...ctx.config, shopWebhookRateLimitRps: 0.01, shopWebhookRateLimitBurst: 4 };
    const apps = await Promise.all(
      limiters.map((limiter) => buildApp({ config, database: ctx.database, logger: false, limiter })),
    );
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await deliver(stores[0], { app: apps[i % 2] })).status);
      expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
      // The other store, from the same address (whose keyless burst is 2): a bucket of its own.
      for (let i = 0; i < 4; i++) expect((await deliver(stores[1], { app: apps[i % 2] })).status).toBe(200);
      expect(limiters[0]?.status()).toEqual({ shared: true });
    } finally {
      for (const app of apps) await app.close();
      for (const limiter of limiters) await limiter.close();
    }
  });
});
