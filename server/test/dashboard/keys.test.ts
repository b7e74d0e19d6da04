// Settings → API keys through the dashboard API: list, create (shown once), revoke, last used.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KeyUsage } from '../../src/accounts/key-usage.js';
import { KEY_CACHE_TTL_MS } from '../../src/http/auth.js';
import { call, createTestContext, expectError, makeStore, type TestContext } from '../helpers.js';
import { type DashboardSession, dashboardCall, signIn, withPassword } from './session.js';

let ctx: TestContext;
let owner: DashboardSession;
beforeEach(async () => {
  ctx = await createTestContext();
  await withPassword(ctx.database, 'owner-a@example.com');
  owner = await signIn(ctx.app, 'owner-a@example.com');
});
afterEach(() => ctx.close());

const createKey = (body: unknown) => dashboardCall(ctx.app, 'POST', '/dashboard/api/keys', { session: owner, body });
const listKeys = async () => (await dashboardCall(ctx.app, 'GET', '/dashboard/api/keys', { session: owner })).body.data.keys;

describe('API keys page', () => {
  it('creates a key shown once in full, listed afterwards only by its hint', async () => {
    const res = await createKey({ name: 'Checkout backend', mode: 'test', scopes: ['conversions:write', 'clicks:write'] });
    expect(res.status).toBe(201);
    const created = res.body.data;
    expect(created.key).toMatch(/^wt_test_[0-9A-Za-z]{32,}$/);
    expect(created).toMatchObject({ mode: 'test', scopes: ['conversions:write', 'clicks:write'] });

    const keys = await listKeys();
    const listed = keys.find((k: { keyId: string }) => k.keyId === created.keyId);
    expect(listed).toMatchObject({ name: 'Checkout backend', mode: 'test', revokedAt: null, lastUsedAt: null });
    expect(listed.hint).toBe(`wt_test_…${created.key.slice(-4)}`);
    expect(JSON.stringify(keys)).not.toContain(created.key);
    // The two default keys of the account are listed too, newest first.
    expect(keys).toHaveLength(3);
    expect(keys[0].keyId).toBe(created.keyId);
  });

  it('the new key works on /v1 with its mode and scopes', async () => {
    const created = (await createKey({ name: 'Stores only', mode: 'live', scopes: ['stores:write', 'stores:read'] })).body.data;
    const storeId = await makeStore(ctx.app, created.key);
    const store = await call(ctx.app, 'GET', `/v1/stores/${storeId}`, { key: created.key });
    expect(store.status).toBe(200);
    const refused = await call(ctx.app, 'GET', `/v1/conversions?storeId=${storeId}`, { key: created.key });
    expect(expectError(refused, 403, 'forbidden').details).toEqual({ requiredScope: 'conversions:read' });
  });

  it('refuses a key without scopes, an unknown scope or mode, and unknown fields', async () => {
    for (const body of [
      { mode: 'live', scopes: [] },
      { mode: 'live', scopes: ['clicks:delete'] },
      { mode: 'prod', scopes: ['*'] },
      { mode: 'live', scopes: ['*'], rateLimitRps: 1_000_000 },
      { mode: 'live', scopes: ['*', '*'] },
    ]) {
      expectError(await createKey(body), 400, 'invalid_request');
    }
    expectError(await createKey({ scopes: ['*'] }), 400, 'missing_required_field');
    expectError(await createKey({ mode: 'live' }), 400, 'missing_required_field');
  });

  it('revokes a key: /v1 refuses it within 5 s, the list shows when, and it cannot be revoked twice', async () => {
    const created = (await createKey({ name: 'Short-lived', mode: 'live', scopes: ['*'] })).body.data;
    expect((await call(ctx.app, 'GET', '/v1/stores', { key: created.key })).status).toBe(200);
    const revokedAt = Date.now();
    const res = await dashboardCall(ctx.app, 'POST', `/dashboard/api/keys/${created.keyId}/revoke`, { session: owner });
    expect(res.body.data).toEqual({ keyId: created.keyId, revoked: true });
    for (;;) {
      const v1 = await call(ctx.app, 'GET', '/v1/stores', { key: created.key });
      if (v1.status === 401) break;
      expect(Date.now() - revokedAt).toBeLessThan(5000);
      await new Promise((r) => setTimeout(r, 100));
    }
    // The cache lives for KEY_CACHE_TTL_MS; nothing longer.
    expect(Date.now() - revokedAt).toBeLessThan(KEY_CACHE_TTL_MS + 1000);
    const listed = (await listKeys()).find((k: { keyId: string }) => k.keyId === created.keyId);
    expect(Date.parse(listed.revokedAt)).toBeGreaterThanOrEqual(revokedAt - 1000);
    expectError(
      await dashboardCall(ctx.app, 'POST', `/dashboard/api/keys/${created.keyId}/revoke`, { session: owner }),
      404,
      'not_found',
    );
    expectError(
      await dashboardCall(ctx.app, 'POST', '/dashboard/api/keys/key_nope/revoke', { session: owner }),
      404,
      'not_found',
    );
  });

  it('shows when each key was last used', async () => {
    const before = Date.now();
    expect((await call(ctx.app, 'GET', '/v1/stores', { key: ctx.a.test })).status).toBe(200);
    // The time is written after the answer, off the request's path.
    let used: { lastUsedAt: string | null } | undefined;
    for (const deadline = Date.now() + 10_000; !used?.lastUsedAt && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 20));
      used = (await listKeys()).find((k: { mode: string; name: string }) => k.mode === 'test' && k.name === 'Default test key');
    }
    expect(Date.parse(used?.lastUsedAt ?? '')).toBeGreaterThanOrEqual(before - 1000);
    // The live key was not used.
    const live = (await listKeys()).find(
      (k: { mode: string; name: string }) => k.mode === 'live' && k.name === 'Default live key',
    );
    expect(live.lastUsedAt).toBeNull();
  });
});

describe('publishable keys from the API keys page', () => {
  it('creates one for a store of the account: clicks only, listed with its store', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const res = await createKey({ mode: 'test', publishable: true, storeId, origins: ['https://checkout.example.com'] });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      mode: 'test',
      scopes: ['clicks:write'],
      storeId,
      origins: ['https://checkout.example.com'],
    });
    expect(res.body.data.key).toMatch(/^wt_pk_test_[0-9A-Za-z]{32,}$/);
    const listed = (await listKeys()).find((k: { keyId: string }) => k.keyId === res.body.data.keyId);
    expect(listed).toMatchObject({
      kind: 'publishable',
      storeId,
      scopes: ['clicks:write'],
      origins: ['https://checkout.example.com'],
    });
    // Secret keys say so.
    expect((await listKeys()).filter((k: { kind: string }) => k.kind === 'secret')).toHaveLength(2);
  });

  it("refuses another account's store, a missing store, other scopes and a bad origin", async () => {
    const theirs = await makeStore(ctx.app, ctx.b.live);
    expectError(await createKey({ mode: 'live', publishable: true, storeId: theirs }), 404, 'store_not_found');
    expectError(await createKey({ mode: 'live', publishable: true }), 400, 'missing_required_field');
    const mine = await makeStore(ctx.app, ctx.a.live);
    expectError(await createKey({ mode: 'live', publishable: true, storeId: mine, scopes: ['*'] }), 400, 'invalid_request');
    const origin = await createKey({ mode: 'live', publishable: true, storeId: mine, origins: ['ftp://files.example.com'] });
    expect(expectError(origin, 400, 'invalid_request').details?.field).toBe('origins[0]');
    // A secret key names no store.
    expectError(await createKey({ mode: 'live', scopes: ['*'], storeId: mine }), 400, 'invalid_request');
    expect((await listKeys()).filter((k: { kind: string }) => k.kind === 'publishable')).toEqual([]);
  });
});

describe('KeyUsage', () => {
  it('writes a key at most once per interval, and again after a failed write', async () => {
    let writes = 0;
    let fail = true;
    const database = {
      ...ctx.database,
      write: async () => {
        writes++;
        if (fail) throw new Error('database away');
      },
    } as unknown as typeof ctx.database;
    const errors: unknown[] = [];
    const usage = new KeyUsage(database, (e) => errors.push(e), 60_000);
    usage.record('key_1', 1_000);
    await usage.settle();
    expect(errors).toHaveLength(1);
    fail = false;
    usage.record('key_1', 1_001); // retried at once: the failed write did not count
    usage.record('key_1', 30_000);
    usage.record('key_2', 30_000);
    usage.record('key_1', 61_002);
    await usage.settle();
    expect(writes).toBe(4);
  });
});
