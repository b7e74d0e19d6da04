import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, clickBody, conversionBody, createTestContext, expectError, makeStore, type TestContext } from '../helpers.js';

// What schema fuzzing found, kept as plain tests (both engines).

describe('a NUL character (U+0000) anywhere in the input is 400, never a 500', () => {
  // Found by `npm run fuzz` (seed 8, GET /v1/clicks/%00): PostgreSQL text cannot hold U+0000, so
  // every insert or lookup with one failed with 500 internal_error; SQLite stored it.
  let ctx: TestContext;
  let storeId: string;
  beforeAll(async () => {
    ctx = await createTestContext({ env: { CAPI_SYNC_WAIT_MS: '0' } });
    storeId = await makeStore(ctx.app, ctx.a.live);
  });
  afterAll(() => ctx.close());

  it('in a body field or key, naming it', async () => {
    const key = ctx.a.live;
    const cases: Array<[string, string, unknown, string]> = [
      ['POST', '/v1/track/click', clickBody(storeId, { userAgent: 'a\u0000b' }), 'userAgent'],
      ['POST', '/v1/track/conversion', conversionBody(storeId, { orderId: 'a\u0000b' }), 'orderId'],
      ['POST', '/v1/track/conversion', conversionBody(storeId, { products: [{ productId: '\u0000' }] }), 'products[0].productId'],
      ['POST', '/v1/stores', { name: 'a\u0000', domain: 'x.example.com', platform: 'custom' }, 'name'],
      ['POST', '/v1/stores', { name: 'a', domain: 'x.example.com', platform: 'custom', 'x\u0000': 1 }, 'x\u0000'],
    ];
    for (const [method, url, body, field] of cases) {
      const res = await call(ctx.app, method as 'POST', url, { key, body });
      expectError(res, 400, 'invalid_request');
      expect(res.body.error.details, `${url} ${field}`).toMatchObject({ field, reason: 'invalid_format' });
    }
  });

  it('in a query parameter or a path id', async () => {
    for (const url of ['/v1/clicks?storeId=%00', '/v1/stores/%00', '/v1/clicks/a%00b', `/v1/stores/${storeId}%00/ad-spend`]) {
      const res = await call(ctx.app, 'GET', url, { key: ctx.a.live });
      expect(res.status, url).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
    // Still found without one.
    expect((await call(ctx.app, 'GET', `/v1/stores/${storeId}`, { key: ctx.a.live })).status).toBe(200);
  });
});
