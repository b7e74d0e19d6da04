import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, clickBody, createTestContext, expectError, makeStore, type TestContext } from '../helpers.js';

const today = () => new Date().toISOString().slice(0, 10);

// Match quality recorded with each conversion and the store view (api.md §10), on the engine under test.
describe('match quality', () => {
  let ctx: TestContext;
  let metaStore: string;
  let bareStore: string;

  beforeAll(async () => {
    ctx = await createTestContext({ env: { CAPI_SYNC_WAIT_MS: '0', TIKTOK_API_URL: 'http://127.0.0.1:9' } });
    metaStore = await makeStore(ctx.app, ctx.a.live, { pixelId: '123456789012345', capiAccessToken: 'EAAtoken' });
    bareStore = await makeStore(ctx.app, ctx.a.live);
    const tiktok = await call(ctx.app, 'PUT', `/v1/stores/${metaStore}/destinations/tiktok`, {
      key: ctx.a.live,
      body: { pixelCode: 'CKILL9PIXEL0000', accessToken: 'tt-token' },
    });
    expect(tiktok.status, JSON.stringify(tiktok.body)).toBe(200);
  });
  afterAll(async () => ctx?.close());

  async function convert(storeId: string, body: Record<string, unknown>) {
    const res = await call(ctx.app, 'POST', '/v1/track/conversion', {
      key: ctx.a.live,
      body: { storeId, eventType: 'Purchase', eventValue: 10, currency: 'USD', ...body },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const item = await call(ctx.app, 'GET', `/v1/conversions/${res.body.data.conversionId}`, { key: ctx.a.live });
    expect(item.status).toBe(200);
    return item.body.data;
  }

  it('scores what each receiving destination is sent, from the raw data, without storing it', async () => {
    const click = await call(ctx.app, 'POST', '/v1/track/click', {
      key: ctx.a.live,
      body: clickBody(metaStore, { fbclid: 'IwAR-mq-1', fbp: 'fb.1.1700000000000.42' }),
    });
    expect(click.status).toBe(200);
    const item = await convert(metaStore, {
      orderId: 'mq-1',
      clickId: click.body.data.clickId,
      customerData: { email: ' Jane@Example.com ', phone: '030 1234567', city: 'Berlin' },
    });
    // Meta: click id (the click's fbc), email, IP + UA and fbp of the click, address; the phone lacks its country code.
    expect(item.matchQuality.meta).toEqual({
      score: 8.5,
      keys: ['clickId', 'email', 'ipUserAgent', 'fbp', 'address'],
      missing: ['phone'],
      warnings: [expect.objectContaining({ code: 'phone_without_country_code', key: 'phone' })],
    });
    // No ttclid and no ttp: TikTok does not receive it, so it has no entry.
    expect(item.matchQuality.tiktok).toBeUndefined();
    expect(Object.keys(item.forwarding).sort()).toEqual(['meta']);

    const row = await ctx.database.read
      .selectFrom('conversions')
      .select('match_quality')
      .where('id', '=', item.conversionId)
      .executeTakeFirstOrThrow();
    expect(row.match_quality).not.toContain('jane');
    expect(row.match_quality).not.toContain('1234567');
  });

  it('gives TikTok its own entry when it receives the conversion, and warns about what a merchant can fix', async () => {
    const item = await convert(metaStore, {
      orderId: 'mq-2',
      ttp: 'ttp-cookie-1',
      fbc: 'IwAR-not-an-fbc',
      customerData: { email: 'not-an-address' },
    });
    expect(Object.keys(item.matchQuality).sort()).toEqual(['meta', 'tiktok']);
    expect(item.matchQuality.tiktok).toMatchObject({ score: 1.5, keys: ['ttp'] });
    const codes = item.matchQuality.meta.warnings.map((w: { code: string }) => w.code);
    expect(codes).toEqual(['fbc_malformed', 'email_invalid', 'ip_user_agent_missing']);
    expect(item.matchQuality.meta.score).toBe(0);
  });

  it('scores what consent lets through, naming what it withholds (api.md §10)', async () => {
    const store = await makeStore(ctx.app, ctx.a.live, { pixelId: '123456789012345', capiAccessToken: 'EAAtoken' });
    const click = await call(ctx.app, 'POST', '/v1/track/click', {
      key: ctx.a.live,
      body: {
        ...clickBody(store, { fbclid: 'IwAR-mq-consent', fbp: 'fb.1.1700000000000.43' }),
        consent: { adStorage: 'denied' },
      },
    });
    expect(click.status, JSON.stringify(click.body)).toBe(200);
    const item = await convert(store, {
      orderId: 'mq-consent',
      clickId: click.body.data.clickId,
      customerData: { email: 'jane@example.com', phone: '+4930123456', city: 'Berlin' },
      consent: { adUserData: 'denied' },
    });
    // Nothing of the buyer's data is sent, nor the click's id: the score counts none of them.
    expect(item.matchQuality.meta.keys).toEqual([]);
    expect(item.matchQuality.meta.score).toBe(0);
    const warnings = item.matchQuality.meta.warnings as Array<{ code: string; message: string }>;
    expect(warnings.map((w) => w.code)).toEqual(['user_data_denied', 'ad_storage_denied']);
    expect(warnings[0]?.message).toContain('email, phone, ipUserAgent, fbp, address');
    expect(warnings[1]?.message).toContain('clickId');
  });

  it('a conversion no destination receives has an empty matchQuality', async () => {
    const item = await convert(bareStore, { orderId: 'mq-3', customerData: { email: 'a@b.example' } });
    expect(item.matchQuality).toEqual({});
    const list = await call(ctx.app, 'GET', `/v1/conversions?storeId=${bareStore}`, { key: ctx.a.live });
    expect(list.body.data.conversions[0].matchQuality).toEqual({});
  });

  it('the store view averages per destination with the share missing per key and the best improvement', async () => {
    const res = await call(
      ctx.app,
      'GET',
      `/v1/analytics/match-quality?storeId=${metaStore}&startDate=${today()}&endDate=${today()}`,
      {
        key: ctx.a.live,
      },
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const { meta, tiktok } = res.body.data.destinations;
    expect(meta).toMatchObject({
      conversions: 2,
      averageScore: 4.25,
      missing: { clickId: 0.5, email: 0.5, phone: 1, ipUserAgent: 0.5, fbp: 0.5, address: 0.5 },
      warnings: { email_invalid: 1, fbc_malformed: 1, ip_user_agent_missing: 1, phone_without_country_code: 1 },
    });
    expect(meta.improvements[0]).toEqual({ key: 'clickId', scoreGain: 1.5 });
    expect(tiktok).toMatchObject({ conversions: 1, averageScore: 1.5 });
    expect(res.body.data).toMatchObject({ storeId: metaStore, timezone: 'UTC', livemode: true });

    const empty = await call(ctx.app, 'GET', `/v1/analytics/match-quality?storeId=${bareStore}`, { key: ctx.a.live });
    expect(empty.body.data.destinations).toEqual({});
    // Test mode sees test data only.
    const test = await call(ctx.app, 'GET', `/v1/analytics/match-quality?storeId=${metaStore}`, { key: ctx.a.test });
    expect(test.body.data.destinations).toEqual({});
  });

  it('refuses bad queries with the field named, and another account’s store', async () => {
    expect(
      expectError(await call(ctx.app, 'GET', '/v1/analytics/match-quality', { key: ctx.a.live }), 400, 'missing_required_field')
        .details,
    ).toMatchObject({ field: 'storeId' });
    const bad = await call(ctx.app, 'GET', `/v1/analytics/match-quality?storeId=${metaStore}&startDate=2026-02-30`, {
      key: ctx.a.live,
    });
    expect(expectError(bad, 400, 'invalid_request').details).toMatchObject({ field: 'startDate' });
    const order = await call(
      ctx.app,
      'GET',
      `/v1/analytics/match-quality?storeId=${metaStore}&startDate=2026-02-02&endDate=2026-02-01`,
      {
        key: ctx.a.live,
      },
    );
    expect(expectError(order, 400, 'invalid_request').details).toMatchObject({ field: 'startDate' });
    expectError(
      await call(ctx.app, 'GET', `/v1/analytics/match-quality?storeId=${metaStore}`, { key: ctx.b.live }),
      404,
      'store_not_found',
    );
    const noScope = await ctx.keyWithScopes(['conversions:read']);
    expectError(
      await call(ctx.app, 'GET', `/v1/analytics/match-quality?storeId=${metaStore}`, { key: noScope }),
      403,
      'forbidden',
    );
  });
});
