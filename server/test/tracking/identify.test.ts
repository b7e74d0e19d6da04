import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublishableKey } from '../../src/accounts/publishable.js';
import { confidenceOf, weightOf } from '../../src/attribution/probability.js';
import { startRetention } from '../../src/retention.js';
import { call, clickBody, conversionBody, createTestContext, expectError, makeStore, type TestContext } from '../helpers.js';

// POST /v1/track/identify (api.md §13 "Identity"): a browser linked to a hashed email or phone;
// a later conversion with that email or phone, from any device, has identity evidence for the
// browser's clicks.
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();
const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');
const SHOP = 'https://shop.acme.test';

describe('POST /v1/track/identify', () => {
  let ctx: TestContext;
  let storeId: string;
  beforeAll(async () => {
    ctx = await createTestContext();
    storeId = await makeStore(ctx.app, ctx.a.live);
  });
  afterAll(async () => ctx.close());

  const identify = (body: Record<string, unknown>, key = ctx.a.live, headers: Record<string, string> = {}) =>
    call(ctx.app, 'POST', '/v1/track/identify', { key, body, headers });
  /** The stored links of a store, as the table holds them. */
  const linksOf = async (store: string) =>
    (
      await sql<{
        kind: string;
        hash: string;
        visitor_id: string;
        fbp: string;
        ttp: string;
        livemode: number;
        account_id: string;
      }>`
        select kind, hash, visitor_id, fbp, ttp, livemode, account_id from identity_links where store_id = ${store}
        order by kind, visitor_id, fbp, ttp`.execute(ctx.database.read as never)
    ).rows;

  it('links a browser to a normalized, hashed email and phone; the same link again is a duplicate', async () => {
    const store = await makeStore(ctx.app, ctx.a.live);
    const body = {
      storeId: store,
      visitorId: 'wt.browser-a',
      fbp: 'fb.1.1700000000000.1234567890',
      email: '  Jane.Doe@Example.COM ',
      phone: '+1 (650) 555-1212',
    };
    const first = await identify(body);
    expect(first.status).toBe(200);
    expect(first.body.success).toBe(true);
    expect(first.body.data).toEqual({
      storeId: store,
      identified: true,
      links: 2,
      duplicate: false,
      timestamp: expect.any(String),
    });
    const again = await identify({ ...body, email: 'jane.doe@example.com' });
    expect(again.body.data).toMatchObject({ links: 2, duplicate: true });
    const rows = await linksOf(store);
    expect(rows).toEqual([
      {
        kind: 'email',
        hash: sha256('jane.doe@example.com'),
        visitor_id: 'wt.browser-a',
        fbp: body.fbp,
        ttp: '',
        livemode: 1,
        account_id: ctx.a.accountId,
      },
      {
        kind: 'phone',
        hash: sha256('16505551212'),
        visitor_id: 'wt.browser-a',
        fbp: body.fbp,
        ttp: '',
        livemode: 1,
        account_id: ctx.a.accountId,
      },
    ]);
    // Nothing in clear is stored.
    expect(JSON.stringify(rows)).not.toMatch(/jane|650/i);
    // An already hashed value is taken as it is (lower-cased); another browser is a new link.
    const hashed = sha256('other@example.com').toUpperCase();
    const third = await identify({ storeId: store, ttp: 'ttp-b', email: hashed });
    expect(third.body.data).toMatchObject({ links: 1, duplicate: false });
    expect((await linksOf(store)).filter((r) => r.ttp === 'ttp-b')).toEqual([
      expect.objectContaining({ kind: 'email', hash: hashed.toLowerCase(), visitor_id: '', fbp: '' }),
    ]);
  });

  it.each([
    ['no browser id', { email: 'a@example.com' }, 'missing_required_field', 'visitorId'],
    ['no email nor phone', { visitorId: 'wt.x' }, 'missing_required_field', 'email'],
    ['a phone without a digit', { visitorId: 'wt.x', phone: '---' }, 'invalid_request', 'phone'],
    ['an email of spaces only', { visitorId: 'wt.x', email: '   ' }, 'invalid_request', 'email'],
    ['a malformed fbp', { fbp: 'not-an-fbp', email: 'a@example.com' }, 'invalid_request', 'fbp'],
    ['a visitorId too long', { visitorId: 'v'.repeat(129), email: 'a@example.com' }, 'invalid_request', 'visitorId'],
    ['no storeId', { storeId: undefined, visitorId: 'wt.x', email: 'a@example.com' }, 'missing_required_field', 'storeId'],
  ])('400 for %s, with details.field', async (_name, fields, code, field) => {
    const error = expectError(await identify({ storeId, ...fields }), 400, code);
    expect(error.details?.field).toBe(field);
  });

  it('another account’s store is store_not_found; the other mode’s links are apart', async () => {
    expectError(await identify({ storeId, visitorId: 'wt.x', email: 'a@example.com' }, ctx.b.live), 404, 'store_not_found');
    const store = await makeStore(ctx.app, ctx.a.live);
    const live = await identify({ storeId: store, visitorId: 'wt.modes', email: 'm@example.com' });
    const test = await identify({ storeId: store, visitorId: 'wt.modes', email: 'm@example.com' }, ctx.a.test);
    expect(live.body.data.duplicate).toBe(false);
    expect(test.body.data.duplicate).toBe(false);
    expect((await linksOf(store)).map((r) => r.livemode).sort()).toEqual([0, 1]);
  });

  it('needs clicks:write', async () => {
    const key = await ctx.keyWithScopes(['conversions:write', 'clicks:read']);
    const error = expectError(await identify({ storeId, visitorId: 'wt.x', email: 'a@example.com' }, key), 403, 'forbidden');
    expect(error.details).toEqual({ requiredScope: 'clicks:write' });
    const allowed = await ctx.keyWithScopes(['clicks:write']);
    expect((await identify({ storeId, visitorId: 'wt.x', email: 'a@example.com' }, allowed)).status).toBe(200);
  });

  it("a publishable key: from the store's pages, for its own store (storeId may be left out), CORS answered", async () => {
    const store = await makeStore(ctx.app, ctx.a.live);
    const { key } = await createPublishableKey(ctx.database, ctx.a.accountId, { storeId: store, mode: 'live' });
    const body = { visitorId: 'wt.tag', email: sha256('tag@example.com') };
    const res = await identify(body, key, { origin: SHOP });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ storeId: store, links: 1 });
    expect(res.headers['access-control-allow-origin']).toBe(SHOP);
    const refused = expectError(await identify(body, key, { origin: 'https://evil.example' }), 403, 'forbidden');
    expect(refused.details).toEqual({ reason: 'origin_not_allowed' });
    const other = expectError(await identify({ ...body, storeId }, key, { origin: SHOP }), 403, 'forbidden');
    expect(other.details).toMatchObject({ field: 'storeId', reason: 'not_allowed' });
    const preflight = await ctx.app.inject({
      method: 'OPTIONS',
      url: '/v1/track/identify',
      headers: { origin: SHOP, 'access-control-request-method': 'POST' },
    });
    expect(preflight.statusCode).toBe(200);
    expect(preflight.headers['access-control-allow-origin']).toBe(SHOP);
  });

  it("attribution: browser A's click, identified; a conversion from device B with that email credits A's click with identity evidence", async () => {
    const store = await makeStore(ctx.app, ctx.a.live);
    const key = ctx.a.live;
    const now = Date.now();
    const phoneUa =
      'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1';
    const laptopUa = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36';
    const click = await call(ctx.app, 'POST', '/v1/track/click', {
      key,
      body: clickBody(store, {
        fbclid: 'ad-on-phone',
        visitorId: 'wt.phone-a',
        ipAddress: '198.51.100.7',
        userAgent: phoneUa,
        timestamp: iso(now - DAY),
      }),
    });
    expect(click.status).toBe(200);
    const clickId = click.body.data.clickId as string;
    // A stranger's click from another browser, meanwhile: no evidence links it.
    await call(ctx.app, 'POST', '/v1/track/click', {
      key,
      body: clickBody(store, {
        visitorId: 'wt.stranger',
        ipAddress: '192.0.2.55',
        userAgent: laptopUa,
        timestamp: iso(now - DAY / 2),
      }),
    });
    const before = await call(ctx.app, 'POST', '/v1/track/conversion', {
      key,
      body: conversionBody(store, {
        customerData: { email: 'nobody@example.com' },
        ipAddress: '203.0.113.99',
        userAgent: laptopUa,
      }),
    });
    expect(before.body.data.attributed).toBe(false);

    expect((await identify({ storeId: store, visitorId: 'wt.phone-a', email: sha256('buyer@example.com') })).status).toBe(200);
    const conversion = await call(ctx.app, 'POST', '/v1/track/conversion', {
      key,
      body: conversionBody(store, {
        customerData: { email: ' Buyer@Example.com' },
        ipAddress: '203.0.113.99',
        userAgent: laptopUa,
      }),
    });
    expect(conversion.status).toBe(200);
    const evidence = [{ kind: 'identity' as const, sharedBy: 1 }];
    const w = weightOf(evidence, 1, DAY);
    const score = confidenceOf(w / (1 + w));
    expect(score).toBeGreaterThanOrEqual(50);
    expect(conversion.body.data).toMatchObject({ attributed: true, attributedTo: { clickId, confidenceScore: score } });
    const explained = await call(ctx.app, 'GET', `/v1/conversions/${conversion.body.data.conversionId}`, { key });
    expect(explained.body.data.attribution.candidates[0]).toMatchObject({ clickId, confidence: score, evidence });

    // The link is the store's and mode's: a test-mode conversion, or another store's, finds nothing.
    const testMode = await call(ctx.app, 'POST', '/v1/track/conversion', {
      key: ctx.a.test,
      body: conversionBody(store, { customerData: { email: 'buyer@example.com' } }),
    });
    expect(testMode.body.data.attributed).toBe(false);
    const otherStore = await makeStore(ctx.app, key);
    const elsewhere = await call(ctx.app, 'POST', '/v1/track/conversion', {
      key,
      body: conversionBody(otherStore, { customerData: { email: 'buyer@example.com' } }),
    });
    expect(elsewhere.body.data.attributed).toBe(false);
  });

  it('a phone link works the same way, and links older than the window still name the browser', async () => {
    const store = await makeStore(ctx.app, ctx.a.live);
    const key = ctx.a.live;
    const now = Date.now();
    // Identified first (long before the click), the click comes later on the same browser.
    expect((await identify({ storeId: store, fbp: 'fb.1.1700000000000.42', phone: '0044 20 7946 0958' })).status).toBe(200);
    const click = await call(ctx.app, 'POST', '/v1/track/click', {
      key,
      body: clickBody(store, { fbp: 'fb.1.1700000000000.42', ipAddress: '198.51.100.8', timestamp: iso(now - 2 * DAY) }),
    });
    const conversion = await call(ctx.app, 'POST', '/v1/track/conversion', {
      key,
      body: conversionBody(store, { customerData: { phone: '+44 20 7946 0958' }, ipAddress: '203.0.113.5' }),
    });
    expect(conversion.body.data).toMatchObject({ attributed: true, attributedTo: { clickId: click.body.data.clickId } });
  });

  it('RETENTION_DAYS deletes links last seen before the cutoff, in batches; a link seen again is kept', async () => {
    const store = await makeStore(ctx.app, ctx.a.live);
    for (let i = 0; i < 5; i++) await identify({ storeId: store, visitorId: `wt.old-${i}`, email: 'old@example.com' });
    await identify({ storeId: store, visitorId: 'wt.recent', email: 'old@example.com' });
    // The old links were last seen 40 days ago; the recent one now.
    await ctx.database.write((trx) =>
      trx
        .updateTable('identity_links')
        .set({ seen_at: Date.now() - 40 * DAY })
        .where('store_id', '=', store)
        .where('visitor_id', 'like', 'wt.old-%')
        .execute(),
    );
    const retention = startRetention(ctx.database, { days: 30, firstRunMs: 0, batchSize: 2 });
    const deadline = Date.now() + 20_000;
    while ((await linksOf(store)).length > 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await retention.stop();
    expect((await linksOf(store)).map((r) => r.visitor_id)).toEqual(['wt.recent']);
  });
});
