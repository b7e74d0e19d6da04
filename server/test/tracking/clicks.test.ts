import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertClicksOnce } from '../../src/db/repositories/clicks.js';
import { call, clickBody, clickRow, createTestContext, expectError, makeStore, type TestContext } from '../helpers.js';

const MINUTE = 60_000;
const DAY = 86_400_000;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(async () => ctx.close());

const trackClick = (body: unknown, key = ctx.a.live) => call(ctx.app, 'POST', '/v1/track/click', { key, body });

async function clickRows(fbclid: string) {
  return ctx.database.read.selectFrom('clicks').selectAll().where('fbclid', '=', fbclid).execute();
}

describe('POST /v1/track/click — recording', () => {
  it('records a click and answers with its id', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const body = clickBody(storeId, { fbclid: 'IwAR_happy-Path.1' });
    const before = Date.now();
    const res = await trackClick(body);
    const after = Date.now();

    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.headers['request-id']).toBe(res.body.meta.requestId);
    const data = res.body.data;
    expect(Object.keys(data).sort()).toEqual(['clickId', 'duplicate', 'fbclid', 'timestamp', 'tracked']);
    expect(data.clickId).toMatch(/^clk_[A-Za-z0-9_-]+$/);
    expect(data.fbclid).toBe('IwAR_happy-Path.1');
    expect(data.tracked).toBe(true);
    expect(data.duplicate).toBe(false);
    expect(data.timestamp).toMatch(ISO_MS);
    // The response timestamp is when the click was recorded.
    expect(Date.parse(data.timestamp)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(data.timestamp)).toBeLessThanOrEqual(after);

    expect(await clickRows('IwAR_happy-Path.1')).toHaveLength(1);
  });

  it('stores fbc, campaign parameters, isBot and livemode', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const clickTime = Date.now() - 2 * 60 * MINUTE;
    const fbclid = 'IwAR2F4-dbP0l7Mn1IawQQGCINEz7PYXQvwjNwB_qa2ofrHyiLjcbCRxTDMgk';
    const res = await trackClick({
      fbclid,
      storeId,
      landingPage:
        'https://shop.acme.test/p/tent?utm_source=facebook&utm_medium=paid%20social&utm_campaign=bf2026&utm_content=carousel&utm_term=tent&campaign_id=120200001&adset_id=120200002&ad_id=120200003&fbclid=x',
      referrer: 'https://l.facebook.com/',
      ipAddress: '2001:db8::1',
      userAgent:
        'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15',
      timestamp: new Date(clickTime).toISOString(),
      fingerprint: 'fp_abc123',
      fbp: 'fb.1.1596403881668.1116446470',
    });
    expect(res.status).toBe(200);

    const got = await call(ctx.app, 'GET', `/v1/clicks/${res.body.data.clickId}`, { key: ctx.a.live });
    expect(got.status).toBe(200);
    expect(got.body.data).toMatchObject({
      clickId: res.body.data.clickId,
      storeId,
      fbclid,
      fbc: `fb.1.${clickTime}.${fbclid}`,
      fbp: 'fb.1.1596403881668.1116446470',
      referrer: 'https://l.facebook.com/',
      ipAddress: '2001:db8::1',
      fingerprint: 'fp_abc123',
      utm: { source: 'facebook', medium: 'paid social', campaign: 'bf2026', content: 'carousel', term: 'tent' },
      campaignId: '120200001',
      adsetId: '120200002',
      adId: '120200003',
      isBot: false,
      livemode: true,
      timestamp: new Date(clickTime).toISOString(),
    });
  });

  it('stores null campaign fields when the landing page has none', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const res = await trackClick(clickBody(storeId, { landingPage: 'https://shop.acme.test/' }));
    const got = await call(ctx.app, 'GET', `/v1/clicks/${res.body.data.clickId}`, { key: ctx.a.live });
    expect(got.body.data.utm).toEqual({ source: null, medium: null, campaign: null, content: null, term: null });
    expect(got.body.data.campaignId).toBeNull();
    expect(got.body.data.adsetId).toBeNull();
    expect(got.body.data.adId).toBeNull();
  });

  it('defaults the click time to now and builds fbc from it', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const before = Date.now();
    const res = await trackClick(clickBody(storeId, { fbclid: 'DefaultTime_Case' }));
    const after = Date.now();
    const got = await call(ctx.app, 'GET', `/v1/clicks/${res.body.data.clickId}`, { key: ctx.a.live });
    const clickTime = Date.parse(got.body.data.timestamp);
    expect(clickTime).toBeGreaterThanOrEqual(before);
    expect(clickTime).toBeLessThanOrEqual(after);
    expect(got.body.data.fbc).toBe(`fb.1.${clickTime}.DefaultTime_Case`);
  });

  it('accepts a timestamp with an offset and up to 5 minutes in the future', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const future = Date.now() + 4 * MINUTE;
    const res = await trackClick(clickBody(storeId, { timestamp: new Date(future).toISOString() }));
    expect(res.status).toBe(200);
    const got = await call(ctx.app, 'GET', `/v1/clicks/${res.body.data.clickId}`, { key: ctx.a.live });
    expect(got.body.data.timestamp).toBe(new Date(future).toISOString());

    // One hour ago, written in UTC+02:00.
    const past = Math.floor((Date.now() - 60 * MINUTE) / 1000) * 1000;
    const withOffset = new Date(past + 120 * MINUTE).toISOString().replace('.000Z', '+02:00');
    const res2 = await trackClick(clickBody(storeId, { timestamp: withOffset }));
    expect(res2.status).toBe(200);
    const got2 = await call(ctx.app, 'GET', `/v1/clicks/${res2.body.data.clickId}`, { key: ctx.a.live });
    expect(got2.body.data.timestamp).toBe(new Date(past).toISOString());
  });

  it('accepts an fbclid of exactly 500 characters', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const fbclid = `${'a'.repeat(498)}.-`;
    const res = await trackClick(clickBody(storeId, { fbclid }));
    expect(res.status).toBe(200);
    expect(res.body.data.fbclid).toBe(fbclid);
  });
});

describe('POST /v1/track/click — idempotency', () => {
  it('returns the original click for the same fbclid, marked duplicate, with one row', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const first = await trackClick(clickBody(storeId, { fbclid: 'dup_one' }));
    const second = await trackClick(
      clickBody(storeId, { fbclid: 'dup_one', landingPage: 'https://shop.acme.test/other?utm_source=x' }),
    );
    expect(first.body.data.duplicate).toBe(false);
    expect(second.status).toBe(200);
    expect(second.body.data).toMatchObject({
      clickId: first.body.data.clickId,
      fbclid: 'dup_one',
      tracked: true,
      duplicate: true,
    });
    expect(second.body.data.timestamp).toBe(first.body.data.timestamp);
    expect(await clickRows('dup_one')).toHaveLength(1);

    // The original click is kept as it was.
    const got = await call(ctx.app, 'GET', `/v1/clicks/${first.body.data.clickId}`, { key: ctx.a.live });
    expect(got.body.data.utm.source).toBe('facebook');
  });

  it('treats fbclids that differ only in case as different clicks', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const lower = await trackClick(clickBody(storeId, { fbclid: 'casecheck' }));
    const upper = await trackClick(clickBody(storeId, { fbclid: 'CaseCheck' }));
    expect(upper.body.data.duplicate).toBe(false);
    expect(upper.body.data.clickId).not.toBe(lower.body.data.clickId);
  });

  it('keeps the same fbclid separate per store and per mode', async () => {
    const storeA = await makeStore(ctx.app, ctx.a.live);
    const storeB = await makeStore(ctx.app, ctx.a.live);
    const live = await trackClick(clickBody(storeA, { fbclid: 'shared_fbclid' }));
    const otherStore = await trackClick(clickBody(storeB, { fbclid: 'shared_fbclid' }));
    const testMode = await trackClick(clickBody(storeA, { fbclid: 'shared_fbclid' }), ctx.a.test);
    expect(otherStore.body.data.duplicate).toBe(false);
    expect(testMode.body.data.duplicate).toBe(false);
    const ids = new Set([live.body.data.clickId, otherStore.body.data.clickId, testMode.body.data.clickId]);
    expect(ids.size).toBe(3);
    expect(await clickRows('shared_fbclid')).toHaveLength(3);

    const testClick = await call(ctx.app, 'GET', `/v1/clicks/${testMode.body.data.clickId}`, { key: ctx.a.test });
    expect(testClick.body.data.livemode).toBe(false);
  });

  it('stores one row for 50 identical concurrent requests', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const body = clickBody(storeId, { fbclid: 'concurrent_click' });
    const responses = await Promise.all(Array.from({ length: 50 }, () => trackClick(body)));
    for (const res of responses) expect(res.status).toBe(200);
    const ids = new Set(responses.map((r) => r.body.data.clickId));
    expect(ids.size).toBe(1);
    expect(responses.filter((r) => r.body.data.duplicate === false)).toHaveLength(1);
    const rows = await clickRows('concurrent_click');
    expect(rows).toHaveLength(1);
    expect(rows[0]?.id).toBe([...ids][0]);
  });

  it('a burst of new and repeated clicks (batched together): each fbclid stored and counted once, every answer its own', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const earlier = await Promise.all([0, 1, 2].map((i) => trackClick(clickBody(storeId, { fbclid: `burst_old_${i}` }))));
    // 20 new fbclids three times each and the 3 stored ones twice, interleaved, all at once.
    const fbclids = [
      ...Array.from({ length: 3 }, () => Array.from({ length: 20 }, (_, i) => `burst_new_${i}`)).flat(),
      ...Array.from({ length: 2 }, () => [0, 1, 2].map((i) => `burst_old_${i}`)).flat(),
    ];
    const timestamp = new Date(Date.now() - 60_000).toISOString();
    const responses = await Promise.all(fbclids.map((fbclid) => trackClick(clickBody(storeId, { fbclid, timestamp }))));
    for (const res of responses) expect(res.status, JSON.stringify(res.body)).toBe(200);
    for (const [i, fbclid] of fbclids.entries()) expect(responses[i]?.body.data.fbclid).toBe(fbclid);
    for (const fbclid of new Set(fbclids)) {
      const answers = responses.filter((r) => r.body.data.fbclid === fbclid).map((r) => r.body.data);
      const rows = await clickRows(fbclid);
      expect(rows, fbclid).toHaveLength(1);
      expect(new Set(answers.map((a) => a.clickId)), fbclid).toEqual(new Set([rows[0]?.id]));
      const firsts = answers.filter((a) => a.duplicate === false);
      expect(firsts, fbclid).toHaveLength(fbclid.startsWith('burst_new_') ? 1 : 0);
    }
    for (const [i, res] of earlier.entries()) expect((await clickRows(`burst_old_${i}`))[0]?.id).toBe(res.body.data.clickId);
    // Each click queued for the rollups exactly once: the analytics count 23 clicks.
    const [yesterday, today] = [Date.now() - DAY, Date.now()].map((t) => new Date(t).toISOString().slice(0, 10));
    const metrics = await call(
      ctx.app,
      'GET',
      `/v1/analytics/metrics?storeId=${storeId}&startDate=${yesterday}&endDate=${today}`,
      {
        key: ctx.a.live,
      },
    );
    expect(metrics.status, JSON.stringify(metrics.body)).toBe(200);
    expect(metrics.body.data.totalClicks).toBe(23);
  });
});

describe('insertClicksOnce (one statement for a batch on PostgreSQL)', () => {
  it('answers each click in order: new, repeated within the batch, or stored before', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const stored = await trackClick(clickBody(storeId, { fbclid: 'batch_stored' }));
    const now = Date.now();
    const click = (id: string, fbclid: string) =>
      clickRow(ctx, storeId, {
        id,
        fbclid,
        click_time: now - 1000,
        created_at: now,
        landing_page: 'https://shop.acme.test/?utm_source=fb',
        ip_address: '203.0.113.7',
        fbp: 'fb.1.1.2',
        utm_source: 'fb',
      });
    const batch = [
      click('clk_batch_a1', 'batch_a'),
      click('clk_batch_s1', 'batch_stored'),
      click('clk_batch_a2', 'batch_a'),
      click('clk_batch_b1', 'batch_b'),
    ];
    const answers = await ctx.database.write((trx) => insertClicksOnce(trx, batch));
    expect(answers.map((a) => [a.row.id, a.duplicate])).toEqual([
      ['clk_batch_a1', false],
      [stored.body.data.clickId, true],
      ['clk_batch_a1', true],
      ['clk_batch_b1', false],
    ]);
    expect(answers[0]?.row).toEqual(batch[0]);
    const row = (await clickRows('batch_a'))[0];
    expect(row).toMatchObject({
      id: 'clk_batch_a1',
      fbp: 'fb.1.1.2',
      utm_source: 'fb',
      ip_address: '203.0.113.7',
      referrer: null,
    });
    expect(await clickRows('batch_b')).toHaveLength(1);
    expect(await clickRows('batch_stored')).toHaveLength(1);
  });
});

describe('POST /v1/track/click — validation', () => {
  let storeId: string;
  beforeAll(async () => {
    storeId = await makeStore(ctx.app, ctx.a.live);
  });

  async function expectRejected(overrides: Record<string, unknown>, status: number, code: string, field: string, reason: string) {
    const body = clickBody(storeId, overrides);
    for (const [k, v] of Object.entries(overrides)) if (v === undefined) delete (body as Record<string, unknown>)[k];
    const res = await trackClick(body);
    const error = expectError(res, status, code);
    expect(error.details).toMatchObject({ field, reason });
    expect(typeof error.message).toBe('string');
    if (typeof body.fbclid === 'string') expect(await clickRows(body.fbclid)).toHaveLength(0);
    return error;
  }

  it('rejects an fbclid with a character outside [A-Za-z0-9_.-]', async () => {
    for (const fbclid of ['has space', 'plus+sign', 'slash/x', 'quote"', 'ümlaut', 'semi;colon']) {
      await expectRejected({ fbclid }, 400, 'invalid_fbclid', 'fbclid', 'invalid_format');
    }
  });

  it('rejects an fbclid of 501 characters', async () => {
    await expectRejected({ fbclid: 'a'.repeat(501) }, 400, 'invalid_fbclid', 'fbclid', 'out_of_range');
  });

  it('reports a missing, null or empty fbclid as missing_required_field', async () => {
    await expectRejected({ fbclid: undefined }, 400, 'missing_required_field', 'fbclid', 'required_field_missing');
    await expectRejected({ fbclid: null }, 400, 'missing_required_field', 'fbclid', 'required_field_missing');
    await expectRejected({ fbclid: '' }, 400, 'missing_required_field', 'fbclid', 'required_field_missing');
  });

  it('reports a missing storeId or landingPage as missing_required_field', async () => {
    await expectRejected({ storeId: undefined }, 400, 'missing_required_field', 'storeId', 'required_field_missing');
    await expectRejected({ landingPage: undefined }, 400, 'missing_required_field', 'landingPage', 'required_field_missing');
    await expectRejected({ landingPage: '' }, 400, 'missing_required_field', 'landingPage', 'required_field_missing');
  });

  it('rejects a landingPage that is not an absolute http(s) URL', async () => {
    for (const landingPage of [
      'not a url',
      '/products/tent',
      'ftp://shop.acme.test/file',
      'javascript:alert(1)',
      'shop.acme.test/p',
    ]) {
      await expectRejected({ landingPage }, 400, 'invalid_request', 'landingPage', 'invalid_url');
    }
  });

  it('accepts a landingPage of 2048 characters and rejects 2049', async () => {
    const base = 'https://shop.acme.test/p?x=';
    const ok = await trackClick(clickBody(storeId, { landingPage: base + 'a'.repeat(2048 - base.length) }));
    expect(ok.status).toBe(200);
    await expectRejected(
      { landingPage: base + 'a'.repeat(2049 - base.length) },
      400,
      'invalid_request',
      'landingPage',
      'out_of_range',
    );
  });

  it('rejects a referrer that is not a URL', async () => {
    await expectRejected({ referrer: 'nope' }, 400, 'invalid_request', 'referrer', 'invalid_url');
  });

  it('rejects an invalid ipAddress', async () => {
    for (const ipAddress of ['999.1.1.1', '1.2.3', 'localhost', '2001:db8::g', '203.0.113.7/24']) {
      await expectRejected({ ipAddress }, 400, 'invalid_request', 'ipAddress', 'invalid_format');
    }
  });

  it('accepts a userAgent of 1024 characters and rejects 1025', async () => {
    const ok = await trackClick(clickBody(storeId, { userAgent: 'U'.repeat(1024) }));
    expect(ok.status).toBe(200);
    await expectRejected({ userAgent: 'U'.repeat(1025) }, 400, 'invalid_request', 'userAgent', 'out_of_range');
  });

  it('rejects a timestamp more than 5 minutes in the future', async () => {
    const timestamp = new Date(Date.now() + 6 * MINUTE).toISOString();
    await expectRejected({ timestamp }, 400, 'invalid_request', 'timestamp', 'out_of_range');
  });

  it('rejects a timestamp that is not ISO 8601 or names an impossible day', async () => {
    const lastYear = new Date().getUTCFullYear() - 1;
    for (const timestamp of [
      'yesterday',
      '22/11/2026',
      '2026-11-22 10:00',
      `${lastYear}-02-30T10:00:00Z`,
      `${lastYear}-04-31T10:00:00Z`,
    ]) {
      await expectRejected({ timestamp }, 400, 'invalid_request', 'timestamp', 'invalid_format');
    }
  });

  it('rejects a click older than 90 days as an expired fbclid', async () => {
    const timestamp = new Date(Date.now() - 91 * DAY).toISOString();
    await expectRejected({ timestamp }, 400, 'invalid_fbclid', 'timestamp', 'expired');
  });

  it('accepts a click 89 days old', async () => {
    const res = await trackClick(clickBody(storeId, { timestamp: new Date(Date.now() - 89 * DAY).toISOString() }));
    expect(res.status).toBe(200);
  });

  it('accepts a fingerprint of 256 characters and rejects 257', async () => {
    const ok = await trackClick(clickBody(storeId, { fingerprint: 'f'.repeat(256) }));
    expect(ok.status).toBe(200);
    await expectRejected({ fingerprint: 'f'.repeat(257) }, 400, 'invalid_request', 'fingerprint', 'out_of_range');
  });

  it('rejects a malformed fbp', async () => {
    for (const fbp of ['abc', 'fb.1.notanumber.123', 'fb.1.1596403881668.', 'fb.1.1596403881668.12 3']) {
      await expectRejected({ fbp }, 400, 'invalid_request', 'fbp', 'invalid_format');
    }
  });

  it('rejects a value of the wrong JSON type without coercion', async () => {
    await expectRejected({ userAgent: 123 }, 400, 'invalid_request', 'userAgent', 'invalid_type');
    await expectRejected({ landingPage: ['https://shop.acme.test/'] }, 400, 'invalid_request', 'landingPage', 'invalid_type');
  });

  it('validates the body before looking up the store', async () => {
    const res = await trackClick(clickBody('st_does_not_exist', { fbclid: 'bad fbclid' }));
    expectError(res, 400, 'invalid_fbclid');
  });
});

describe('POST /v1/track/click — bots', () => {
  it('records a bot click flagged isBot and leaves it out of totalClicks', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const human = await trackClick(clickBody(storeId, { fbclid: 'human_click' }));
    const bot = await trackClick(clickBody(storeId, { fbclid: 'bot_click', userAgent: GOOGLEBOT }));
    expect(human.status).toBe(200);
    expect(bot.status).toBe(200);
    expect(bot.body.data).toMatchObject({ tracked: true, duplicate: false });

    const got = await call(ctx.app, 'GET', `/v1/clicks/${bot.body.data.clickId}`, { key: ctx.a.live });
    expect(got.body.data.isBot).toBe(true);
    expect(got.body.data.userAgent).toBe(GOOGLEBOT);
    expect(await clickRows('bot_click')).toHaveLength(1);

    const metrics = await call(ctx.app, 'GET', `/v1/analytics/metrics?storeId=${storeId}`, { key: ctx.a.live });
    expect(metrics.status).toBe(200);
    expect(metrics.body.data.totalClicks).toBe(1);
  });

  it('counts a duplicate click once in totalClicks', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    await trackClick(clickBody(storeId, { fbclid: 'counted_once' }));
    await trackClick(clickBody(storeId, { fbclid: 'counted_once' }));
    await trackClick(clickBody(storeId, { fbclid: 'counted_twice' }));
    const metrics = await call(ctx.app, 'GET', `/v1/analytics/metrics?storeId=${storeId}`, { key: ctx.a.live });
    expect(metrics.body.data.totalClicks).toBe(2);
  });

  it('keeps test-mode clicks out of live totalClicks', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    await trackClick(clickBody(storeId), ctx.a.test);
    const live = await call(ctx.app, 'GET', `/v1/analytics/metrics?storeId=${storeId}`, { key: ctx.a.live });
    const test = await call(ctx.app, 'GET', `/v1/analytics/metrics?storeId=${storeId}`, { key: ctx.a.test });
    expect(live.body.data.totalClicks).toBe(0);
    expect(test.body.data.totalClicks).toBe(1);
  });
});

describe('POST /v1/track/click — stores', () => {
  it('answers store_not_found for an inactive store and records nothing', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    // A click first: the active store is now in this instance's store cache, which the PATCH
    // below must clear at once (stores/lookup.ts), not after its 2 s.
    expect((await trackClick(clickBody(storeId, { fbclid: 'before_inactive_click' }))).status).toBe(200);
    const patched = await call(ctx.app, 'PATCH', `/v1/stores/${storeId}`, { key: ctx.a.live, body: { status: 'inactive' } });
    expect(patched.status).toBe(200);
    expect(patched.body.data.status).toBe('inactive');
    const res = await trackClick(clickBody(storeId, { fbclid: 'inactive_store_click' }));
    expectError(res, 404, 'store_not_found');
    expect(await clickRows('inactive_store_click')).toHaveLength(0);

    // Reactivated, it tracks again.
    await call(ctx.app, 'PATCH', `/v1/stores/${storeId}`, { key: ctx.a.live, body: { status: 'active' } });
    const again = await trackClick(clickBody(storeId, { fbclid: 'inactive_store_click' }));
    expect(again.status).toBe(200);
  });

  it('answers store_not_found for an unknown store', async () => {
    const res = await trackClick(clickBody('st_01unknownstore0000000000000', { fbclid: 'unknown_store_click' }));
    expectError(res, 404, 'store_not_found');
    expect(await clickRows('unknown_store_click')).toHaveLength(0);
  });

  it("answers store_not_found for another account's store", async () => {
    const storeOfB = await makeStore(ctx.app, ctx.b.live);
    const res = await trackClick(clickBody(storeOfB, { fbclid: 'foreign_store_click' }));
    expectError(res, 404, 'store_not_found');
    expect(await clickRows('foreign_store_click')).toHaveLength(0);
  });
});
