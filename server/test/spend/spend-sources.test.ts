import { describe, expect, it } from 'vitest';
import { call, expectError, makeStore, newAccountsEachTest } from '../helpers.js';

/**
 * Spend sources' API (api.md §11 "Spend sources"): connect, list, disconnect, sync now; each
 * kind's settings checked with `details.field`; secrets write-only (never echoed); a secret left
 * out is the store's destination's, neither → 400 naming the field; another account's store → 404.
 * (The sync itself: spend-sync.test.ts; no source here reaches a platform: the fake address refuses.)
 */
const ctx = newAccountsEachTest({ env: { SECRETS_KEY: 'cd'.repeat(32) } });
const TOKEN = 'EAAB-source-secret-token-123';

const put = (storeId: string, kind: string, body: unknown, key = ctx.a.live) =>
  call(ctx.app, 'PUT', `/v1/stores/${storeId}/spend-sources/${kind}`, { key, body });

describe('spend sources', () => {
  it('connects Meta with its own token, lists every kind, never echoes the secret, disconnects', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const res = await put(storeId, 'meta', { adAccountIds: ['act_1001', 'act_1002'], accessToken: TOKEN, backfillDays: 14 });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      kind: 'meta',
      configured: true,
      accounts: ['act_1001', 'act_1002'],
      status: 'never',
      lastSyncedAt: null,
      syncedThrough: null,
      settings: { adAccountIds: ['act_1001', 'act_1002'], backfillDays: 14, accessTokenConfigured: true },
    });
    expect(JSON.stringify(res.body)).not.toContain(TOKEN);
    const list = await call(ctx.app, 'GET', `/v1/stores/${storeId}/spend-sources`, { key: ctx.a.live });
    expect(list.status).toBe(200);
    expect(list.body.data.spendSources.map((s: { kind: string; configured: boolean }) => [s.kind, s.configured])).toEqual([
      ['meta', true],
      ['google_ads', false],
      ['tiktok', false],
    ]);
    expect(JSON.stringify(list.body)).not.toContain(TOKEN);
    // Sealed at rest.
    const row = await ctx.database.read
      .selectFrom('spend_sources')
      .selectAll()
      .where('store_id', '=', storeId)
      .executeTakeFirstOrThrow();
    expect(row.secrets).not.toContain(TOKEN);
    // A PUT without the token keeps the stored one.
    const again = await put(storeId, 'meta', { adAccountIds: ['act_1001'] });
    expect(again.status).toBe(200);
    expect(again.body.data.settings).toMatchObject({ adAccountIds: ['act_1001'], backfillDays: 30, accessTokenConfigured: true });

    const removed = await call(ctx.app, 'DELETE', `/v1/stores/${storeId}/spend-sources/meta`, { key: ctx.a.live });
    expect(removed.status).toBe(200);
    expect(removed.body.data).toMatchObject({ kind: 'meta', configured: false, status: 'never' });
    expectError(await call(ctx.app, 'DELETE', `/v1/stores/${storeId}/spend-sources/meta`, { key: ctx.a.live }), 404, 'not_found');
    expectError(
      await call(ctx.app, 'POST', `/v1/stores/${storeId}/spend-sources/meta/sync`, { key: ctx.a.live }),
      404,
      'not_found',
    );
  });

  it('uses the destination’s secret when the source has none, and names the field when neither has one', async () => {
    const bare = await makeStore(ctx.app, ctx.a.live);
    const noToken = await put(bare, 'meta', { adAccountIds: ['act_1'] });
    expectError(noToken, 400, 'missing_required_field');
    expect(noToken.body.error.details.field).toBe('accessToken');
    const tiktok = await put(bare, 'tiktok', { advertiserIds: ['7001'] });
    expectError(tiktok, 400, 'missing_required_field');
    expect(tiktok.body.error.details.field).toBe('accessToken');
    const google = await put(bare, 'google_ads', { customerIds: ['1234567890'] });
    expectError(google, 400, 'missing_required_field');
    expect(google.body.error.details.field).toBe('developerToken');
    const googleNoOauth = await put(bare, 'google_ads', { customerIds: ['1234567890'], developerToken: 'dev-1' });
    expectError(googleNoOauth, 400, 'missing_required_field');
    expect(googleNoOauth.body.error.details.field).toBe('oauth');
    const googleOwn = await put(bare, 'google_ads', {
      customerIds: ['1234567890'],
      loginCustomerId: '9876543210',
      developerToken: 'dev-1',
      oauth: { clientId: 'client-1', clientSecret: 'sec-1', refreshToken: 'ref-1' },
    });
    expect(googleOwn.status).toBe(200);
    expect(googleOwn.body.data.settings).toEqual({
      customerIds: ['1234567890'],
      backfillDays: 30,
      loginCustomerId: '9876543210',
      developerTokenConfigured: true,
      oauth: { clientId: 'client-1', clientSecretConfigured: true, refreshTokenConfigured: true },
    });
    expect(JSON.stringify(googleOwn.body)).not.toMatch(/sec-1|ref-1|dev-1/);

    // The store's Meta destination (capiAccessToken) lends its token.
    const withCapi = await makeStore(ctx.app, ctx.a.live, { pixelId: '1234567890', capiAccessToken: 'EAAB-capi' });
    const lent = await put(withCapi, 'meta', { adAccountIds: ['act_1'] });
    expect(lent.status).toBe(200);
    expect(lent.body.data.settings.accessTokenConfigured).toBe(false);
  });

  it('refuses bad settings with details.field', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const cases: Array<[string, Record<string, unknown>, string, string]> = [
      ['meta', { adAccountIds: ['1234'], accessToken: TOKEN }, 'adAccountIds[0]', 'invalid_request'],
      ['meta', { adAccountIds: [], accessToken: TOKEN }, 'adAccountIds', 'invalid_request'],
      ['meta', { adAccountIds: 'act_1', accessToken: TOKEN }, 'adAccountIds', 'invalid_request'],
      ['meta', { adAccountIds: ['act_1', 'act_1'], accessToken: TOKEN }, 'adAccountIds[1]', 'invalid_request'],
      ['meta', { accessToken: TOKEN }, 'adAccountIds', 'missing_required_field'],
      ['meta', { adAccountIds: ['act_1'], accessToken: TOKEN, backfillDays: 0 }, 'backfillDays', 'invalid_request'],
      ['meta', { adAccountIds: ['act_1'], accessToken: TOKEN, backfillDays: 91 }, 'backfillDays', 'invalid_request'],
      ['meta', { adAccountIds: ['act_1'], accessToken: TOKEN, backfillDays: 1.5 }, 'backfillDays', 'invalid_request'],
      ['meta', { adAccountIds: ['act_1'], accessToken: TOKEN, pixelId: '1' }, 'pixelId', 'invalid_request'],
      ['google_ads', { customerIds: ['123-456-7890'], developerToken: 'd' }, 'customerIds[0]', 'invalid_request'],
      [
        'google_ads',
        { customerIds: ['1234567890'], developerToken: 'd', oauth: { clientId: 'c' } },
        'oauth.clientSecret',
        'missing_required_field',
      ],
      ['tiktok', { advertiserIds: ['abc'], accessToken: 't' }, 'advertiserIds[0]', 'invalid_request'],
    ];
    for (const [kind, body, field, code] of cases) {
      const res = await put(storeId, kind, body);
      expectError(res, 400, code);
      expect(res.body.error.details.field, JSON.stringify(body)).toBe(field);
    }
    const unknownKind = await put(storeId, 'pinterest', { accounts: ['1'] });
    expectError(unknownKind, 400, 'invalid_request');
    expect(unknownKind.body.error.details.field).toBe('kind');
    expect(await ctx.database.read.selectFrom('spend_sources').selectAll().where('store_id', '=', storeId).execute()).toEqual([]);
  });

  it('keeps to the key’s account and scopes', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    expectError(await put(storeId, 'meta', { adAccountIds: ['act_1'], accessToken: TOKEN }, ctx.b.live), 404, 'store_not_found');
    expectError(await call(ctx.app, 'GET', `/v1/stores/${storeId}/spend-sources`, { key: ctx.b.live }), 404, 'store_not_found');
    expect((await put(storeId, 'meta', { adAccountIds: ['act_1'], accessToken: TOKEN })).status).toBe(200);
    expectError(
      await call(ctx.app, 'POST', `/v1/stores/${storeId}/spend-sources/meta/sync`, { key: ctx.b.live }),
      404,
      'store_not_found',
    );
    expectError(
      await call(ctx.app, 'DELETE', `/v1/stores/${storeId}/spend-sources/meta`, { key: ctx.b.live }),
      404,
      'store_not_found',
    );
    const reader = await ctx.keyWithScopes(['stores:read']);
    expect((await call(ctx.app, 'GET', `/v1/stores/${storeId}/spend-sources`, { key: reader })).status).toBe(200);
    expectError(await put(storeId, 'meta', { adAccountIds: ['act_1'], accessToken: TOKEN }, reader), 403, 'forbidden');
    // POST …/sync: 202, the source as it is.
    const sync = await call(ctx.app, 'POST', `/v1/stores/${storeId}/spend-sources/meta/sync`, { key: ctx.a.live });
    expect(sync.status).toBe(202);
    expect(sync.body.data).toMatchObject({ kind: 'meta', configured: true });
  });
});
