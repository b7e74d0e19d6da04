// api.md §6 "Publishable keys": a key made for web pages records clicks for its one store, on
// POST /v1/track/click only, from pages on the store's domain (or the key's extra origins, or
// localhost in development), with CORS for those pages, limited per key and per visitor IP.
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AccountError, listKeys, revokeKey } from '../../src/accounts/accounts.js';
import { hashApiKey } from '../../src/accounts/keys.js';
import {
  checkExtraOrigins,
  createPublishableKey,
  createPublishableKeyForStore,
  normalizeOrigin,
  originAllowed,
} from '../../src/accounts/publishable.js';
import { buildApp } from '../../src/app.js';
import { CORS_MAX_AGE_SECONDS } from '../../src/http/cors.js';
import { RedisRateLimiter } from '../../src/http/redis-rate-limit.js';
import {
  type ApiResponse,
  call,
  clickBody,
  createTestContext,
  expectError,
  FrozenLimiter,
  makeStore,
  type TestContext,
} from '../helpers.js';

/** The store every test here makes has this domain (helpers' storeBody). */
const SHOP = 'https://shop.acme.test';

/** What the browser tag sends: no storeId (the key names the store), no ipAddress. */
function tagClick(overrides: Record<string, unknown> = {}) {
  const { storeId: _store, ipAddress: _ip, ...body } = clickBody('unused', overrides);
  return { ...body, ...overrides };
}

function send(
  ctx: TestContext,
  key: string,
  options: { origin?: string; body?: unknown; ip?: string; headers?: Record<string, string> } = {},
): Promise<ApiResponse> {
  return call(ctx.app, 'POST', '/v1/track/click', {
    key,
    body: options.body ?? tagClick(),
    headers: { ...(options.origin !== undefined && { origin: options.origin }), ...options.headers },
  });
}

function expectRefusedOrigin(res: ApiResponse) {
  const error = expectError(res, 403, 'forbidden');
  expect(error.details).toEqual({ reason: 'origin_not_allowed' });
  // The page cannot read the refusal: nothing lets its origin in.
  expect(res.headers['access-control-allow-origin']).toBeUndefined();
}

/** The clicks the account's live secret key lists for a store. */
async function clicksOf(ctx: TestContext, storeId: string, key = ctx.a.live) {
  const res = await call(ctx.app, 'GET', `/v1/clicks?storeId=${storeId}&limit=100`, { key });
  expect(res.status).toBe(200);
  return res.body.data.clicks as Record<string, unknown>[];
}

describe('the origin rule (accounts/publishable.ts)', () => {
  const rule = { domain: 'shop.acme.test', origins: ['https://partner.example', 'https://cdn.example:8443'] };

  it.each([
    ['the store domain over https', 'https://shop.acme.test'],
    ['a subdomain', 'https://www.shop.acme.test'],
    ['a deeper subdomain, any port', 'https://eu.checkout.shop.acme.test:8443'],
    ['an extra origin', 'https://partner.example'],
    ['an extra origin with its port', 'https://cdn.example:8443'],
    ['http://localhost (development)', 'http://localhost'],
    ['http://localhost:3000', 'http://localhost:3000'],
    ['http://127.0.0.1:8080', 'http://127.0.0.1:8080'],
    ['upper case, as a hand-made client may send it', 'HTTPS://SHOP.ACME.TEST'],
  ])('allows %s', (_name, origin) => {
    expect(originAllowed(origin, rule)).toBe(true);
  });

  it.each([
    ['no Origin', undefined],
    ['an empty Origin', ''],
    ['the opaque origin "null"', 'null'],
    ['the store domain over plain http', 'http://shop.acme.test'],
    ['a look-alike sharing a suffix', 'https://evilshop.acme.test'],
    ['the parent domain', 'https://acme.test'],
    ['the store domain inside another', 'https://shop.acme.test.evil.example'],
    ['an extra origin on another port', 'https://partner.example:444'],
    ['an extra origin over http', 'http://partner.example'],
    ['a subdomain of an extra origin', 'https://www.partner.example'],
    ['localhost as a subdomain of another site', 'http://localhost.evil.example'],
    ['another loopback address', 'http://127.0.0.2'],
    ['a path', 'https://shop.acme.test/page'],
    ['credentials', 'https://user:pw@shop.acme.test'],
    ['another scheme', 'ftp://shop.acme.test'],
    ['garbage', 'not an origin'],
  ])('refuses %s', (_name, origin) => {
    expect(originAllowed(origin, rule)).toBe(false);
  });

  it('normalizes origins as browsers send them', () => {
    expect(normalizeOrigin('https://Shop.Example:443/')).toBe('https://shop.example');
    expect(normalizeOrigin('http://localhost:80')).toBe('http://localhost');
    expect(normalizeOrigin('https://shop.example/path')).toBeUndefined();
    expect(normalizeOrigin('https://shop.example?x=1')).toBeUndefined();
  });

  it('checks extra origins: https only (http for localhost and 127.0.0.1), no path, at most 20, duplicates collapse', () => {
    expect(checkExtraOrigins(['https://a.example/', 'HTTPS://A.EXAMPLE', 'http://localhost:5173'])).toEqual([
      'https://a.example',
      'http://localhost:5173',
    ]);
    const fieldOf = (origins: string[]) => {
      try {
        checkExtraOrigins(origins);
      } catch (error) {
        expect(error).toBeInstanceOf(AccountError);
        return (error as AccountError).field;
      }
      throw new Error('accepted');
    };
    expect(fieldOf(['https://a.example', 'http://b.example'])).toBe('origins[1]');
    expect(fieldOf(['https://a.example/checkout'])).toBe('origins[0]');
    expect(fieldOf(['*.example.com'])).toBe('origins[0]');
    expect(fieldOf(Array.from({ length: 21 }, (_, i) => `https://s${i}.example`))).toBe('origins');
  });
});

describe('publishable keys', () => {
  let ctx: TestContext;
  let storeId: string;
  let key: string;
  beforeAll(async () => {
    ctx = await createTestContext();
    storeId = await makeStore(ctx.app, ctx.a.live);
    ({ key } = await createPublishableKey(ctx.database, ctx.a.accountId, {
      storeId,
      mode: 'live',
      origins: ['https://partner.example'],
    }));
  });
  afterAll(async () => ctx.close());

  describe('creation', () => {
    it('makes a wt_pk_ key bound to the store with clicks:write only, stored as its hash', async () => {
      const created = await createPublishableKey(ctx.database, ctx.a.accountId, { storeId, mode: 'test', name: 'Tag' });
      expect(created.key).toMatch(/^wt_pk_test_[0-9A-Za-z]{32,}$/);
      expect(created).toEqual({
        keyId: created.keyId,
        key: created.key,
        mode: 'test',
        scopes: ['clicks:write'],
        storeId,
        origins: [],
      });
      const listed = (await listKeys(ctx.database, ctx.a.accountId)).find((k) => k.keyId === created.keyId);
      expect(listed).toMatchObject({ kind: 'publishable', storeId, origins: [], scopes: ['clicks:write'], name: 'Tag' });
      expect(listed?.hint).toMatch(/^wt_pk_test_…[0-9A-Za-z]{4}$/);
      const rows = JSON.stringify(await ctx.database.read.selectFrom('api_keys').selectAll().execute());
      expect(rows).not.toContain(created.key);
      expect(rows).toContain(hashApiKey(created.key));
    });

    it('lists secret keys as such', async () => {
      const keys = await listKeys(ctx.database, ctx.a.accountId);
      expect(keys.filter((k) => k.kind === 'secret').map((k) => [k.storeId, k.origins])).toEqual([
        [null, []],
        [null, []],
      ]);
    });

    it("refuses another account's store, an unknown store, a bad mode, a bad origin and a bad name", async () => {
      const foreign = await makeStore(ctx.app, ctx.b.live);
      const before = (await listKeys(ctx.database, ctx.a.accountId)).length;
      const refusal = async (input: Parameters<typeof createPublishableKey>[2]) => {
        const error = await createPublishableKey(ctx.database, ctx.a.accountId, input).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(AccountError);
        return (error as AccountError).field;
      };
      expect(await refusal({ storeId: foreign, mode: 'live' })).toBe('storeId');
      expect(await refusal({ storeId: 'st_unknown', mode: 'live' })).toBe('storeId');
      expect(await refusal({ storeId, mode: 'prod' as 'live' })).toBe('mode');
      expect(await refusal({ storeId, mode: 'live', origins: ['http://shop.example'] })).toBe('origins[0]');
      expect(await refusal({ storeId, mode: 'live', name: ' ' })).toBe('name');
      // Nothing was written by the refusals.
      expect(await listKeys(ctx.database, ctx.a.accountId)).toHaveLength(before);
    });

    it('for the CLI: a store alone names its account; with an account, the store must be one of its', async () => {
      const created = await createPublishableKeyForStore(ctx.database, { storeId, mode: 'live' });
      expect((await listKeys(ctx.database, ctx.a.accountId)).map((k) => k.keyId)).toContain(created.keyId);
      await expect(
        createPublishableKeyForStore(ctx.database, { storeId, mode: 'live', accountId: ctx.b.accountId }),
      ).rejects.toThrow(AccountError);
      await expect(createPublishableKeyForStore(ctx.database, { storeId: 'st_nope', mode: 'live' })).rejects.toThrow(/no store/);
    });
  });

  describe('POST /v1/track/click from an allowed page', () => {
    it("records the click for the key's store, with the connection's IP, and lets the page read the answer", async () => {
      const body = tagClick({ fingerprint: 'fp_1234', fbp: 'fb.1.1700000000000.1234567890' });
      const res = await send(ctx, key, { origin: SHOP, body });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ fbclid: body.fbclid, tracked: true, duplicate: false });
      expect(res.headers['access-control-allow-origin']).toBe(SHOP);
      expect(res.headers.vary).toContain('Origin');
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
      expect(res.headers['access-control-expose-headers']).toContain('Request-Id');
      expect(res.headers.ratelimit).toMatch(/^"default";r=\d+;t=\d+$/);
      const click = (await clicksOf(ctx, storeId)).find((c) => c.clickId === res.body.data.clickId);
      expect(click).toMatchObject({
        storeId,
        fbclid: body.fbclid,
        ipAddress: '127.0.0.1',
        fingerprint: 'fp_1234',
        fbp: 'fb.1.1700000000000.1234567890',
        livemode: true,
      });
    });

    it.each([
      ['a subdomain', 'https://www.shop.acme.test'],
      ['an extra origin', 'https://partner.example'],
      ['a development page on localhost', 'http://localhost:5173'],
      ['a development page on 127.0.0.1', 'http://127.0.0.1:8080'],
    ])('accepts %s', async (_name, origin) => {
      const res = await send(ctx, key, { origin });
      expect(res.status).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBe(origin);
    });

    it("accepts a body naming the key's own store; a re-sent fbclid is the same click", async () => {
      const body = { ...tagClick(), storeId };
      const first = await send(ctx, key, { origin: SHOP, body });
      const again = await send(ctx, key, { origin: SHOP, body });
      expect(again.body.data).toMatchObject({ clickId: first.body.data.clickId, duplicate: true });
    });

    it('answers Idempotency-Key like any POST, CORS headers included', async () => {
      const body = tagClick();
      const headers = { 'idempotency-key': `tag-${randomBytes(4).toString('hex')}` };
      const first = await send(ctx, key, { origin: SHOP, body, headers });
      const replay = await send(ctx, key, { origin: SHOP, body, headers });
      expect(replay.body.data).toEqual(first.body.data);
      expect(replay.headers['access-control-allow-origin']).toBe(SHOP);
    });

    it('validation errors reach the page (CORS headers on errors too)', async () => {
      const res = await send(ctx, key, { origin: SHOP, body: tagClick({ fbclid: 'bad fbclid!' }) });
      expectError(res, 400, 'invalid_fbclid');
      expect(res.headers['access-control-allow-origin']).toBe(SHOP);
    });
  });

  describe('refusals', () => {
    it.each([
      ['no Origin (a server, curl)', undefined],
      ['another site', 'https://evil.example'],
      ['the store domain over http', 'http://shop.acme.test'],
      ['a look-alike domain', 'https://shop.acme.test.evil.example'],
      ['an opaque origin', 'null'],
    ])('403 origin_not_allowed from %s, and nothing is recorded', async (_name, origin) => {
      const body = tagClick();
      expectRefusedOrigin(await send(ctx, key, { origin, body }));
      expect((await clicksOf(ctx, storeId)).map((c) => c.fbclid)).not.toContain(body.fbclid);
    });

    it("403 for another store of the account, another account's store or an unknown one: never revealed which", async () => {
      const sibling = await makeStore(ctx.app, ctx.a.live, { domain: 'other.acme.test' });
      const foreign = await makeStore(ctx.app, ctx.b.live);
      for (const other of [sibling, foreign, 'st_01jf3k5x2m7q9r8s4t6v0w1y2z']) {
        const error = expectError(
          await send(ctx, key, { origin: SHOP, body: { ...tagClick(), storeId: other } }),
          403,
          'forbidden',
        );
        expect(error.details).toEqual({ field: 'storeId', reason: 'not_allowed' });
      }
      expect(await clicksOf(ctx, sibling)).toEqual([]);
    });

    it('400 for an ipAddress in the body: the connection tells the IP', async () => {
      const error = expectError(
        await send(ctx, key, { origin: SHOP, body: tagClick({ ipAddress: '203.0.113.9' }) }),
        400,
        'invalid_request',
      );
      expect(error.details).toEqual({ field: 'ipAddress', reason: 'not_allowed' });
    });

    it('404 store_not_found while the store is inactive (the page can read it)', async () => {
      const inactive = await makeStore(ctx.app, ctx.a.live);
      const pk = (await createPublishableKey(ctx.database, ctx.a.accountId, { storeId: inactive, mode: 'live' })).key;
      await call(ctx.app, 'PATCH', `/v1/stores/${inactive}`, { key: ctx.a.live, body: { status: 'inactive' } });
      const res = await send(ctx, pk, { origin: SHOP });
      expectError(res, 404, 'store_not_found');
      expect(res.headers['access-control-allow-origin']).toBe(SHOP);
    });

    it('401 once revoked', async () => {
      const created = await createPublishableKey(ctx.database, ctx.a.accountId, { storeId, mode: 'live' });
      await revokeKey(ctx.database, created.keyId);
      expectError(await send(ctx, created.key, { origin: SHOP }), 401, 'unauthorized');
    });

    it.each([
      ['GET', '/v1/clicks'],
      ['GET', '/v1/stores'],
      ['POST', '/v1/track/conversion'],
    ] as const)('403 publishable_key_not_allowed on %s %s, even from the store page', async (method, url) => {
      const res = await call(ctx.app, method, url, {
        key,
        headers: { origin: SHOP },
        body: method === 'POST' ? { storeId, eventType: 'Purchase', orderId: 'o1', eventValue: 1, currency: 'USD' } : undefined,
      });
      expect(expectError(res, 403, 'forbidden').details).toEqual({ reason: 'publishable_key_not_allowed' });
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    });
  });

  describe('modes', () => {
    it('a test publishable key writes test clicks, which live keys do not see', async () => {
      const pk = (await createPublishableKey(ctx.database, ctx.a.accountId, { storeId, mode: 'test' })).key;
      const body = tagClick();
      expect((await send(ctx, pk, { origin: SHOP, body })).status).toBe(200);
      expect((await clicksOf(ctx, storeId, ctx.a.test)).map((c) => c.fbclid)).toContain(body.fbclid);
      expect((await clicksOf(ctx, storeId, ctx.a.live)).map((c) => c.fbclid)).not.toContain(body.fbclid);
    });
  });

  describe('OPTIONS /v1/track/click (CORS preflight)', () => {
    const preflight = (headers: Record<string, string>) =>
      ctx.app.inject({
        method: 'OPTIONS',
        url: '/v1/track/click',
        headers: { 'access-control-request-method': 'POST', ...headers },
      });

    it("echoes the page's origin with the tag's method, headers and a max-age, in the envelope", async () => {
      const res = await preflight({ origin: SHOP, 'access-control-request-headers': 'authorization,content-type' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBe(SHOP);
      expect(res.headers['access-control-allow-methods']).toBe('POST');
      expect(res.headers['access-control-allow-headers']).toBe('authorization, content-type, idempotency-key');
      expect(res.headers['access-control-max-age']).toBe(String(CORS_MAX_AGE_SECONDS));
      expect(res.headers.vary).toContain('Origin');
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
      const body = res.json();
      expect(body.success).toBe(true);
      expect(res.headers['request-id']).toBe(body.meta.requestId);
    });

    it('answers any origin (it carries no key); the real request enforces the origin', async () => {
      const res = await preflight({ origin: 'https://evil.example' });
      expect(res.headers['access-control-allow-origin']).toBe('https://evil.example');
      expectRefusedOrigin(await send(ctx, key, { origin: 'https://evil.example' }));
    });

    it('lets nothing in without a usable Origin', async () => {
      for (const headers of [{}, { origin: 'null' }] as Record<string, string>[]) {
        const res = await preflight(headers);
        expect(res.statusCode).toBe(200);
        expect(res.headers['access-control-allow-origin']).toBeUndefined();
      }
    });

    it('never answers with * anywhere', async () => {
      const answers = [await preflight({ origin: SHOP }), (await send(ctx, key, { origin: SHOP })).raw];
      for (const res of answers) expect(res.headers['access-control-allow-origin']).not.toBe('*');
    });
  });
});

/** The real in-memory limiter at a frozen clock: nothing refills while a test runs. */
describe('rate limits of publishable keys', () => {
  let ctx: TestContext | undefined;
  afterEach(async () => {
    await ctx?.close();
    ctx = undefined;
  });

  const fromIp = (c: TestContext, pk: string, ip: string, headers: Record<string, string> = {}) =>
    c.app.inject({
      method: 'POST',
      url: '/v1/track/click',
      remoteAddress: ip,
      headers: { authorization: `Bearer ${pk}`, origin: SHOP, 'content-type': 'application/json', ...headers },
      payload: JSON.stringify(tagClick()),
    });

  it('limits each visitor IP (IP_RATE_LIMIT_RPS, burst twice that) without draining the key', async () => {
    ctx = await createTestContext({ env: { IP_RATE_LIMIT_RPS: '2' }, limiter: new FrozenLimiter() });
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const { key } = await createPublishableKey(ctx.database, ctx.a.accountId, { storeId, mode: 'live' });
    for (let i = 0; i < 4; i++) expect((await fromIp(ctx, key, '198.51.100.1')).statusCode).toBe(200);
    const limited = await fromIp(ctx, key, '198.51.100.1');
    expect(limited.statusCode).toBe(429);
    expect(limited.json().error.code).toBe('rate_limit_exceeded');
    expect(limited.headers['retry-after']).toBe('1');
    // Another visitor is not affected.
    expect((await fromIp(ctx, key, '198.51.100.2')).statusCode).toBe(200);
  });

  it('limits the key across visitors (RATE_LIMIT_RPS / RATE_LIMIT_BURST)', async () => {
    ctx = await createTestContext({ env: { RATE_LIMIT_RPS: '1', RATE_LIMIT_BURST: '3' }, limiter: new FrozenLimiter() });
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const { key } = await createPublishableKey(ctx.database, ctx.a.accountId, { storeId, mode: 'live' });
    for (let i = 0; i < 3; i++) expect((await fromIp(ctx, key, `203.0.113.${i + 1}`)).statusCode).toBe(200);
    const limited = await fromIp(ctx, key, '203.0.113.99');
    expect(limited.statusCode).toBe(429);
    expect(limited.headers.ratelimit).toBe('"default";r=0;t=3');
  });

  it("behind a trusted proxy, the visitor is X-Forwarded-For's client", async () => {
    ctx = await createTestContext({ env: { TRUST_PROXY: 'true' } });
    const storeId = await makeStore(ctx.app, ctx.a.live, {});
    const { key } = await createPublishableKey(ctx.database, ctx.a.accountId, { storeId, mode: 'live' });
    const res = await fromIp(ctx, key, '10.0.0.2', { 'x-forwarded-for': '192.0.2.44', 'x-forwarded-proto': 'https' });
    expect(res.statusCode).toBe(200);
    const clicks = await clicksOf(ctx, storeId);
    expect(clicks.map((c) => c.ipAddress)).toEqual(['192.0.2.44']);
  });

  it.skipIf(!process.env.REDIS_URL)('with REDIS_URL, instances share the key and visitor buckets', async () => {
    const c = await createTestContext({ env: { RATE_LIMIT_RPS: '1', RATE_LIMIT_BURST: '2' } });
    ctx = c;
    const storeId = await makeStore(c.app, c.a.live);
    const { key: firstKey } = await createPublishableKey(c.database, c.a.accountId, { storeId, mode: 'live' });
    const keyPrefix = `waytrack:test:${randomBytes(6).toString('hex')}:`;
    // Redis commands may take 5 s rather than 250 ms before an instance decides alone: on a busy
    // machine a slow answer would otherwise make this a test of the fallback (redis-rate-limit.test.ts).
    const limiters = [0, 1].map(() => new RedisRateLimiter(process.env.REDIS_URL as string, { keyPrefix, timeoutMs: 5000 }));
    const apps = await Promise.all(
      limiters.map((limiter) => buildApp({ config: c.config, database: c.database, logger: false, limiter })),
    );
    try {
      // Each instance's first request warms it (its key cache, the store, the limiter's script,
      // a database connection): with another key of the store, so that the buckets under test
      // are untouched and the three requests below come within the second a token takes.
      const { key: warmUp } = await createPublishableKey(c.database, c.a.accountId, { storeId, mode: 'live' });
      for (const app of apps) {
        const res = await app.inject({
          method: 'POST',
          url: '/v1/track/click',
          headers: { authorization: `Bearer ${warmUp}`, origin: SHOP, 'content-type': 'application/json' },
          payload: JSON.stringify(tagClick()),
        });
        expect(res.statusCode).toBe(200);
      }
      // A burst of 2 across both instances: of three requests sent together, two to one instance
      // and one to the other, one is refused (buckets of each instance's own would let all three
      // through). Sent together, they reach the limiter before any of them writes its click: a
      // token coming back in between (1 s) takes a very slow machine. A round that let all three
      // through after a second or more proves nothing, and is tried again with a fresh key.
      let statuses: number[] = [];
      for (let round = 0, key = firstKey; ; round++) {
        const started = Date.now();
        const sent = [0, 1, 0].map((i) =>
          (apps[i] as (typeof apps)[number]).inject({
            method: 'POST',
            url: '/v1/track/click',
            headers: { authorization: `Bearer ${key}`, origin: SHOP, 'content-type': 'application/json' },
            payload: JSON.stringify(tagClick()),
          }),
        );
        statuses = (await Promise.all(sent)).map((res) => res.statusCode).sort();
        if (Date.now() - started < 1000 || statuses.includes(429) || round === 9) break;
        key = (await createPublishableKey(c.database, c.a.accountId, { storeId, mode: 'live' })).key;
      }
      expect(statuses).toEqual([200, 200, 429]);
    } finally {
      for (const app of apps) await app.close();
      for (const limiter of limiters) await limiter.close();
    }
  });
});
