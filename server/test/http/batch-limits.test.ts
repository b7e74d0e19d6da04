// api.md §1 "Rate limits" and §2 POST /v1/track/batch (docs/api.md "Batches"): each event of a
// batch takes one token of its key's bucket, and the default burst (RATE_LIMIT_BURST, 500) is
// the batch maximum, so a rested key's full batch is served whole with the default limits while
// the refill (RATE_LIMIT_RPS, 100/s) still bounds events per second. The limiter's clock is
// frozen and moved by the test, so the machine's speed does not change what is refilled.
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { MemoryRateLimiter, type RateLimitDecision, type RateLimiter, type RateLimitPolicy } from '../../src/http/rate-limit.js';
import { RedisRateLimiter } from '../../src/http/redis-rate-limit.js';
import { MAX_EVENTS } from '../../src/routes/batch.js';
import { type ApiResponse, call, clickBody, createTestContext, expectError, makeStore, type TestContext } from '../helpers.js';

class FrozenClockLimiter implements RateLimiter {
  now = 1_700_000_000_000;
  private readonly inner = new MemoryRateLimiter();
  consume(bucket: string, policy: RateLimitPolicy): Promise<RateLimitDecision> {
    return this.inner.consume(bucket, policy, this.now);
  }
  take(bucket: string, policy: RateLimitPolicy, count: number) {
    return this.inner.take(bucket, policy, count, this.now);
  }
}

const REDIS_URL = process.env.REDIS_URL;

let ctx: TestContext | undefined;
afterEach(async () => {
  await ctx?.close();
  ctx = undefined;
});

const statuses = (res: ApiResponse) => {
  const counts: Record<number, number> = {};
  for (const { status } of res.body.data.results as Array<{ status: number }>) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
};

describe('POST /v1/track/batch with the default rate limits', () => {
  it('the default burst is the batch maximum', () => {
    expect(MAX_EVENTS).toBe(500);
    expect(loadConfig({ DATA_DIR: '/tmp/x' })).toMatchObject({ rateLimitRps: 100, rateLimitBurst: MAX_EVENTS });
  });

  it('serves a full batch whole, then bounds the key to RATE_LIMIT_RPS events a second', async () => {
    const limiter = new FrozenClockLimiter();
    // '' = unset: the defaults, not the test helper's generous limits.
    ctx = await createTestContext({ env: { RATE_LIMIT_RPS: '', RATE_LIMIT_BURST: '' }, limiter });
    const storeId = await makeStore(ctx.app, ctx.a.live); // another key's bucket: the batch key is rested
    const key = await ctx.keyWithScopes(['clicks:write']);
    const batch = (n: number, tag: string) => ({
      events: Array.from({ length: n }, (_, i) => ({ type: 'click', ...clickBody(storeId, { fbclid: `full_${tag}_${i}` }) })),
    });

    const full = await call(ctx.app, 'POST', '/v1/track/batch', { key, body: batch(MAX_EVENTS, 'a') });
    expect(full.status).toBe(200);
    expect(full.body.data).toMatchObject({ received: 500, failed: 0 });
    expect(statuses(full)).toEqual({ 200: 500 });
    expect(full.headers['ratelimit-policy']).toBe('"default";q=500;w=1');
    expect(full.headers.ratelimit).toBe('"default";r=0;t=5');

    // Right after, with no token left: the whole request is 429.
    const none = await call(ctx.app, 'POST', '/v1/track/batch', { key, body: batch(MAX_EVENTS, 'b') });
    expect(expectError(none, 429, 'rate_limit_exceeded').details).toEqual({ retryAfterSeconds: 1 });
    expect(none.headers['retry-after']).toBe('1');

    // One second refills 100 tokens: 100 events served, the other 400 answered 429 to resend.
    limiter.now += 1_000;
    const partial = await call(ctx.app, 'POST', '/v1/track/batch', { key, body: batch(MAX_EVENTS, 'c') });
    expect(partial.status).toBe(200);
    expect(statuses(partial)).toEqual({ 200: 100, 429: 400 });
    expect(partial.body.data.results[100]).toMatchObject({ status: 429, error: { code: 'rate_limit_exceeded' } });

    const stored = await ctx.database.read
      .selectFrom('clicks')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('store_id', '=', storeId)
      .executeTakeFirstOrThrow();
    expect(Number(stored.n)).toBe(600);
  });
});

describe.skipIf(!REDIS_URL)('with REDIS_URL (the bucket in Redis, on its clock)', () => {
  it('a full batch is served whole with the defaults; the next gets no more than the refill since', async () => {
    const keyPrefix = `waytrack:test:batch:${Date.now()}:${Math.random().toString(36).slice(2)}:`;
    const limiter = new RedisRateLimiter(REDIS_URL as string, { keyPrefix });
    try {
      ctx = await createTestContext({ env: { RATE_LIMIT_RPS: '', RATE_LIMIT_BURST: '' }, limiter });
      const storeId = await makeStore(ctx.app, ctx.a.live);
      const key = await ctx.keyWithScopes(['clicks:write']);
      const batch = (tag: string) => ({
        events: Array.from({ length: MAX_EVENTS }, (_, i) => ({
          type: 'click',
          ...clickBody(storeId, { fbclid: `redis_${tag}_${i}` }),
        })),
      });
      const started = Date.now();
      const full = await call(ctx.app, 'POST', '/v1/track/batch', { key, body: batch('a') });
      expect(statuses(full)).toEqual({ 200: 500 });
      const next = await call(ctx.app, 'POST', '/v1/track/batch', { key, body: batch('b') });
      const seconds = (Date.now() - started) / 1000;
      const served = next.status === 429 ? 0 : (statuses(next)[200] ?? 0);
      // 100 tokens a second since the bucket was emptied (and one more for rounding).
      expect(served).toBeLessThanOrEqual(Math.ceil(100 * seconds) + 1);
      expect(served).toBeLessThan(MAX_EVENTS);
      expect(limiter.status()).toEqual({ shared: true });
    } finally {
      await limiter.close();
    }
  });
});
