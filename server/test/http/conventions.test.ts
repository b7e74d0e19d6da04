// api.md §1 "Conventions shared by every endpoint": envelope, Request-Id, transport headers,
// routing, order of checks, body parsing and validation errors, 5xx hygiene, unauthenticated
// operational endpoints.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import {
  type ApiResponse,
  call,
  clickBody,
  conversionBody,
  createTestContext,
  expectError,
  makeStore,
  storeBody,
  type TestContext,
} from '../helpers.js';

const ISO_MS_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const REQUEST_ID = /^req_[0-9a-z]+$/;

/** Envelope, Request-Id and Strict-Transport-Security, whatever the status. */
function expectEnvelope(res: ApiResponse, success: boolean) {
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.body.success).toBe(success);
  expect(res.body.meta.timestamp).toMatch(ISO_MS_UTC);
  expect(Math.abs(Date.parse(res.body.meta.timestamp) - Date.now())).toBeLessThan(60_000);
  expect(res.body.meta.requestId).toMatch(REQUEST_ID);
  expect(res.headers['request-id']).toBe(res.body.meta.requestId);
  expectHsts(res);
  if (success) expect(res.body).not.toHaveProperty('error');
  else expect(res.body).not.toHaveProperty('data');
}

function expectHsts(res: ApiResponse) {
  const hsts = String(res.headers['strict-transport-security']);
  const maxAge = Number(/max-age=(\d+)/.exec(hsts)?.[1]);
  expect(maxAge).toBeGreaterThanOrEqual(31_536_000);
}

/** Strings that must never reach a client in a 5xx body. */
function expectNoInternals(res: ApiResponse) {
  const text = res.raw.body;
  for (const leak of [
    /select\s/i,
    /insert\s/i,
    /sqlite/i,
    /kysely/i,
    /\bat\s+\S+\s+\(/,
    /\.ts:\d+/,
    /\.js:\d+/,
    /stack/i,
    /destroyed/i,
  ]) {
    expect(text).not.toMatch(leak);
  }
  expect(Object.keys(res.body.error).sort()).toEqual(['code', 'message']);
}

describe('conventions', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(async () => ctx.close());

  describe('envelope and headers', () => {
    it('on a 200', async () => {
      const res = await call(ctx.app, 'GET', '/v1/stores', { key: ctx.a.live });
      expect(res.status).toBe(200);
      expectEnvelope(res, true);
      expect(res.body.data).toEqual({ stores: [], hasMore: false, nextCursor: null });
    });

    it('on a 201', async () => {
      const res = await call(ctx.app, 'POST', '/v1/stores', { key: ctx.a.live, body: storeBody() });
      expect(res.status).toBe(201);
      expectEnvelope(res, true);
      expect(res.body.data.id).toMatch(/^st_/);
    });

    it('on an error', async () => {
      const res = await call(ctx.app, 'GET', '/v1/stores');
      expectError(res, 401, 'unauthorized');
      expectEnvelope(res, false);
      expect(res.body.error.message).toEqual(expect.any(String));
    });

    it('on a 404 for an unknown route', async () => {
      const res = await call(ctx.app, 'GET', '/nowhere');
      expectError(res, 404, 'not_found');
      expectEnvelope(res, false);
    });

    it('on the unauthenticated operational endpoints', async () => {
      for (const url of ['/healthz', '/readyz', '/metrics', '/v1/openapi.json', '/docs']) {
        const res = await call(ctx.app, 'GET', url);
        expect(res.status, url).toBe(200);
        expect(res.headers['request-id'], url).toMatch(REQUEST_ID);
        expectHsts(res);
      }
    });

    it('gives every request its own id', async () => {
      const ids = new Set<string>();
      for (let i = 0; i < 5; i++) ids.add((await call(ctx.app, 'GET', '/healthz')).body.meta.requestId);
      expect(ids.size).toBe(5);
    });

    it('stamps each answer with the millisecond it was made in', async () => {
      for (let i = 0; i < 5; i++) {
        const before = Date.now();
        const res = await call(ctx.app, 'GET', '/healthz');
        const stamped = Date.parse(res.body.meta.timestamp);
        expect(stamped).toBeGreaterThanOrEqual(before);
        expect(stamped).toBeLessThanOrEqual(Date.now());
        await new Promise((r) => setTimeout(r, 3));
      }
    });

    it('ignores a Request-Id sent by the client', async () => {
      const res = await call(ctx.app, 'GET', '/healthz', { headers: { 'request-id': 'req_chosen_by_client' } });
      expect(res.body.meta.requestId).not.toBe('req_chosen_by_client');
      expect(res.headers['request-id']).toBe(res.body.meta.requestId);
    });
  });

  describe('routing', () => {
    it.each([
      ['an unknown /v1 route', 'GET', '/v1/nothing-here'],
      ['a /v2 prefix', 'GET', '/v2/stores'],
      ['a /v2 prefix on a POST route', 'POST', '/v2/track/click'],
      ['a /v0 prefix', 'GET', '/v0/stores'],
      ['no version prefix', 'GET', '/stores'],
    ] as const)('%s → 404 not_found, with or without a key', async (_name, method, url) => {
      expectError(await call(ctx.app, method, url), 404, 'not_found');
      expectError(await call(ctx.app, method, url, { key: ctx.a.live, body: {} }), 404, 'not_found');
    });

    it.each([
      ['an unsupported method', 'DELETE', '/v1/stores/st_x'],
      ['PUT instead of PATCH', 'PUT', '/v1/stores/st_x'],
    ] as const)('%s on a known path → 405 with Allow (code not_found), with or without a key', async (_name, method, url) => {
      for (const res of [await call(ctx.app, method, url), await call(ctx.app, method, url, { key: ctx.a.live, body: {} })]) {
        expectError(res, 405, 'not_found');
        expect(res.headers.allow).toBe('GET, HEAD, PATCH');
      }
    });
  });

  describe('order of checks', () => {
    // Complete but for one bad value: storeId must be a string.
    const invalidClick = { fbclid: 'abc', storeId: 7, landingPage: 'https://shop.acme.test/' };

    it('unknown route without a key → 404 (route before authentication)', async () => {
      expectError(await call(ctx.app, 'POST', '/v1/track/clicks', { body: invalidClick }), 404, 'not_found');
    });

    it('known route, no key, invalid body → 401 (authentication before validation)', async () => {
      expectError(await call(ctx.app, 'POST', '/v1/track/click', { body: invalidClick }), 401, 'unauthorized');
      expectError(
        await call(ctx.app, 'POST', '/v1/track/click', { rawBody: '{not json', headers: { 'content-type': 'application/json' } }),
        401,
        'unauthorized',
      );
      expectError(await call(ctx.app, 'GET', '/v1/conversions?limit=0'), 401, 'unauthorized');
    });

    it('key lacking the scope, invalid body → 403 (scope before validation)', async () => {
      const key = await ctx.keyWithScopes(['stores:read']);
      const error = expectError(await call(ctx.app, 'POST', '/v1/track/click', { key, body: invalidClick }), 403, 'forbidden');
      expect(error.details).toEqual({ requiredScope: 'clicks:write' });
      expectError(await call(ctx.app, 'GET', '/v1/conversions?limit=0', { key }), 403, 'forbidden');
    });

    it('valid key, invalid body → 400', async () => {
      const res = await call(ctx.app, 'POST', '/v1/track/click', { key: ctx.a.live, body: invalidClick });
      expect(expectError(res, 400, 'invalid_request').details).toEqual({ field: 'storeId', reason: 'invalid_type' });
      expectError(await call(ctx.app, 'GET', '/v1/conversions?limit=0', { key: ctx.a.live }), 400, 'invalid_request');
    });

    it('valid key, invalid body naming an unknown store → 400 (validation before resource lookup)', async () => {
      const body = conversionBody('st_does_not_exist', { eventValue: -1 });
      const error = expectError(
        await call(ctx.app, 'POST', '/v1/track/conversion', { key: ctx.a.live, body }),
        400,
        'invalid_request',
      );
      expect(error.details).toEqual({ field: 'eventValue', reason: 'out_of_range' });
    });

    it('plain HTTP behind a proxy → 403 https_required before routing and authentication', async () => {
      const proxied = await createTestContext({ env: { TRUST_PROXY: 'true' } });
      try {
        const http = { 'x-forwarded-proto': 'http' };
        expectError(await call(proxied.app, 'GET', '/v1/nothing-here', { headers: http }), 403, 'https_required');
        expectError(await call(proxied.app, 'POST', '/v1/track/click', { headers: http, body: {} }), 403, 'https_required');
        expectError(await call(proxied.app, 'GET', '/v1/stores', { key: proxied.a.live, headers: http }), 403, 'https_required');
        const https = await call(proxied.app, 'GET', '/v1/stores', {
          key: proxied.a.live,
          headers: { 'x-forwarded-proto': 'https' },
        });
        expect(https.status).toBe(200);
      } finally {
        await proxied.close();
      }
    });
  });

  describe('request bodies', () => {
    const json = { 'content-type': 'application/json' };

    it.each([
      ['truncated', '{"fbclid": "abc"'],
      ['trailing comma', '{"fbclid": "abc",}'],
      ['single quotes', "{'fbclid': 'abc'}"],
      ['not JSON at all', 'fbclid=abc'],
    ])('malformed JSON (%s) → 400 invalid_request', async (_name, rawBody) => {
      const error = expectError(
        await call(ctx.app, 'POST', '/v1/track/click', { key: ctx.a.live, rawBody, headers: json }),
        400,
        'invalid_request',
      );
      expect(error.details?.reason).toBe('malformed_json');
    });

    it('a __proto__ key → 400 invalid_request, reason reserved_key (valid JSON, refused by name)', async () => {
      const rawBody = '{"fbclid": "abc", "__proto__": {"admin": true}}';
      const res = await call(ctx.app, 'POST', '/v1/track/click', { key: ctx.a.live, rawBody, headers: json });
      expect(expectError(res, 400, 'invalid_request').details).toMatchObject({ field: '__proto__', reason: 'reserved_key' });
    });

    it.each([
      ['an array', '[]'],
      ['a string', '"click"'],
      ['a number', '42'],
    ])('a JSON body that is %s → 400 invalid_request', async (_name, rawBody) => {
      const error = expectError(
        await call(ctx.app, 'POST', '/v1/track/click', { key: ctx.a.live, rawBody, headers: json }),
        400,
        'invalid_request',
      );
      expect(error.details?.reason).toBe('invalid_type');
    });

    it('a body over 1 MiB → 413 payload_too_large', async () => {
      const storeId = await makeStore(ctx.app, ctx.a.live);
      const rawBody = JSON.stringify(clickBody(storeId, { userAgent: 'x'.repeat(1024 * 1024) }));
      expectError(
        await call(ctx.app, 'POST', '/v1/track/click', { key: ctx.a.live, rawBody, headers: json }),
        413,
        'payload_too_large',
      );
    });

    it('a body just under 1 MiB is read and validated, not refused for its size', async () => {
      const storeId = await makeStore(ctx.app, ctx.a.live);
      const body = clickBody(storeId, { userAgent: '' });
      const filler = 1024 * 1024 - JSON.stringify(body).length - 100;
      const rawBody = JSON.stringify({ ...body, userAgent: 'x'.repeat(filler) });
      expect(Buffer.byteLength(rawBody)).toBeLessThan(1024 * 1024);
      const error = expectError(
        await call(ctx.app, 'POST', '/v1/track/click', { key: ctx.a.live, rawBody, headers: json }),
        400,
        'invalid_request',
      );
      expect(error.details).toEqual({ field: 'userAgent', reason: 'out_of_range' });
    });

    it('Content-Type text/plain → 400 invalid_request, not 415', async () => {
      const storeId = await makeStore(ctx.app, ctx.a.live);
      const rawBody = JSON.stringify(clickBody(storeId));
      const res = await call(ctx.app, 'POST', '/v1/track/click', {
        key: ctx.a.live,
        rawBody,
        headers: { 'content-type': 'text/plain' },
      });
      expectError(res, 400, 'invalid_request');
    });

    it('Content-Type application/json with a charset is accepted', async () => {
      const storeId = await makeStore(ctx.app, ctx.a.live);
      const rawBody = JSON.stringify(clickBody(storeId));
      const res = await call(ctx.app, 'POST', '/v1/track/click', {
        key: ctx.a.live,
        rawBody,
        headers: { 'content-type': 'application/json; charset=utf-8' },
      });
      expect(res.status).toBe(200);
    });
  });

  describe('validation errors', () => {
    let storeId: string;
    beforeAll(async () => {
      storeId = await makeStore(ctx.app, ctx.a.live);
    });

    const postConversion = (body: unknown) => call(ctx.app, 'POST', '/v1/track/conversion', { key: ctx.a.live, body });

    it('JSON values are not coerced: "10" for eventValue → invalid_type', async () => {
      const error = expectError(await postConversion(conversionBody(storeId, { eventValue: '10' })), 400, 'invalid_request');
      expect(error.details).toEqual({ field: 'eventValue', reason: 'invalid_type' });
    });

    it.each([
      ['eventValue', true],
      ['orderId', 1001],
      ['storeId', ['st_x']],
      ['customerData', 'someone@example.com'],
      ['products', { productId: 'p1' }],
    ])('%s of the wrong JSON type → invalid_type', async (field, value) => {
      const error = expectError(await postConversion(conversionBody(storeId, { [field]: value })), 400, 'invalid_request');
      expect(error.details).toEqual({ field, reason: 'invalid_type' });
    });

    it('query parameters are parsed by their declared type', async () => {
      const res = await call(ctx.app, 'GET', '/v1/stores?limit=5', { key: ctx.a.live });
      expect(res.status).toBe(200);
      const error = expectError(await call(ctx.app, 'GET', '/v1/stores?limit=five', { key: ctx.a.live }), 400, 'invalid_request');
      expect(error.details).toEqual({ field: 'limit', reason: 'invalid_type' });
    });

    const requiredFields = [
      ['POST', '/v1/track/click', 'fbclid'],
      ['POST', '/v1/track/click', 'storeId'],
      ['POST', '/v1/track/click', 'landingPage'],
      ['POST', '/v1/track/conversion', 'storeId'],
      ['POST', '/v1/track/conversion', 'eventType'],
      ['POST', '/v1/track/conversion', 'orderId'],
      ['POST', '/v1/track/conversion', 'eventValue'],
      ['POST', '/v1/track/conversion', 'currency'],
      ['POST', '/v1/stores', 'name'],
      ['POST', '/v1/stores', 'domain'],
      ['POST', '/v1/stores', 'platform'],
    ] as const;
    const validBody = (url: string): Record<string, unknown> =>
      url === '/v1/track/click' ? clickBody(storeId) : url === '/v1/track/conversion' ? conversionBody(storeId) : storeBody();

    describe.each(requiredFields)('%s %s: required %s', (method, url, field) => {
      it.each([
        ['absent', undefined],
        ['null', null],
        ['the empty string', ''],
      ])('%s → 400 missing_required_field', async (how, value) => {
        const body = validBody(url);
        if (how === 'absent') delete body[field];
        else body[field] = value;
        const error = expectError(await call(ctx.app, method, url, { key: ctx.a.live, body }), 400, 'missing_required_field');
        // A click needs any one of its ten click ids (api.md §8): details.anyOf lists them.
        const anyOf =
          url === '/v1/track/click' && field === 'fbclid'
            ? { anyOf: ['fbclid', 'gclid', 'gbraid', 'wbraid', 'ttclid', 'msclkid', 'epik', 'ScCid', 'rdt_cid', 'li_fat_id'] }
            : {};
        expect(error.details).toEqual({ field, reason: 'required_field_missing', ...anyOf });
        expect(error.message).toContain(field);
      });
    });

    it('a required query parameter absent or empty → missing_required_field', async () => {
      for (const url of ['/v1/analytics/metrics', '/v1/analytics/metrics?storeId=']) {
        const error = expectError(await call(ctx.app, 'GET', url, { key: ctx.a.live }), 400, 'missing_required_field');
        expect(error.details).toEqual({ field: 'storeId', reason: 'required_field_missing' });
      }
    });

    it('a required field inside an array item is reported with its JSON path', async () => {
      const products = [{ productId: 'p1' }, { productId: 'p2' }, { name: 'no id' }];
      const error = expectError(await postConversion(conversionBody(storeId, { products })), 400, 'missing_required_field');
      expect(error.details).toEqual({ field: 'products[2].productId', reason: 'required_field_missing' });
    });

    it.each([
      ['quantity 0', 0, 'out_of_range'],
      ['quantity 1.5', 1.5, 'invalid_type'],
      ['quantity "2"', '2', 'invalid_type'],
    ])('products[2].quantity: %s → details.field products[2].quantity', async (_name, quantity, reason) => {
      const products = [
        { productId: 'p1', quantity: 1 },
        { productId: 'p2', quantity: 2 },
        { productId: 'p3', quantity },
      ];
      const error = expectError(await postConversion(conversionBody(storeId, { products })), 400, 'invalid_request');
      expect(error.details).toEqual({ field: 'products[2].quantity', reason });
    });

    it('customerData.email over 256 characters → details.field customerData.email', async () => {
      const email = `${'a'.repeat(250)}@example.com`;
      const error = expectError(
        await postConversion(conversionBody(storeId, { customerData: { email } })),
        400,
        'invalid_request',
      );
      expect(error.details).toEqual({ field: 'customerData.email', reason: 'out_of_range' });
    });

    it('an unknown body field on POST /v1/stores → invalid_request, reason unknown_field, nothing created', async () => {
      const storeCount = async () =>
        (await call(ctx.app, 'GET', '/v1/stores?limit=100', { key: ctx.a.live })).body.data.stores.length;
      const before = await storeCount();
      const res = await call(ctx.app, 'POST', '/v1/stores', { key: ctx.a.live, body: storeBody({ colour: 'blue' }) });
      const error = expectError(res, 400, 'invalid_request');
      expect(error.details).toEqual({ field: 'colour', reason: 'unknown_field' });
      expect(await storeCount()).toBe(before);
    });

    it('an unknown body field on PATCH /v1/stores/:id → invalid_request, reason unknown_field', async () => {
      const res = await call(ctx.app, 'PATCH', `/v1/stores/${storeId}`, { key: ctx.a.live, body: { owner: 'someone' } });
      const error = expectError(res, 400, 'invalid_request');
      expect(error.details).toEqual({ field: 'owner', reason: 'unknown_field' });
    });
  });

  describe('unauthenticated endpoints', () => {
    it('GET /healthz → 200 without a key', async () => {
      const res = await call(ctx.app, 'GET', '/healthz');
      expect(res.status).toBe(200);
      expectEnvelope(res, true);
      expect(res.body.data).toEqual({ status: 'ok' });
    });

    it('GET /readyz → 200 without a key', async () => {
      const res = await call(ctx.app, 'GET', '/readyz');
      expect(res.status).toBe(200);
      expectEnvelope(res, true);
      expect(res.body.data).toEqual({ status: 'ready', rateLimits: 'instance', redis: 'not_configured' });
    });

    it('GET /metrics → Prometheus text without a key', async () => {
      await call(ctx.app, 'GET', '/healthz');
      const res = await call(ctx.app, 'GET', '/metrics');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(res.raw.body).toContain('# TYPE waytrack_http_request_duration_seconds histogram');
      expect(res.raw.body).toMatch(/^waytrack_http_request_duration_seconds_count\{[^}]*route="\/healthz"[^}]*\} \d+$/m);
    });

    it('GET /v1/openapi.json → an OpenAPI 3.1 document of every endpoint, without a key', async () => {
      const res = await call(ctx.app, 'GET', '/v1/openapi.json');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body.openapi).toMatch(/^3\.1\./);
      const paths = res.body.paths as Record<string, Record<string, unknown>>;
      const operations = Object.entries(paths).flatMap(([path, ops]) =>
        Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
      );
      expect(operations).toEqual(
        expect.arrayContaining([
          'POST /v1/track/click',
          'POST /v1/track/conversion',
          'GET /v1/stores',
          'GET /v1/stores/{id}',
          'POST /v1/stores',
          'PATCH /v1/stores/{id}',
          'GET /v1/analytics/metrics',
          'GET /v1/conversions',
          'GET /v1/conversions/{id}',
          'GET /v1/clicks',
          'GET /v1/clicks/{id}',
          'POST /v1/stores/{id}/ad-spend',
          'GET /v1/stores/{id}/ad-spend',
          'GET /healthz',
          'GET /readyz',
          'GET /metrics',
        ]),
      );
      expect(res.body.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    });

    it('GET /v1/openapi.json is served even with a bad Authorization header', async () => {
      const res = await call(ctx.app, 'GET', '/v1/openapi.json', { headers: { authorization: 'Bearer nonsense' } });
      expect(res.status).toBe(200);
      expect(res.body.openapi).toMatch(/^3\.1\./);
    });

    it('GET /docs → an HTML API reference without a key', async () => {
      const res = await call(ctx.app, 'GET', '/docs');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.raw.body).toMatch(/<html/i);
    });
  });
});

describe('5xx responses never leak internals', () => {
  it('an unexpected error → 500 internal_error with a generic message', async () => {
    const ctx = await createTestContext();
    // A second app over the same database, with one route that fails the way a bug would.
    const app = await buildApp({ config: ctx.config, database: ctx.database, logger: false });
    app.get('/explode', async () => {
      throw new Error('SELECT key_hash FROM api_keys WHERE id = 42 failed at /srv/waytrack/src/db.ts:12');
    });
    try {
      const res = await call(app, 'GET', '/explode');
      expectError(res, 500, 'internal_error');
      expectEnvelope(res, false);
      expectNoInternals(res);
      expect(res.raw.body).not.toContain('api_keys');
    } finally {
      await app.close();
      await ctx.close();
    }
  });

  describe('after the database is closed', () => {
    let ctx: TestContext;
    let storeId: string;
    beforeAll(async () => {
      ctx = await createTestContext();
      storeId = await makeStore(ctx.app, ctx.a.live);
      await ctx.database.close();
    });
    afterAll(async () => ctx.close());

    const cases: Array<[name: string, method: 'GET' | 'POST', url: () => string, body?: () => unknown]> = [
      ['a read', 'GET', () => `/v1/stores/${storeId}`],
      ['a list', 'GET', () => '/v1/clicks'],
      ['a write', 'POST', () => '/v1/track/click', () => clickBody(storeId)],
      ['a store write', 'POST', () => '/v1/stores', () => storeBody()],
    ];
    it.each(cases)('%s → 503 service_unavailable, nothing internal in the body', async (_name, method, url, body) => {
      const res = await call(ctx.app, method, url(), { key: ctx.a.live, body: body?.() });
      const error = expectError(res, 503, 'service_unavailable');
      expect(error.message).toMatch(/retry/i);
      expectEnvelope(res, false);
      expectNoInternals(res);
    });

    it('an unseen key → 503, not 401 (the key could not be checked)', async () => {
      const res = await call(ctx.app, 'GET', '/v1/stores', { key: ctx.b.test });
      expectError(res, 503, 'service_unavailable');
      expectNoInternals(res);
    });

    it('GET /readyz → 503 service_unavailable', async () => {
      const res = await call(ctx.app, 'GET', '/readyz');
      expectError(res, 503, 'service_unavailable');
      expectNoInternals(res);
    });

    it('GET /healthz still → 200 (the process is alive)', async () => {
      const res = await call(ctx.app, 'GET', '/healthz');
      expect(res.status).toBe(200);
    });
  });
});

describe('unknown query parameters', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(async () => ctx.close());

  it.each([
    '/v1/clicks?storeID=st_x',
    '/v1/conversions?attributed=true&colour=red',
    '/v1/stores?page=2',
    '/v1/analytics/metrics?storeId=st_x&start=2026-01-01',
  ])('%s → 400 invalid_request, unknown_field naming the parameter', async (url) => {
    const res = await call(ctx.app, 'GET', url, { key: ctx.a.live });
    const error = expectError(res, 400, 'invalid_request');
    expect(error.details?.reason).toBe('unknown_field');
    expect(url).toContain(`${error.details?.field}=`);
  });
});
