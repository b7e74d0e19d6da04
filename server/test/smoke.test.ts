import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, clickBody, conversionBody, createTestContext, makeStore, type TestContext } from './helpers.js';

describe('smoke', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(async () => ctx.close());

  it('runs the main flow', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const click = await call(ctx.app, 'POST', '/v1/track/click', {
      key: ctx.a.live,
      body: clickBody(storeId, { fbclid: 'abc' }),
    });
    console.log(click.status, click.body, click.headers);
    const conv = await call(ctx.app, 'POST', '/v1/track/conversion', {
      key: ctx.a.live,
      body: conversionBody(storeId, { fbclid: 'abc' }),
    });
    console.log(conv.status, conv.body);
    const m = await call(ctx.app, 'GET', `/v1/analytics/metrics?storeId=${storeId}`, { key: ctx.a.live });
    console.log(m.status, m.body);
    const l = await call(ctx.app, 'GET', `/v1/conversions?limit=1`, { key: ctx.a.live });
    console.log(l.status, JSON.stringify(l.body));
    const bad = await call(ctx.app, 'POST', '/v1/track/click', {
      key: ctx.a.live,
      body: { fbclid: 'a b', storeId, landingPage: 'x' },
    });
    console.log(bad.status, JSON.stringify(bad.body));
    const nf = await call(ctx.app, 'GET', '/v2/x');
    console.log(nf.status, JSON.stringify(nf.body), nf.headers);
    const oa = await call(ctx.app, 'GET', '/v1/openapi.json');
    console.log(oa.status, Object.keys(oa.body.paths ?? {}));
    expect(click.status).toBe(200);
  });
});
