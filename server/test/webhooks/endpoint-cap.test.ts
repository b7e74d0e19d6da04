import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { call, createTestContext, expectError, type TestContext } from '../helpers.js';

// The cap on webhook endpoints per account and mode (WEBHOOK_MAX_ENDPOINTS, default 20; docs/api.md
// "Webhooks out"): it bounds how many endpoints one account can put in front of the dispatcher.
// Set to 3 here. Private addresses are allowed so that no name has to resolve.

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext({ env: { WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOK_MAX_ENDPOINTS: '3' } });
});
afterAll(async () => ctx?.close());

const create = (key: string, n: number | string) =>
  call(ctx.app, 'POST', '/v1/webhooks', {
    key,
    body: { url: `https://127.0.0.1:9/hooks/${n}`, events: ['store.updated'] },
  });

describe('endpoints per account and mode', () => {
  it('refuses one more than WEBHOOK_MAX_ENDPOINTS with 400 invalid_request naming the cap', async () => {
    const t = await ctx.withNewAccounts();
    const made: string[] = [];
    for (let n = 0; n < 3; n++) {
      const res = await create(t.a.live, n);
      expect(res.status).toBe(201);
      made.push(res.body.data.id as string);
    }
    const error = expectError(await create(t.a.live, 3), 400, 'invalid_request');
    expect(error.details).toEqual({ field: 'url', reason: 'limit_reached', limit: 3 });
    expect(error.message).toMatch(/already has 3 webhook endpoints in live mode.*WEBHOOK_MAX_ENDPOINTS.*DELETE \/v1\/webhooks/);

    // Per mode and per account: test mode and another account have their own 3.
    for (let n = 0; n < 3; n++) expect((await create(t.a.test, n)).status).toBe(201);
    expect(expectError(await create(t.a.test, 3), 400, 'invalid_request').message).toMatch(/in test mode/);
    expect((await create(t.b.live, 0)).status).toBe(201);

    // A deleted endpoint frees its place.
    expect((await call(ctx.app, 'DELETE', `/v1/webhooks/${made[0]}`, { key: t.a.live })).status).toBe(200);
    expect((await create(t.a.live, 4)).status).toBe(201);
    expectError(await create(t.a.live, 5), 400, 'invalid_request');
  });

  it('holds under concurrent creations', async () => {
    const t = await ctx.withNewAccounts();
    const results = await Promise.all(Array.from({ length: 12 }, (_, n) => create(t.a.live, `c${n}`)));
    expect(results.filter((r) => r.status === 201)).toHaveLength(3);
    for (const refused of results.filter((r) => r.status !== 201)) expectError(refused, 400, 'invalid_request');
    const list = await call(ctx.app, 'GET', '/v1/webhooks?limit=100', { key: t.a.live });
    expect(list.body.data.webhooks).toHaveLength(3);
  });

  it('is 20 by default and configurable within 1–10000', () => {
    expect(loadConfig({ DATA_DIR: ctx.dataDir }).webhookMaxEndpoints).toBe(20);
    expect(loadConfig({ DATA_DIR: ctx.dataDir, WEBHOOK_MAX_ENDPOINTS: '50' }).webhookMaxEndpoints).toBe(50);
    expect(() => loadConfig({ WEBHOOK_MAX_ENDPOINTS: '0' })).toThrow(ConfigError);
    expect(() => loadConfig({ WEBHOOK_MAX_ENDPOINTS: 'many' })).toThrow(/WEBHOOK_MAX_ENDPOINTS must be an integer/);
  });
});
