import { describe, expect, it } from 'vitest';
import { type ApiResponse, call, clickBody, conversionBody, expectError, makeStore, newAccountsEachTest } from '../helpers.js';

const DAY_MS = 86_400_000;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const BOT_UA = 'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)';

describe('GET /v1/conversions and GET /v1/clicks', () => {
  const ctx = newAccountsEachTest();

  async function click(storeId: string, fields: Record<string, unknown> = {}, key = ctx.a.live) {
    const res = await call(ctx.app, 'POST', '/v1/track/click', { key, body: clickBody(storeId, fields) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data as { clickId: string; fbclid: string };
  }

  async function convert(storeId: string, fields: Record<string, unknown> = {}, key = ctx.a.live) {
    const res = await call(ctx.app, 'POST', '/v1/track/conversion', { key, body: conversionBody(storeId, fields) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data as { conversionId: string; attributed: boolean };
  }

  const get = (url: string, key = ctx.a.live) => call(ctx.app, 'GET', url, { key });

  /** The ids of every item of a list, following nextCursor. */
  async function ids(url: string, key = ctx.a.live): Promise<string[]> {
    const isClicks = url.startsWith('/v1/clicks');
    const out: string[] = [];
    let cursor: string | null = null;
    for (let guard = 0; guard < 100; guard++) {
      const sep = url.includes('?') ? '&' : '?';
      const res: ApiResponse = await get(cursor ? `${url}${sep}cursor=${encodeURIComponent(cursor)}` : url, key);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const items = isClicks ? res.body.data.clicks : res.body.data.conversions;
      out.push(...items.map((i: { clickId?: string; conversionId?: string }) => (isClicks ? i.clickId : i.conversionId)));
      cursor = res.body.data.nextCursor;
      if (!res.body.data.hasMore) break;
    }
    return out;
  }

  describe('GET /v1/conversions', () => {
    it('returns items with every documented field', async () => {
      const storeId = await makeStore(ctx.app, ctx.a.live);
      const base = Date.now() - 3 * DAY_MS;
      const convTime = new Date(base + 3_600_000).toISOString();
      const leadTime = new Date(base - 3_600_000).toISOString();
      const c = await click(storeId, { fbclid: 'fb_items', timestamp: new Date(base).toISOString() });
      const attributed = await convert(storeId, {
        fbclid: 'fb_items',
        orderId: 'order-1001',
        eventValue: 249.98,
        currency: 'usd',
        timestamp: convTime,
        products: [
          { productId: 'tent-2p', name: 'Tent', price: 199.99, quantity: 1, category: 'camping' },
          { productId: 'stakes', price: 24.995, quantity: 2 },
          { productId: 'gift' },
        ],
      });
      const plain = await convert(storeId, {
        eventType: 'Lead',
        orderId: 'lead-7',
        eventValue: 0,
        currency: 'EUR',
        timestamp: leadTime,
      });

      const res = await get(`/v1/conversions?storeId=${storeId}`);
      expect(res.status).toBe(200);
      expect(res.body.data.hasMore).toBe(false);
      expect(res.body.data.nextCursor).toBeNull();
      const [first, second] = res.body.data.conversions;
      expect(first).toEqual({
        conversionId: attributed.conversionId,
        storeId,
        eventType: 'Purchase',
        orderId: 'order-1001',
        eventId: 'order-1001',
        eventValue: 249.98,
        currency: 'USD',
        attributed: true,
        attributedTo: {
          clickId: c.clickId,
          fbclid: 'fb_items',
          clickIds: { fbclid: 'fb_items' },
          channel: 'meta',
          confidenceScore: 100,
        },
        capiSent: false,
        capi: { status: 'skipped', attempts: 0, reason: 'not_configured', message: expect.any(String) },
        forwarding: {}, // no destination configured: none receives it (api.md §8)
        matchQuality: {}, // and so has no match quality towards any (api.md §10)
        consent: { adStorage: 'granted', adUserData: 'granted', adPersonalization: 'granted' }, // the store's default: granted (api.md §10)
        refundedTotal: 0,
        livemode: true,
        timestamp: convTime,
        createdAt: expect.stringMatching(ISO_MS),
        products: [
          { productId: 'tent-2p', name: 'Tent', price: 199.99, quantity: 1, category: 'camping' },
          { productId: 'stakes', price: 25, quantity: 2 },
          { productId: 'gift', quantity: 1 },
        ],
      });
      expect(second).toEqual({
        conversionId: plain.conversionId,
        storeId,
        eventType: 'Lead',
        orderId: 'lead-7',
        eventId: 'lead-7',
        eventValue: 0,
        currency: 'EUR',
        attributed: false,
        capiSent: false,
        capi: { status: 'skipped', attempts: 0, reason: 'not_configured', message: expect.any(String) },
        forwarding: {}, // no destination configured: none receives it (api.md §8)
        matchQuality: {}, // and so has no match quality towards any (api.md §10)
        consent: { adStorage: 'granted', adUserData: 'granted', adPersonalization: 'granted' }, // the store's default: granted (api.md §10)
        refundedTotal: 0,
        livemode: true,
        timestamp: leadTime,
        createdAt: expect.stringMatching(ISO_MS),
        products: [],
      });
      expect(second).not.toHaveProperty('attributedTo');

      const one = await get(`/v1/conversions/${attributed.conversionId}`);
      expect(one.status).toBe(200);
      // The single item adds the explanation of its attribution.
      expect(one.body.data).toEqual({
        ...first,
        attribution: {
          signal: 'explicit',
          score: 100,
          touchpoints: [
            { clickId: c.clickId, fbclid: 'fb_items', signal: 'explicit', score: 100, clickTime: expect.stringMatching(ISO_MS) },
          ],
          // The candidates as scored (api.md §13): here the one it named.
          candidates: [
            {
              clickId: c.clickId,
              fbclid: 'fb_items',
              clickTime: expect.stringMatching(ISO_MS),
              confidence: 100,
              evidence: [{ kind: 'explicit', sharedBy: 1 }],
            },
          ],
        },
      });
    });

    it('answers not_found for an unknown, foreign or other-mode conversion id', async () => {
      const storeId = await makeStore(ctx.app, ctx.a.live);
      const live = await convert(storeId);
      const test = await convert(storeId, {}, ctx.a.test);
      expectError(await get('/v1/conversions/conv_00000000000000000000000000'), 404, 'not_found');
      expectError(await get(`/v1/conversions/${live.conversionId}`, ctx.b.live), 404, 'not_found');
      expectError(await get(`/v1/conversions/${test.conversionId}`), 404, 'not_found');
      expectError(await get(`/v1/conversions/${live.conversionId}`, ctx.a.test), 404, 'not_found');
      expect((await get(`/v1/conversions/${test.conversionId}`, ctx.a.test)).body.data.livemode).toBe(false);
    });

    it('filters by storeId, eventType and attributed', async () => {
      const s1 = await makeStore(ctx.app, ctx.a.live, { name: 'one' });
      const s2 = await makeStore(ctx.app, ctx.a.live, { name: 'two' });
      await click(s1, { fbclid: 'f1' });
      await click(s2, { fbclid: 'f2' });
      const p1 = await convert(s1, { fbclid: 'f1' });
      const p1b = await convert(s1);
      const l1 = await convert(s1, { eventType: 'Lead', fbclid: 'f1' });
      const p2 = await convert(s2, { fbclid: 'f2' });
      const signup2 = await convert(s2, { eventType: 'signup' });
      await convert(s1, {}, ctx.a.test); // test mode: never listed with the live key
      await convert(await makeStore(ctx.app, ctx.b.live), {}, ctx.b.live); // other account

      const sorted = (list: string[]) => [...list].sort();
      expect(sorted(await ids('/v1/conversions'))).toEqual(sorted([p1, p1b, l1, p2, signup2].map((c) => c.conversionId)));
      expect(sorted(await ids(`/v1/conversions?storeId=${s1}`))).toEqual(sorted([p1, p1b, l1].map((c) => c.conversionId)));
      expect(sorted(await ids('/v1/conversions?eventType=Purchase'))).toEqual(sorted([p1, p1b, p2].map((c) => c.conversionId)));
      expect(await ids('/v1/conversions?eventType=signup')).toEqual([signup2.conversionId]);
      expect(sorted(await ids('/v1/conversions?attributed=true'))).toEqual(sorted([p1, l1, p2].map((c) => c.conversionId)));
      expect(sorted(await ids('/v1/conversions?attributed=false'))).toEqual(sorted([p1b, signup2].map((c) => c.conversionId)));
      expect(await ids(`/v1/conversions?storeId=${s1}&eventType=Purchase&attributed=true`)).toEqual([p1.conversionId]);
      expect(await ids(`/v1/conversions?storeId=${s2}&eventType=Lead`)).toEqual([]);
    });

    it('filters by date in the store time zone with storeId, and in UTC without', async () => {
      const ny = await makeStore(ctx.app, ctx.a.live, { timezone: 'America/New_York' });
      // 23:30 on Oct 31 in New York, Nov 1 in UTC
      const late = await convert(ny, { timestamp: '2026-11-01T03:30:00Z' });
      const nov1 = await convert(ny, { timestamp: '2026-11-01T15:00:00Z' });
      const oct30 = await convert(ny, { timestamp: '2026-10-30T15:00:00Z' });

      expect(await ids(`/v1/conversions?storeId=${ny}&startDate=2026-10-31&endDate=2026-10-31`)).toEqual([late.conversionId]);
      expect(await ids(`/v1/conversions?storeId=${ny}&startDate=2026-11-01&endDate=2026-11-01`)).toEqual([nov1.conversionId]);
      expect(await ids('/v1/conversions?startDate=2026-11-01&endDate=2026-11-01')).toEqual([
        nov1.conversionId,
        late.conversionId,
      ]);
      expect(await ids('/v1/conversions?startDate=2026-10-31&endDate=2026-10-31')).toEqual([]);
      expect(await ids(`/v1/conversions?storeId=${ny}&startDate=2026-10-31`)).toEqual([nov1.conversionId, late.conversionId]);
      expect(await ids(`/v1/conversions?storeId=${ny}&endDate=2026-10-31`)).toEqual([late.conversionId, oct30.conversionId]);
    });

    it('validates its filters', async () => {
      const storeId = await makeStore(ctx.app, ctx.a.live);
      const foreign = await makeStore(ctx.app, ctx.b.live);
      const invalid = async (query: string, field: string) => {
        const error = expectError(await get(`/v1/conversions?${query}`), 400, 'invalid_request');
        expect(error.details?.field).toBe(field);
      };
      await invalid('attributed=yes', 'attributed');
      await invalid('eventType=9lives', 'eventType');
      await invalid('startDate=2026-02-30', 'startDate');
      await invalid(`storeId=${storeId}&endDate=2026-13-01`, 'endDate');
      await invalid('startDate=2026-05-02&endDate=2026-05-01', 'startDate');
      expectError(await get(`/v1/conversions?storeId=${foreign}`), 404, 'store_not_found');
      // validation comes before the store lookup
      await invalid(`storeId=${foreign}&startDate=2026-02-30`, 'startDate');
    });
  });

  describe('GET /v1/clicks', () => {
    it('returns items with the click fields, utm, isBot and livemode', async () => {
      const storeId = await makeStore(ctx.app, ctx.a.live);
      const clickTime = new Date(Date.now() - 2 * DAY_MS);
      clickTime.setUTCMilliseconds(123);
      const created = await click(storeId, {
        fbclid: 'IwAR-Case.Kept_1',
        timestamp: clickTime.toISOString(),
        referrer: 'https://m.facebook.com/',
        fingerprint: 'fp_abc',
        fbp: 'fb.1.1596403881668.1116446470',
      });
      const res = await get(`/v1/clicks?storeId=${storeId}`);
      expect(res.status).toBe(200);
      expect(res.body.data.hasMore).toBe(false);
      expect(res.body.data.nextCursor).toBeNull();
      expect(res.body.data.clicks).toEqual([
        {
          clickId: created.clickId,
          storeId,
          fbclid: 'IwAR-Case.Kept_1',
          fbc: `fb.1.${clickTime.getTime()}.IwAR-Case.Kept_1`,
          fbp: 'fb.1.1596403881668.1116446470',
          // A Meta click: the other platforms' ids (api.md §8) are null.
          gclid: null,
          gbraid: null,
          wbraid: null,
          ttclid: null,
          msclkid: null,
          epik: null,
          ScCid: null,
          rdt_cid: null,
          li_fat_id: null,
          ttp: null,
          visitorId: null,
          landingPage: clickBody(storeId).landingPage,
          referrer: 'https://m.facebook.com/',
          ipAddress: '203.0.113.7',
          userAgent: clickBody(storeId).userAgent,
          fingerprint: 'fp_abc',
          utm: { source: 'facebook', medium: 'cpc', campaign: 'bf2026', content: null, term: null },
          campaignId: '123',
          adsetId: '456',
          adId: '789',
          isBot: false,
          livemode: true,
          consent: { adStorage: 'granted', adUserData: 'granted', adPersonalization: 'granted' },
          timestamp: clickTime.toISOString(),
          recordedAt: expect.stringMatching(ISO_MS),
        },
      ]);
      const one = await get(`/v1/clicks/${created.clickId}`);
      expect(one.status).toBe(200);
      expect(one.body.data).toEqual(res.body.data.clicks[0]);
    });

    it('flags bots, reads utm_content and utm_term, and leaves absent parameters null', async () => {
      const storeId = await makeStore(ctx.app, ctx.a.live);
      const bot = await click(storeId, { userAgent: BOT_UA });
      const bare = await click(storeId, {
        landingPage: 'https://shop.acme.test/?utm_content=blue&utm_term=tent',
        userAgent: undefined,
        ipAddress: undefined,
      });
      const botItem = (await get(`/v1/clicks/${bot.clickId}`)).body.data;
      expect(botItem.isBot).toBe(true);
      expect(botItem.userAgent).toBe(BOT_UA);
      const bareItem = (await get(`/v1/clicks/${bare.clickId}`)).body.data;
      expect(bareItem).toMatchObject({
        isBot: false,
        userAgent: null,
        ipAddress: null,
        referrer: null,
        fingerprint: null,
        fbp: null,
        utm: { source: null, medium: null, campaign: null, content: 'blue', term: 'tent' },
        campaignId: null,
        adsetId: null,
        adId: null,
      });
    });

    it('filters by storeId and separates accounts and modes', async () => {
      const s1 = await makeStore(ctx.app, ctx.a.live);
      const s2 = await makeStore(ctx.app, ctx.a.live);
      const a = await click(s1);
      const b = await click(s1);
      const c = await click(s2);
      const t = await click(s1, {}, ctx.a.test);
      await click(await makeStore(ctx.app, ctx.b.live), {}, ctx.b.live);

      const sorted = (list: string[]) => [...list].sort();
      expect(sorted(await ids(`/v1/clicks?storeId=${s1}`))).toEqual(sorted([a.clickId, b.clickId]));
      expect(await ids(`/v1/clicks?storeId=${s2}`)).toEqual([c.clickId]);
      expect(sorted(await ids('/v1/clicks'))).toEqual(sorted([a.clickId, b.clickId, c.clickId]));
      expect(await ids('/v1/clicks', ctx.a.test)).toEqual([t.clickId]);
      const testItem = (await get(`/v1/clicks/${t.clickId}`, ctx.a.test)).body.data;
      expect(testItem.livemode).toBe(false);

      expectError(await get(`/v1/clicks/${t.clickId}`), 404, 'not_found');
      expectError(await get(`/v1/clicks/${a.clickId}`, ctx.b.live), 404, 'not_found');
      expectError(await get('/v1/clicks/clk_00000000000000000000000000'), 404, 'not_found');
      const foreign = await makeStore(ctx.app, ctx.b.live);
      expectError(await get(`/v1/clicks?storeId=${foreign}`), 404, 'store_not_found');
    });
  });
});
