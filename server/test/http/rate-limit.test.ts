// api.md §1 "Rate limits": a token bucket per key, per client IP without a valid key, IETF
// RateLimit headers on every authenticated response, 429 with Retry-After. The limiter's clock is
// frozen and moved by the tests, so nothing here depends on how fast the machine is.
import { afterEach, describe, expect, it } from 'vitest';
import { createKey } from '../../src/accounts/accounts.js';
import { MemoryRateLimiter, type RateLimitDecision, type RateLimiter, type RateLimitPolicy } from '../../src/http/rate-limit.js';
import { type ApiResponse, call, createTestContext, expectError, type TestContext } from '../helpers.js';

/** The real in-memory limiter, read at a clock the test controls. */
class FrozenClockLimiter implements RateLimiter {
  now = 1_700_000_000_000;
  private readonly inner = new MemoryRateLimiter();
  consume(bucket: string, policy: RateLimitPolicy): Promise<RateLimitDecision> {
    return this.inner.consume(bucket, policy, this.now);
  }
}

let ctx: TestContext | undefined;
afterEach(async () => {
  await ctx?.close();
  ctx = undefined;
});

/** RPS 1, burst 3 per key; IP limit 1/s (burst 2) only when asked for. */
async function setup(env: Record<string, string> = {}) {
  const limiter = new FrozenClockLimiter();
  ctx = await createTestContext({ env: { RATE_LIMIT_RPS: '1', RATE_LIMIT_BURST: '3', ...env }, limiter });
  return { ctx, limiter };
}

/** `"default";r=2;t=1` → { r: 2, t: 1 } */
function rateLimit(res: ApiResponse): { r: number; t: number } {
  const match = /^"default";r=(\d+);t=(\d+)$/.exec(String(res.headers.ratelimit));
  if (!match) throw new Error(`bad RateLimit header: ${res.headers.ratelimit}`);
  return { r: Number(match[1]), t: Number(match[2]) };
}

function expect429(res: ApiResponse, retryAfter: number) {
  const error = expectError(res, 429, 'rate_limit_exceeded');
  expect(res.headers['retry-after']).toBe(String(retryAfter));
  expect(error.details).toEqual({ retryAfterSeconds: retryAfter });
}

describe('per-key limit', () => {
  it('allows the burst, then answers 429 with Retry-After and details.retryAfterSeconds', async () => {
    const { ctx } = await setup();
    for (let i = 0; i < 3; i++) expect((await call(ctx.app, 'GET', '/v1/stores', { key: ctx.a.live })).status).toBe(200);
    const limited = await call(ctx.app, 'GET', '/v1/stores', { key: ctx.a.live });
    expect429(limited, 1);
    expect(rateLimit(limited).r).toBe(0);
  });

  it('refills at RATE_LIMIT_RPS', async () => {
    const { ctx, limiter } = await setup();
    for (let i = 0; i < 3; i++) await call(ctx.app, 'GET', '/v1/stores', { key: ctx.a.live });
    limiter.now += 500;
    // Half a token: still refused, and Retry-After is rounded up to a whole second.
    expect429(await call(ctx.app, 'GET', '/v1/stores', { key: ctx.a.live }), 1);
    limiter.now += 500;
    expect((await call(ctx.app, 'GET', '/v1/stores', { key: ctx.a.live })).status).toBe(200);
    expect429(await call(ctx.app, 'GET', '/v1/stores', { key: ctx.a.live }), 1);
    limiter.now += 10_000;
    const refilled = await call(ctx.app, 'GET', '/v1/stores', { key: ctx.a.live });
    expect(refilled.status).toBe(200);
    expect(rateLimit(refilled)).toEqual({ r: 2, t: 1 });
  });

  it('carries RateLimit-Policy and RateLimit on every response, counting down', async () => {
    const { ctx } = await setup();
    const seen: Array<{ status: number; policy: unknown; limit: { r: number; t: number } }> = [];
    for (const res of [
      await call(ctx.app, 'GET', '/v1/stores', { key: ctx.a.live }),
      await call(ctx.app, 'POST', '/v1/stores', { key: ctx.a.live, body: { name: 'x' } }),
      await call(ctx.app, 'GET', '/v1/stores/st_unknown', { key: ctx.a.live }),
    ]) {
      seen.push({ status: res.status, policy: res.headers['ratelimit-policy'], limit: rateLimit(res) });
    }
    expect(seen).toEqual([
      { status: 200, policy: '"default";q=3;w=1', limit: { r: 2, t: 1 } },
      { status: 400, policy: '"default";q=3;w=1', limit: { r: 1, t: 2 } },
      { status: 404, policy: '"default";q=3;w=1', limit: { r: 0, t: 3 } },
    ]);
  });

  it('carries the headers on 201 and 403 responses too', async () => {
    const { ctx } = await setup();
    const created = await call(ctx.app, 'POST', '/v1/stores', {
      key: ctx.a.live,
      body: { name: 'Acme', domain: 'acme.test', platform: 'custom' },
    });
    expect(created.status).toBe(201);
    expect(created.headers['ratelimit-policy']).toBe('"default";q=3;w=1');
    expect(rateLimit(created)).toEqual({ r: 2, t: 1 });
    const readOnly = await ctx.keyWithScopes(['stores:read']);
    const forbidden = await call(ctx.app, 'POST', '/v1/stores', { key: readOnly, body: {} });
    expectError(forbidden, 403, 'forbidden');
    expect(forbidden.headers['ratelimit-policy']).toBe('"default";q=3;w=1');
    expect(rateLimit(forbidden)).toEqual({ r: 2, t: 1 });
  });

  it('the default limiter takes its policy from RATE_LIMIT_RPS and RATE_LIMIT_BURST', async () => {
    ctx = await createTestContext({ env: { RATE_LIMIT_RPS: '1', RATE_LIMIT_BURST: '3' } });
    const res = await call(ctx.app, 'GET', '/v1/stores', { key: ctx.a.live });
    expect(res.status).toBe(200);
    expect(res.headers['ratelimit-policy']).toBe('"default";q=3;w=1');
    expect(rateLimit(res).r).toBe(2);
  });

  it('gives every key its own bucket', async () => {
    const { ctx } = await setup();
    for (let i = 0; i < 3; i++) await call(ctx.app, 'GET', '/v1/stores', { key: ctx.a.live });
    expect429(await call(ctx.app, 'GET', '/v1/stores', { key: ctx.a.live }), 1);
    for (const key of [ctx.a.test, ctx.b.live, await ctx.keyWithScopes(['stores:read'])]) {
      const res = await call(ctx.app, 'GET', '/v1/stores', { key });
      expect(res.status).toBe(200);
      expect(rateLimit(res)).toEqual({ r: 2, t: 1 });
    }
  });

  it('honours a limit configured on the key', async () => {
    const { ctx } = await setup();
    const { key } = await createKey(ctx.database, {
      accountId: ctx.a.accountId,
      mode: 'live',
      rateLimitRps: 1,
      rateLimitBurst: 1,
    });
    const first = await call(ctx.app, 'GET', '/v1/stores', { key });
    expect(first.status).toBe(200);
    expect(first.headers['ratelimit-policy']).toBe('"default";q=1;w=1');
    expect429(await call(ctx.app, 'GET', '/v1/stores', { key }), 1);
  });

  it('is checked before scope and validation (429, not 403 or 400)', async () => {
    const { ctx } = await setup();
    const readOnly = await ctx.keyWithScopes(['stores:read']);
    for (let i = 0; i < 3; i++) await call(ctx.app, 'GET', '/v1/stores', { key: readOnly });
    expect429(await call(ctx.app, 'POST', '/v1/track/click', { key: readOnly, body: { fbclid: 7 } }), 1);
    expect429(await call(ctx.app, 'GET', '/v1/stores?limit=0', { key: readOnly }), 1);
  });
});

describe('per-IP limit without a valid key', () => {
  it('answers 429 instead of 401 once the IP bucket is empty (IP_RATE_LIMIT_RPS 1 → burst 2)', async () => {
    const { ctx } = await setup({ IP_RATE_LIMIT_RPS: '1' });
    expectError(await call(ctx.app, 'GET', '/v1/stores'), 401, 'unauthorized');
    expectError(await call(ctx.app, 'GET', '/v1/stores', { key: `wt_live_${'Z'.repeat(40)}` }), 401, 'unauthorized');
    expect429(await call(ctx.app, 'GET', '/v1/stores', { key: `wt_live_${'Y'.repeat(40)}` }), 1);
    expect429(await call(ctx.app, 'POST', '/v1/track/click', { body: {} }), 1);
  });

  it('refills, and leaves valid keys and other IPs alone', async () => {
    const { ctx, limiter } = await setup({ IP_RATE_LIMIT_RPS: '1' });
    for (let i = 0; i < 2; i++) await call(ctx.app, 'GET', '/v1/stores');
    expect429(await call(ctx.app, 'GET', '/v1/stores'), 1);
    expect((await call(ctx.app, 'GET', '/v1/stores', { key: ctx.a.live })).status).toBe(200);
    const otherIp = await ctx.app.inject({ method: 'GET', url: '/v1/stores', remoteAddress: '198.51.100.23' });
    expect(otherIp.statusCode).toBe(401);
    limiter.now += 1_000;
    expectError(await call(ctx.app, 'GET', '/v1/stores'), 401, 'unauthorized');
  });

  it('also limits the public GET /v1/openapi.json', async () => {
    const { ctx } = await setup({ IP_RATE_LIMIT_RPS: '1' });
    for (let i = 0; i < 2; i++) expect((await call(ctx.app, 'GET', '/v1/openapi.json')).status).toBe(200);
    expect429(await call(ctx.app, 'GET', '/v1/openapi.json'), 1);
  });

  it('never limits /healthz, /readyz or /metrics, and they use up no tokens', async () => {
    const { ctx } = await setup({ IP_RATE_LIMIT_RPS: '1' });
    for (let i = 0; i < 10; i++) {
      for (const url of ['/healthz', '/readyz', '/metrics']) expect((await call(ctx.app, 'GET', url)).status, url).toBe(200);
    }
    expectError(await call(ctx.app, 'GET', '/v1/stores'), 401, 'unauthorized');
    expectError(await call(ctx.app, 'GET', '/v1/stores'), 401, 'unauthorized');
    expect429(await call(ctx.app, 'GET', '/v1/stores'), 1);
    for (const url of ['/healthz', '/readyz', '/metrics']) expect((await call(ctx.app, 'GET', url)).status, url).toBe(200);
  });
});

describe('MemoryRateLimiter (token bucket arithmetic)', () => {
  const policy = { rps: 2, burst: 4 };
  const T = 1_000_000;

  async function drain(limiter: MemoryRateLimiter, bucket: string, p: RateLimitPolicy, now: number) {
    for (let i = 0; i < p.burst; i++) expect((await limiter.consume(bucket, p, now)).allowed).toBe(true);
  }

  it('starts full and takes one token per request', async () => {
    const limiter = new MemoryRateLimiter();
    const decisions = [];
    for (let i = 0; i < 5; i++) decisions.push(await limiter.consume('k', policy, T));
    expect(decisions.map((d) => [d.allowed, d.remaining, d.resetSeconds, d.retryAfterSeconds])).toEqual([
      [true, 3, 1, 0],
      [true, 2, 1, 0],
      [true, 1, 2, 0],
      [true, 0, 2, 0],
      [false, 0, 2, 1],
    ]);
    expect(decisions[4]?.policy).toEqual(policy);
  });

  it('refills rps tokens per second, in fractions', async () => {
    const limiter = new MemoryRateLimiter();
    await drain(limiter, 'k', policy, T);
    // 250 ms at 2/s = half a token: refused, retry in ceil(0.5 / 2) → 1 s.
    expect(await limiter.consume('k', policy, T + 250)).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
    // 500 ms in all = one token.
    expect(await limiter.consume('k', policy, T + 500)).toMatchObject({ allowed: true, remaining: 0 });
    expect((await limiter.consume('k', policy, T + 500)).allowed).toBe(false);
    // 1.5 s later: three tokens.
    const later = await limiter.consume('k', policy, T + 2_000);
    expect(later).toMatchObject({ allowed: true, remaining: 2 });
  });

  it('never holds more than the burst, however long it is idle', async () => {
    const limiter = new MemoryRateLimiter();
    await limiter.consume('k', policy, T);
    expect(await limiter.consume('k', policy, T + 30_000)).toMatchObject({ allowed: true, remaining: 3, resetSeconds: 1 });
    expect(await limiter.consume('k', policy, T + 3_600_000)).toMatchObject({ allowed: true, remaining: 3 });
  });

  it('keeps buckets apart', async () => {
    const limiter = new MemoryRateLimiter();
    await drain(limiter, 'key:a', policy, T);
    expect((await limiter.consume('key:a', policy, T)).allowed).toBe(false);
    expect(await limiter.consume('key:b', policy, T)).toMatchObject({ allowed: true, remaining: 3 });
  });

  it('asks for longer waits at slow refill rates', async () => {
    const limiter = new MemoryRateLimiter();
    const slow = { rps: 0.25, burst: 1 };
    expect((await limiter.consume('k', slow, T)).allowed).toBe(true);
    expect(await limiter.consume('k', slow, T)).toMatchObject({ allowed: false, retryAfterSeconds: 4, resetSeconds: 4 });
    expect(await limiter.consume('k', slow, T + 3_000)).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
    expect((await limiter.consume('k', slow, T + 4_000)).allowed).toBe(true);
  });

  it('never asks to retry after less than 1 s', async () => {
    const limiter = new MemoryRateLimiter();
    const fast = { rps: 1000, burst: 1 };
    await limiter.consume('k', fast, T);
    expect(await limiter.consume('k', fast, T)).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
  });
});
