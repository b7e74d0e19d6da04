import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { LOG_REDACT } from '../../src/observability.js';
import { openTestDatabase, type TestDatabase } from '../engine.js';
import {
  call,
  clickBody,
  conversionBody,
  createTestContext,
  expectError,
  makeStore,
  storeBody,
  type TestContext,
  tempDir,
} from '../helpers.js';

// "A merchant's first hour": errors that teach, and nothing accepted silently that was not meant.

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const iso = (ms: number) => new Date(ms).toISOString();

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext({ env: { CAPI_SYNC_WAIT_MS: '0' } });
});
afterAll(async () => ctx.close());

const track = (body: unknown, key = ctx.a.live) => call(ctx.app, 'POST', '/v1/track/conversion', { key, body });
const click = async (storeId: string, overrides: Record<string, unknown> = {}, key = ctx.a.live) => {
  const res = await call(ctx.app, 'POST', '/v1/track/click', { key, body: clickBody(storeId, overrides) });
  expect(res.status).toBe(200);
  return res.body.data as { clickId: string; fbclid: string };
};
const getConversion = (id: string, key = ctx.a.live) => call(ctx.app, 'GET', `/v1/conversions/${id}`, { key });

describe('1. a standard event name in another case is the standard event', () => {
  it('stores "purchase" as Purchase: counted as revenue, deduplicated with Purchase', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const res = await track(conversionBody(storeId, { eventType: 'purchase', orderId: 'lower-1', eventValue: 20 }));
    expect(res.status).toBe(200);
    expect(res.body.data.eventType).toBe('Purchase');
    const got = await getConversion(res.body.data.conversionId);
    expect(got.body.data.eventType).toBe('Purchase');

    const again = await track(conversionBody(storeId, { eventType: 'PURCHASE', orderId: 'lower-1', eventValue: 20 }));
    expect(again.body.data).toMatchObject({ conversionId: res.body.data.conversionId, duplicate: true });

    const metrics = await call(ctx.app, 'GET', `/v1/analytics/metrics?storeId=${storeId}`, { key: ctx.a.live });
    expect(metrics.body.data).toMatchObject({ totalConversions: 1, totalRevenue: 20 });

    const listed = await call(ctx.app, 'GET', `/v1/conversions?storeId=${storeId}&eventType=purchase`, { key: ctx.a.live });
    expect(listed.body.data.conversions.map((c: { eventType: string }) => c.eventType)).toEqual(['Purchase']);
  });

  it.each([
    ['addtocart', 'AddToCart'],
    ['completeregistration', 'CompleteRegistration'],
    ['LEAD', 'Lead'],
    ['startTrial', 'StartTrial'],
    ['initiatecheckout', 'InitiateCheckout'],
    ['subscribe', 'Subscribe'],
  ])('%s → %s', async (given, standard) => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const res = await track(conversionBody(storeId, { eventType: given }));
    expect(res.body.data.eventType).toBe(standard);
  });

  it('keeps custom names that only resemble a standard one', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    for (const custom of ['add_to_cart', 'signup', 'Purchased']) {
      const res = await track(conversionBody(storeId, { eventType: custom }));
      expect(res.body.data.eventType).toBe(custom);
    }
  });
});

describe('2. errors that name the fix', () => {
  it('an unknown store field names the closest known one', async () => {
    const res = await call(ctx.app, 'POST', '/v1/stores', { key: ctx.a.live, body: storeBody({ timeZone: 'UTC' }) });
    const error = expectError(res, 400, 'invalid_request');
    expect(error.message).toBe('Unknown field timeZone: did you mean timezone?');
    expect(error.details).toEqual({ field: 'timeZone', reason: 'unknown_field', suggestion: 'timezone' });
  });

  it('on PATCH, in ad spend entries (with the path), and in query strings too', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const patch = await call(ctx.app, 'PATCH', `/v1/stores/${storeId}`, {
      key: ctx.a.live,
      body: { attribution_window_days: 14 },
    });
    expect(expectError(patch, 400, 'invalid_request').details).toMatchObject({
      field: 'attribution_window_days',
      suggestion: 'attributionWindowDays',
    });
    const misspelt = await call(ctx.app, 'PATCH', `/v1/stores/${storeId}`, { key: ctx.a.live, body: { minConfidense: 40 } });
    expect(expectError(misspelt, 400, 'invalid_request').message).toBe(
      'Unknown field minConfidense: did you mean minConfidence?',
    );

    const spend = await call(ctx.app, 'POST', `/v1/stores/${storeId}/ad-spend`, {
      key: ctx.a.live,
      body: { entries: [{ date: '2026-01-01', amount: 1, currency: 'USD', campaignID: 'c1' }] },
    });
    const spendError = expectError(spend, 400, 'invalid_request');
    expect(spendError.details).toEqual({
      field: 'entries[0].campaignID',
      reason: 'unknown_field',
      suggestion: 'entries[0].campaignId',
    });
    expect(spendError.message).toBe('Unknown field entries[0].campaignID: did you mean entries[0].campaignId?');

    const query = await call(ctx.app, 'GET', `/v1/stores/${storeId}/ad-spend?startdate=2026-01-01`, { key: ctx.a.live });
    expect(expectError(query, 400, 'invalid_request').message).toBe('Unknown parameter startdate: did you mean startDate?');
  });

  it('a name close to nothing gets no suggestion', async () => {
    const res = await call(ctx.app, 'POST', '/v1/stores', { key: ctx.a.live, body: storeBody({ colour: 'blue' }) });
    const error = expectError(res, 400, 'invalid_request');
    expect(error.details).toEqual({ field: 'colour', reason: 'unknown_field' });
    expect(error.message).toBe('Unknown field colour');
  });

  it('date format errors say the format', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const metrics = await call(ctx.app, 'GET', `/v1/analytics/metrics?storeId=${storeId}&startDate=01/02/2026`, {
      key: ctx.a.live,
    });
    const error = expectError(metrics, 400, 'invalid_request');
    expect(error.message).toBe('startDate must be a date in YYYY-MM-DD format');
    expect(error.details).toMatchObject({ field: 'startDate', reason: 'invalid_format' });

    const list = await call(ctx.app, 'GET', '/v1/conversions?endDate=2026-1-2', { key: ctx.a.live });
    expect(expectError(list, 400, 'invalid_request').message).toBe('endDate must be a date in YYYY-MM-DD format');

    const spend = await call(ctx.app, 'POST', `/v1/stores/${storeId}/ad-spend`, {
      key: ctx.a.live,
      body: { entries: [{ date: '21.11.2026', amount: 1, currency: 'USD' }] },
    });
    expect(expectError(spend, 400, 'invalid_request').message).toBe('entries[0].date must be a date in YYYY-MM-DD format');
  });
});

describe('3. a legacy time zone alias is refused with the zone to use', () => {
  it.each([
    ['US/Eastern', 'America/New_York', 'US/Eastern is a legacy alias: use America/New_York'],
    ['GB', 'Europe/London', 'GB is a legacy alias: use Europe/London'],
    ['EST5EDT', 'America/New_York', 'EST5EDT is a legacy alias: use America/New_York'],
  ])('%s → use %s', async (given, suggestion, message) => {
    const res = await call(ctx.app, 'POST', '/v1/stores', { key: ctx.a.live, body: storeBody({ timezone: given }) });
    const error = expectError(res, 400, 'invalid_request');
    expect(error.message).toBe(message);
    expect(error.details).toEqual({ field: 'timezone', reason: 'legacy_alias', suggestion });
  });

  it('EST, a fixed offset, names both the region and the fixed-offset zone', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const res = await call(ctx.app, 'PATCH', `/v1/stores/${storeId}`, { key: ctx.a.live, body: { timezone: 'EST' } });
    const error = expectError(res, 400, 'invalid_request');
    expect(error.details).toEqual({ field: 'timezone', reason: 'legacy_alias', suggestion: 'America/New_York' });
    expect(error.message).toContain('America/New_York');
    expect(error.message).toContain('America/Panama');
    const store = await call(ctx.app, 'GET', `/v1/stores/${storeId}`, { key: ctx.a.live });
    expect(store.body.data.timezone).toBe('UTC');
  });

  it.each([
    ['America/New_York', 'America/New_York'],
    ['america/new_york', 'America/New_York'],
    ['UTC', 'UTC'],
    ['Etc/UTC', 'UTC'],
    ['Asia/Kolkata', 'Asia/Kolkata'],
    // The spelling browsers report for the device's zone is the same zone.
    ['Asia/Calcutta', 'Asia/Kolkata'],
    ['Europe/Kyiv', 'Europe/Kyiv'],
  ])('accepts %s (stored as %s)', async (given, stored) => {
    const res = await call(ctx.app, 'POST', '/v1/stores', { key: ctx.a.live, body: storeBody({ timezone: given }) });
    expect(res.status).toBe(201);
    expect(res.body.data.timezone).toBe(stored);
  });
});

describe('4. ad spend: one upsert key twice in a batch', () => {
  it('is refused, naming both entries, and nothing is stored', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const entry = (overrides: Record<string, unknown>) => ({ date: '2026-01-05', amount: 10, currency: 'USD', ...overrides });
    const res = await call(ctx.app, 'POST', `/v1/stores/${storeId}/ad-spend`, {
      key: ctx.a.live,
      body: {
        entries: [
          entry({ campaignId: 'a' }),
          entry({ campaignId: 'b' }),
          entry({ campaignId: 'b', platform: 'google' }),
          entry({ campaignId: 'b', amount: 12 }),
        ],
      },
    });
    const error = expectError(res, 400, 'invalid_request');
    expect(error.details).toEqual({ field: 'entries[3]', reason: 'duplicate_entry', duplicateOf: 'entries[1]' });
    expect(error.message).toMatch(/^entries\[3\] duplicates entries\[1\]/);
    const listed = await call(ctx.app, 'GET', `/v1/stores/${storeId}/ad-spend?startDate=2026-01-01&endDate=2026-01-31`, {
      key: ctx.a.live,
    });
    expect(listed.body.data.entries).toEqual([]);
  });

  it('entries without a campaignId share the key too', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const entry = { date: '2026-01-05', amount: 10, currency: 'USD' };
    const res = await call(ctx.app, 'POST', `/v1/stores/${storeId}/ad-spend`, {
      key: ctx.a.live,
      body: { entries: [entry, { ...entry, platform: 'meta', amount: 11 }] },
    });
    expect(expectError(res, 400, 'invalid_request').details).toMatchObject({ field: 'entries[1]', duplicateOf: 'entries[0]' });
  });
});

describe('5. a duplicate that differs from the original says so', () => {
  it('names the differing fields, keeps the original', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const first = await track(conversionBody(storeId, { orderId: 'dup-1', eventValue: 10, currency: 'USD' }));
    const same = await track(conversionBody(storeId, { orderId: 'dup-1', eventValue: 10, currency: 'usd' }));
    expect(same.body.data.duplicate).toBe(true);
    expect('differences' in same.body.data).toBe(false);

    const differing = await track(conversionBody(storeId, { orderId: 'dup-1', eventValue: 12.5, currency: 'EUR' }));
    expect(differing.status).toBe(200);
    expect(differing.body.data).toMatchObject({
      conversionId: first.body.data.conversionId,
      duplicate: true,
      differences: ['eventValue', 'currency'],
    });
    const got = await getConversion(first.body.data.conversionId);
    expect(got.body.data).toMatchObject({ eventValue: 10, currency: 'USD' });

    const customer = await track(
      conversionBody(storeId, { orderId: 'dup-1', eventValue: 10, currency: 'USD', customerData: { email: 'a@example.com' } }),
    );
    expect(customer.body.data.differences).toEqual(['customerData']);
  });
});

describe('5. the differing duplicate is logged once, without values', () => {
  let lines: string[];
  let app: Awaited<ReturnType<typeof buildApp>>;
  let testDb: TestDatabase;
  let key: string;
  beforeAll(async () => {
    lines = [];
    const stream = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const dataDir = tempDir();
    testDb = await openTestDatabase(dataDir);
    await testDb.database.migrate();
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'info', CAPI_SYNC_WAIT_MS: '0' });
    app = await buildApp({ config, database: testDb.database, logger: { level: 'info', redact: LOG_REDACT, stream } });
    key = (await createAccount(testDb.database, { email: 'first-hour@example.com' })).keys.live;
  });
  afterAll(async () => {
    await app.close();
    await testDb.drop();
  });

  it('one warn line with the conversion id and the field names', async () => {
    const storeId = await makeStore(app, key);
    const body = conversionBody(storeId, { orderId: 'dup-log', eventValue: 31.17 });
    const first = await call(app, 'POST', '/v1/track/conversion', { key, body });
    await call(app, 'POST', '/v1/track/conversion', { key, body: { ...body, eventValue: 98.76 } });
    const warnings = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'duplicate conversion differs from the original');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      level: 40,
      conversionId: first.body.data.conversionId,
      differences: ['eventValue'],
    });
    expect(JSON.stringify(warnings[0])).not.toContain('98.76');
    expect(JSON.stringify(warnings[0])).not.toContain('31.17');
  });
});

describe('6. an unattributed conversion says why', () => {
  it('no candidates', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const res = await track(conversionBody(storeId, { fingerprint: 'nobody' }));
    const got = await getConversion(res.body.data.conversionId);
    expect(got.body.data.attribution).toMatchObject({
      signal: null,
      score: null,
      touchpoints: [],
      reason: 'no_candidates',
      minConfidence: 50,
    });
    expect(got.body.data.attribution.message).toMatch(/^No candidate click/);
    expect('bestCandidate' in got.body.data.attribution).toBe(false);
  });

  it('the best candidate scored below minConfidence: its signal and score are shown', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const c = await click(storeId, { fingerprint: 'fp-weak', timestamp: iso(Date.now() - 2 * DAY) }); // a device class: weak
    const res = await track(conversionBody(storeId, { fingerprint: 'fp-weak' }));
    expect(res.body.data.attributed).toBe(false);
    const attribution = (await getConversion(res.body.data.conversionId)).body.data.attribution;
    const score = attribution.bestCandidate.score; // below 50: below_min_confidence says so
    expect(attribution).toMatchObject({
      reason: 'below_min_confidence',
      minConfidence: 50,
      bestCandidate: { clickId: c.clickId, fbclid: c.fbclid, signal: 'fingerprint', score },
    });
    expect(attribution.message).toBe(
      `The best candidate, click ${c.clickId} (signal fingerprint, score ${score}), scored below the store's minConfidence of 50`,
    );
  });

  it('a click that arrived later: re-attribution would attribute it', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const res = await track(conversionBody(storeId, { visitorId: 'wt.late', timestamp: iso(Date.now() - DAY) }));
    const c = await click(storeId, { visitorId: 'wt.late', timestamp: iso(Date.now() - 2 * DAY) });
    const attribution = (await getConversion(res.body.data.conversionId)).body.data.attribution;
    expect(attribution).toMatchObject({ reason: 'reattribution_available', bestCandidate: { clickId: c.clickId } });
    const again = await call(ctx.app, 'POST', `/v1/conversions/${res.body.data.conversionId}/reattribute`, { key: ctx.a.live });
    expect(again.body.data.attributed).toBe(true);
    expect('reason' in again.body.data.attribution).toBe(false);
  });

  it('an attributed conversion carries no reason', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const c = await click(storeId);
    const res = await track(conversionBody(storeId, { fbclid: c.fbclid }));
    const attribution = (await getConversion(res.body.data.conversionId)).body.data.attribution;
    expect(attribution.signal).toBe('explicit');
    for (const field of ['reason', 'message', 'bestCandidate', 'minConfidence']) expect(field in attribution).toBe(false);
  });
});

describe('7. an id of the other mode', () => {
  it('a test key reading a live conversion or click is told where it is, without its data', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const c = await click(storeId);
    const conversion = await track(conversionBody(storeId, { orderId: 'secret-order-77' }));
    const id = conversion.body.data.conversionId;

    const res = await getConversion(id, ctx.a.test);
    const error = expectError(res, 404, 'not_found');
    expect(error.message).toMatch(new RegExp(`^No conversion ${id} in test mode: a conversion with that id exists in live mode`));
    expect(error.details).toEqual({ field: 'id', reason: 'exists_in_other_mode', mode: 'live' });
    expect(JSON.stringify(res.body)).not.toContain('secret-order-77');

    const clickRes = await call(ctx.app, 'GET', `/v1/clicks/${c.clickId}`, { key: ctx.a.test });
    expect(expectError(clickRes, 404, 'not_found').details).toMatchObject({ mode: 'live' });

    for (const action of ['reattribute', 'resend']) {
      const post = await call(ctx.app, 'POST', `/v1/conversions/${id}/${action}`, { key: ctx.a.test });
      expect(expectError(post, 404, 'not_found').details).toMatchObject({ reason: 'exists_in_other_mode' });
    }
  });

  it('and the reverse: a live key reading a test conversion', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const conversion = await track(conversionBody(storeId), ctx.a.test);
    const error = expectError(await getConversion(conversion.body.data.conversionId, ctx.a.live), 404, 'not_found');
    expect(error.details).toMatchObject({ mode: 'test' });
  });

  it("another account's id stays the plain 404", async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const conversion = await track(conversionBody(storeId));
    const id = conversion.body.data.conversionId;
    for (const key of [ctx.b.live, ctx.b.test]) {
      const error = expectError(await getConversion(id, key), 404, 'not_found');
      expect(error.message).toBe(`No conversion ${id}`);
      expect(error.details).toBeUndefined();
    }
  });
});

describe('8. a skipped conversion says why it was not forwarded', () => {
  it('test mode without capiTestEventCode → test_event_code_missing; a resend once it is set clears it', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live, { pixelId: '123456789012345', capiAccessToken: 'EAAB-token' });
    const res = await track(conversionBody(storeId), ctx.a.test);
    expect(res.body.data.capiSent).toBe(false);
    const got = await getConversion(res.body.data.conversionId, ctx.a.test);
    expect(got.body.data.capi).toMatchObject({ status: 'skipped', attempts: 0, reason: 'test_event_code_missing' });
    expect(got.body.data.capi.message).toContain('capiTestEventCode');
    expect('lastError' in got.body.data.capi).toBe(false);

    const listed = await call(ctx.app, 'GET', `/v1/conversions?storeId=${storeId}`, { key: ctx.a.test });
    expect(listed.body.data.conversions[0].capi.reason).toBe('test_event_code_missing');

    await call(ctx.app, 'PATCH', `/v1/stores/${storeId}`, { key: ctx.a.live, body: { capiTestEventCode: 'TEST123' } });
    const resent = await call(ctx.app, 'POST', `/v1/conversions/${res.body.data.conversionId}/resend`, { key: ctx.a.test });
    expect(resent.status).toBe(200);
    expect(resent.body.data.capi.status).not.toBe('skipped');
    expect('reason' in resent.body.data.capi).toBe(false);
    const after = await getConversion(res.body.data.conversionId, ctx.a.test);
    expect(after.body.data.capi.lastError ?? '').not.toBe('test_event_code_missing');
  });

  it('a store without forwarding → not_configured; an event older than 7 days → expired', async () => {
    const plain = await makeStore(ctx.app, ctx.a.live);
    const live = await track(conversionBody(plain));
    expect((await getConversion(live.body.data.conversionId)).body.data.capi).toMatchObject({
      status: 'skipped',
      reason: 'not_configured',
    });

    const configured = await makeStore(ctx.app, ctx.a.live, { pixelId: '123456789012345', capiAccessToken: 'EAAB-token' });
    const old = await track(conversionBody(configured, { timestamp: iso(Date.now() - 8 * DAY) }));
    expect((await getConversion(old.body.data.conversionId)).body.data.capi).toMatchObject({
      status: 'skipped',
      reason: 'expired',
    });
  });
});
