import { describe, expect, it } from 'vitest';
import {
  type ApiResponse,
  call,
  clickBody,
  conversionBody,
  expectError,
  makeStore,
  newAccountsEachTest,
  storeBody,
} from '../helpers.js';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const STORE_ID = /^st_[0-9a-z]{26}$/;
const TOKEN = 'EAAB-secret-capi-token-do-not-leak-42';

describe('stores', () => {
  const ctx = newAccountsEachTest();

  const post = (body: unknown, key = ctx.a.live) => call(ctx.app, 'POST', '/v1/stores', { key, body });
  const get = (id: string, key = ctx.a.live) => call(ctx.app, 'GET', `/v1/stores/${id}`, { key });
  const patch = (id: string, body: unknown, key = ctx.a.live) => call(ctx.app, 'PATCH', `/v1/stores/${id}`, { key, body });
  const list = (query = '', key = ctx.a.live) => call(ctx.app, 'GET', `/v1/stores${query}`, { key });

  /** Every store id of a list, following nextCursor to the end. */
  async function allStoreIds(query: string, key = ctx.a.live): Promise<string[]> {
    const ids: string[] = [];
    let cursor: string | null = null;
    for (let guard = 0; guard < 100; guard++) {
      const sep = query.includes('?') ? '&' : '?';
      const res = await list(cursor ? `${query}${sep}cursor=${encodeURIComponent(cursor)}` : query, key);
      expect(res.status).toBe(200);
      ids.push(...res.body.data.stores.map((s: { id: string }) => s.id));
      cursor = res.body.data.nextCursor;
      if (!res.body.data.hasMore) break;
    }
    return ids;
  }

  function expectInvalid(res: ApiResponse, field: string, reason?: string) {
    const error = expectError(res, 400, 'invalid_request');
    expect(error.details?.field).toBe(field);
    if (reason) expect(error.details?.reason).toBe(reason);
  }

  describe('POST /v1/stores', () => {
    it('creates a store with the documented defaults and answers 201', async () => {
      const res = await post(storeBody());
      expect(res.status).toBe(201);
      expect(res.body.success).toBe(true);
      const store = res.body.data;
      expect(store.id).toMatch(STORE_ID);
      expect(store.createdAt).toMatch(ISO_MS);
      expect(store).toEqual({
        id: store.id,
        name: 'Acme Outdoor',
        domain: 'shop.acme.test',
        platform: 'shopify',
        pixelId: null,
        status: 'active',
        currency: 'USD',
        timezone: 'UTC',
        attributionWindowDays: 7,
        minConfidence: 50,
        capiConfigured: false,
        shopifyWebhookConfigured: false,
        woocommerceWebhookConfigured: false,
        defaultConsent: { adStorage: 'granted', adUserData: 'granted', adPersonalization: 'granted' },
        createdAt: store.createdAt,
        updatedAt: store.createdAt,
      });
      expect(store).not.toHaveProperty('capiTestEventCode');
    });

    it('stores every creatable field', async () => {
      const res = await post(
        storeBody({
          name: 'Bergen Bikes',
          domain: 'bikes.example.no',
          platform: 'woocommerce',
          pixelId: '123456789012345',
          capiTestEventCode: 'TEST12345',
          currency: 'NOK',
          timezone: 'Europe/Oslo',
          attributionWindowDays: 30,
          minConfidence: 80,
        }),
      );
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({
        name: 'Bergen Bikes',
        domain: 'bikes.example.no',
        platform: 'woocommerce',
        pixelId: '123456789012345',
        capiTestEventCode: 'TEST12345',
        currency: 'NOK',
        timezone: 'Europe/Oslo',
        attributionWindowDays: 30,
        minConfidence: 80,
        // a pixel without an access token cannot forward
        capiConfigured: false,
      });
    });

    it('never returns capiAccessToken, and shows capiConfigured when pixel and token are both set', async () => {
      const created = await post(storeBody({ pixelId: '1234567890', capiAccessToken: TOKEN }));
      expect(created.status).toBe(201);
      expect(created.body.data.capiConfigured).toBe(true);
      const id = created.body.data.id;

      const responses = [
        created,
        await get(id),
        await list(),
        await get(id, ctx.a.test),
        await patch(id, { name: 'Renamed' }),
        await patch(id, { capiAccessToken: `${TOKEN}-2` }),
      ];
      for (const res of responses) {
        expect(res.status).toBe(200 + (res === created ? 1 : 0));
        expect(res.raw.body).not.toContain(TOKEN);
        expect(res.raw.body).not.toContain('capiAccessToken');
      }
      expect(responses[5]?.body.data.capiConfigured).toBe(true);

      const tokenOnly = await post(storeBody({ capiAccessToken: TOKEN }));
      expect(tokenOnly.status).toBe(201);
      expect(tokenOnly.body.data.capiConfigured).toBe(false);
      expect(tokenOnly.raw.body).not.toContain(TOKEN);
    });

    it('upper-cases the currency and canonicalizes the time zone and domain', async () => {
      const res = await post(storeBody({ currency: 'eur', timezone: 'america/new_york', domain: 'Shop.Acme.TEST' }));
      expect(res.status).toBe(201);
      expect(res.body.data.currency).toBe('EUR');
      expect(res.body.data.timezone).toBe('America/New_York');
      expect(res.body.data.domain).toBe('shop.acme.test');
      const again = await get(res.body.data.id);
      expect(again.body.data.currency).toBe('EUR');
    });

    it('accepts the boundary values', async () => {
      const res = await post(
        storeBody({ name: 'n'.repeat(200), pixelId: '12345', attributionWindowDays: 90, minConfidence: 0, platform: 'custom' }),
      );
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({ pixelId: '12345', attributionWindowDays: 90, minConfidence: 0, platform: 'custom' });
      const low = await post(storeBody({ pixelId: '12345678901234567890', attributionWindowDays: 1, minConfidence: 100 }));
      expect(low.status).toBe(201);
      expect(low.body.data).toMatchObject({ pixelId: '12345678901234567890', attributionWindowDays: 1, minConfidence: 100 });
    });

    it('requires name, domain and platform', async () => {
      for (const field of ['name', 'domain', 'platform']) {
        const body: Record<string, unknown> = storeBody();
        delete body[field];
        const error = expectError(await post(body), 400, 'missing_required_field');
        expect(error.details).toEqual({ field, reason: 'required_field_missing' });
      }
      const empty = expectError(await post(storeBody({ name: '' })), 400, 'missing_required_field');
      expect(empty.details?.field).toBe('name');
      const nulled = expectError(await post(storeBody({ name: null })), 400, 'missing_required_field');
      expect(nulled.details?.field).toBe('name');
    });

    it('rejects a name over 200 characters', async () => {
      expectInvalid(await post(storeBody({ name: 'n'.repeat(201) })), 'name', 'out_of_range');
    });

    it('rejects a domain with a scheme, a path or bad characters', async () => {
      for (const domain of [
        'https://shop.acme.test',
        'shop.acme.test/path',
        'shop acme.test',
        'shop.acme.test:8080',
        '-shop.test',
      ]) {
        expectInvalid(await post(storeBody({ domain })), 'domain');
      }
    });

    it('rejects a platform outside the enum', async () => {
      expectInvalid(await post(storeBody({ platform: 'etsy' })), 'platform', 'unknown_value');
      expectInvalid(await post(storeBody({ platform: 'Shopify' })), 'platform', 'unknown_value');
    });

    it('rejects a pixelId that is not 5–20 digits', async () => {
      for (const pixelId of ['1234', '123456789012345678901', 'abc123456', '12345 ']) {
        expectInvalid(await post(storeBody({ pixelId })), 'pixelId', 'invalid_format');
      }
      expectInvalid(await post(storeBody({ pixelId: 1234567 })), 'pixelId', 'invalid_type');
    });

    it('rejects a currency that is not ISO 4217 with invalid_currency', async () => {
      for (const currency of ['ABC', 'euro', 'US']) {
        const error = expectError(await post(storeBody({ currency })), 400, 'invalid_currency');
        expect(error.details?.field).toBe('currency');
      }
    });

    it('rejects an unknown time zone', async () => {
      expectInvalid(await post(storeBody({ timezone: 'Mars/Base' })), 'timezone');
    });

    it('rejects out-of-range attributionWindowDays and minConfidence', async () => {
      expectInvalid(await post(storeBody({ attributionWindowDays: 0 })), 'attributionWindowDays', 'out_of_range');
      expectInvalid(await post(storeBody({ attributionWindowDays: 91 })), 'attributionWindowDays', 'out_of_range');
      expectInvalid(await post(storeBody({ minConfidence: 101 })), 'minConfidence', 'out_of_range');
      expectInvalid(await post(storeBody({ minConfidence: -1 })), 'minConfidence', 'out_of_range');
      expectInvalid(await post(storeBody({ attributionWindowDays: 7.5 })), 'attributionWindowDays', 'invalid_type');
      expectInvalid(await post(storeBody({ attributionWindowDays: '7' })), 'attributionWindowDays', 'invalid_type');
    });

    it('rejects an unknown field', async () => {
      expectInvalid(await post(storeBody({ color: 'blue' })), 'color', 'unknown_field');
      expectInvalid(await post(storeBody({ status: 'inactive' })), 'status', 'unknown_field');
    });

    it('creates nothing when validation fails', async () => {
      await post(storeBody({ currency: 'ABC' }));
      await post(storeBody({ timezone: 'Mars/Base' }));
      await post(storeBody({ domain: 'https://x.test' }));
      const res = await list();
      expect(res.body.data.stores).toEqual([]);
    });
  });

  describe('GET /v1/stores/:id', () => {
    it('returns the store as created', async () => {
      const created = await post(storeBody({ name: 'One', currency: 'GBP' }));
      const res = await get(created.body.data.id);
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual(created.body.data);
    });

    it("answers store_not_found for another account's store and for an unknown id", async () => {
      const foreign = await makeStore(ctx.app, ctx.b.live);
      expectError(await get(foreign), 404, 'store_not_found');
      expectError(await get('st_00000000000000000000000000'), 404, 'store_not_found');
      // the owner still sees it
      expect((await get(foreign, ctx.b.live)).status).toBe(200);
    });

    it('is visible with both the live and the test key', async () => {
      const fromLive = await makeStore(ctx.app, ctx.a.live, { name: 'made live' });
      const fromTest = await makeStore(ctx.app, ctx.a.test, { name: 'made test' });
      for (const key of [ctx.a.live, ctx.a.test]) {
        expect((await get(fromLive, key)).body.data.name).toBe('made live');
        expect((await get(fromTest, key)).body.data.name).toBe('made test');
        expect((await allStoreIds('', key)).sort()).toEqual([fromLive, fromTest].sort());
      }
      // but never with another account's keys
      expectError(await get(fromLive, ctx.b.test), 404, 'store_not_found');
    });
  });

  describe('GET /v1/stores', () => {
    it('lists only the account’s stores, newest first', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push(await makeStore(ctx.app, ctx.a.live, { name: `store ${i}` }));
      await makeStore(ctx.app, ctx.b.live);
      const res = await list();
      expect(res.status).toBe(200);
      expect(res.body.data.hasMore).toBe(false);
      expect(res.body.data.nextCursor).toBeNull();
      const stores = res.body.data.stores as Array<{ id: string; createdAt: string }>;
      const expected = [...stores].sort((x, y) =>
        x.createdAt === y.createdAt ? (x.id < y.id ? 1 : -1) : x.createdAt < y.createdAt ? 1 : -1,
      );
      expect(stores.map((s) => s.id)).toEqual(expected.map((s) => s.id));
      expect(stores.map((s) => s.id).sort()).toEqual([...ids].sort());
    });

    it('filters by status', async () => {
      const active = await makeStore(ctx.app, ctx.a.live, { name: 'active' });
      const inactive = await makeStore(ctx.app, ctx.a.live, { name: 'inactive' });
      expect((await patch(inactive, { status: 'inactive' })).status).toBe(200);

      expect(await allStoreIds('?status=active')).toEqual([active]);
      expect(await allStoreIds('?status=inactive')).toEqual([inactive]);
      expect((await allStoreIds('')).sort()).toEqual([active, inactive].sort());
      expectInvalid(await list('?status=deleted'), 'status', 'unknown_value');
    });

    it('paginates with limit and cursor', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push(await makeStore(ctx.app, ctx.a.live, { name: `s${i}` }));
      const first = await list('?limit=2');
      expect(first.body.data.stores).toHaveLength(2);
      expect(first.body.data.hasMore).toBe(true);
      expect(typeof first.body.data.nextCursor).toBe('string');
      const second = await list(`?limit=2&cursor=${encodeURIComponent(first.body.data.nextCursor)}`);
      expect(second.body.data.stores).toHaveLength(2);
      expect(second.body.data.hasMore).toBe(true);
      const third = await list(`?limit=2&cursor=${encodeURIComponent(second.body.data.nextCursor)}`);
      expect(third.body.data.stores).toHaveLength(1);
      expect(third.body.data.hasMore).toBe(false);
      expect(third.body.data.nextCursor).toBeNull();
      const seen = [...first.body.data.stores, ...second.body.data.stores, ...third.body.data.stores].map(
        (s: { id: string }) => s.id,
      );
      expect(new Set(seen).size).toBe(5);
      expect([...seen].sort()).toEqual([...ids].sort());
      // the same walk over the status filter
      expect((await allStoreIds('?status=active&limit=2')).sort()).toEqual([...ids].sort());
    });
  });

  describe('PATCH /v1/stores/:id', () => {
    it('changes the given fields and leaves the others', async () => {
      const id = await makeStore(ctx.app, ctx.a.live, { pixelId: '1234567', minConfidence: 60 });
      const res = await patch(id, {
        name: 'New name',
        domain: 'new.acme.test',
        platform: 'magento',
        currency: 'jpy',
        timezone: 'Asia/Tokyo',
        attributionWindowDays: 14,
        capiTestEventCode: 'TEST999',
      });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        id,
        name: 'New name',
        domain: 'new.acme.test',
        platform: 'magento',
        currency: 'JPY',
        timezone: 'Asia/Tokyo',
        attributionWindowDays: 14,
        capiTestEventCode: 'TEST999',
        pixelId: '1234567',
        minConfidence: 60,
        status: 'active',
      });
      expect((await get(id)).body.data).toEqual(res.body.data);
    });

    it('clears pixelId, capiAccessToken and capiTestEventCode with null', async () => {
      const id = await makeStore(ctx.app, ctx.a.live, {
        pixelId: '1234567',
        capiAccessToken: TOKEN,
        capiTestEventCode: 'TEST1',
      });
      expect((await get(id)).body.data.capiConfigured).toBe(true);

      const noToken = await patch(id, { capiAccessToken: null });
      expect(noToken.status).toBe(200);
      expect(noToken.body.data.capiConfigured).toBe(false);
      expect(noToken.body.data.pixelId).toBe('1234567');

      const tokenBack = await patch(id, { capiAccessToken: TOKEN });
      expect(tokenBack.body.data.capiConfigured).toBe(true);

      const noPixel = await patch(id, { pixelId: null, capiTestEventCode: null });
      expect(noPixel.status).toBe(200);
      expect(noPixel.body.data.pixelId).toBeNull();
      expect(noPixel.body.data.capiConfigured).toBe(false);
      expect(noPixel.body.data).not.toHaveProperty('capiTestEventCode');
      expect((await get(id)).body.data.pixelId).toBeNull();
    });

    it('validates like creation', async () => {
      const id = await makeStore(ctx.app, ctx.a.live);
      expectInvalid(await patch(id, { attributionWindowDays: 0 }), 'attributionWindowDays', 'out_of_range');
      expectInvalid(await patch(id, { minConfidence: 101 }), 'minConfidence', 'out_of_range');
      expectInvalid(await patch(id, { domain: 'http://x.test' }), 'domain');
      expectInvalid(await patch(id, { timezone: 'Mars/Base' }), 'timezone');
      expectInvalid(await patch(id, { platform: 'etsy' }), 'platform', 'unknown_value');
      expectInvalid(await patch(id, { status: 'deleted' }), 'status', 'unknown_value');
      expectInvalid(await patch(id, { nickname: 'x' }), 'nickname', 'unknown_field');
      expectInvalid(await patch(id, { pixelId: '12' }), 'pixelId', 'invalid_format');
      expect(expectError(await patch(id, { currency: 'ABC' }), 400, 'invalid_currency').details?.field).toBe('currency');
      // nothing changed
      expect((await get(id)).body.data).toMatchObject({ attributionWindowDays: 7, minConfidence: 50, currency: 'USD' });
    });

    it("answers store_not_found for another account's store and changes nothing", async () => {
      const foreign = await makeStore(ctx.app, ctx.b.live, { name: 'B store' });
      expectError(await patch(foreign, { name: 'hijacked' }), 404, 'store_not_found');
      expectError(await patch(foreign, { status: 'inactive' }), 404, 'store_not_found');
      const owner = await get(foreign, ctx.b.live);
      expect(owner.body.data).toMatchObject({ name: 'B store', status: 'active' });
    });

    it('deactivates: tracking is store_not_found, the store stays listed and its data readable; reactivates', async () => {
      const id = await makeStore(ctx.app, ctx.a.live);
      const click = await call(ctx.app, 'POST', '/v1/track/click', {
        key: ctx.a.live,
        body: clickBody(id, { fbclid: 'fb_deact' }),
      });
      expect(click.status).toBe(200);
      const conv = await call(ctx.app, 'POST', '/v1/track/conversion', {
        key: ctx.a.live,
        body: conversionBody(id, { fbclid: 'fb_deact', eventValue: 42.5 }),
      });
      expect(conv.status).toBe(200);
      expect(conv.body.data.attributed).toBe(true);

      const off = await patch(id, { status: 'inactive' });
      expect(off.status).toBe(200);
      expect(off.body.data.status).toBe('inactive');

      expectError(
        await call(ctx.app, 'POST', '/v1/track/click', { key: ctx.a.live, body: clickBody(id) }),
        404,
        'store_not_found',
      );
      expectError(
        await call(ctx.app, 'POST', '/v1/track/conversion', { key: ctx.a.live, body: conversionBody(id) }),
        404,
        'store_not_found',
      );
      expectError(
        await call(ctx.app, 'POST', '/v1/track/click', { key: ctx.a.test, body: clickBody(id) }),
        404,
        'store_not_found',
      );

      expect((await get(id)).body.data.status).toBe('inactive');
      expect(await allStoreIds('')).toEqual([id]);
      const metrics = await call(ctx.app, 'GET', `/v1/analytics/metrics?storeId=${id}`, { key: ctx.a.live });
      expect(metrics.status).toBe(200);
      expect(metrics.body.data).toMatchObject({
        totalClicks: 1,
        totalConversions: 1,
        totalRevenue: 42.5,
        attributedConversions: 1,
      });
      const conversions = await call(ctx.app, 'GET', `/v1/conversions?storeId=${id}`, { key: ctx.a.live });
      expect(conversions.body.data.conversions.map((c: { conversionId: string }) => c.conversionId)).toEqual([
        conv.body.data.conversionId,
      ]);
      const clicks = await call(ctx.app, 'GET', `/v1/clicks?storeId=${id}`, { key: ctx.a.live });
      expect(clicks.body.data.clicks.map((c: { clickId: string }) => c.clickId)).toEqual([click.body.data.clickId]);

      const on = await patch(id, { status: 'active' });
      expect(on.body.data.status).toBe('active');
      const again = await call(ctx.app, 'POST', '/v1/track/click', {
        key: ctx.a.live,
        body: clickBody(id, { fbclid: 'fb_back' }),
      });
      expect(again.status).toBe(200);
      expect(again.body.data.duplicate).toBe(false);
    });

    it('can be made with the test key and is then seen with the live key', async () => {
      const id = await makeStore(ctx.app, ctx.a.live);
      expect((await patch(id, { name: 'from test key' }, ctx.a.test)).status).toBe(200);
      expect((await get(id, ctx.a.live)).body.data.name).toBe('from test key');
    });
  });
});
