import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, clickBody, conversionBody, createTestContext, expectError, makeStore, type TestContext } from '../helpers.js';

// The signal ladder end to end: what each signal attributes, with which score, and how a
// conversion explains itself and can be re-attributed.
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();
const IP = '198.51.100.23';
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36';

describe('attribution signals', () => {
  let ctx: TestContext;
  let key: string;
  beforeAll(async () => {
    ctx = await createTestContext();
    key = ctx.a.live;
  });
  afterAll(async () => ctx.close());

  const click = async (storeId: string, overrides: Record<string, unknown>) => {
    const res = await call(ctx.app, 'POST', '/v1/track/click', {
      key,
      body: clickBody(storeId, { ipAddress: undefined, userAgent: undefined, ...overrides }),
    });
    expect(res.status).toBe(200);
    return res.body.data.clickId as string;
  };
  const convert = async (storeId: string, overrides: Record<string, unknown>) => {
    const res = await call(ctx.app, 'POST', '/v1/track/conversion', { key, body: conversionBody(storeId, overrides) });
    expect(res.status).toBe(200);
    return res.body.data;
  };
  const explain = async (conversionId: string) => {
    const res = await call(ctx.app, 'GET', `/v1/conversions/${conversionId}`, { key });
    expect(res.status).toBe(200);
    return res.body.data.attribution;
  };

  it('fingerprint: scores 95 decaying to 80 over the window (91 two days into 7)', async () => {
    const storeId = await makeStore(ctx.app, key);
    const now = Date.now();
    const clickId = await click(storeId, { fingerprint: 'fp-visitor-1', timestamp: iso(now - 2 * DAY) });
    const result = await convert(storeId, { fingerprint: 'fp-visitor-1', timestamp: iso(now) });
    expect(result.attributedTo).toEqual({ clickId, fbclid: expect.any(String), confidenceScore: 91 });
    expect(await explain(result.conversionId)).toMatchObject({ signal: 'fingerprint', score: 91 });
  });

  it('IP + user agent: the derived fingerprint sha256(ip|ua), or both fields equal', async () => {
    const storeId = await makeStore(ctx.app, key);
    const now = Date.now();
    const clickId = await click(storeId, { ipAddress: IP, userAgent: UA, timestamp: iso(now - 60_000) });
    const derived = createHash('sha256').update(`${IP}|${UA}`).digest('hex');
    const byFingerprint = await convert(storeId, { fingerprint: derived, timestamp: iso(now) });
    expect(byFingerprint.attributedTo).toMatchObject({ clickId, confidenceScore: 79 });
    const byFields = await convert(storeId, { ipAddress: IP, userAgent: UA, timestamp: iso(now) });
    expect(byFields.attributedTo).toMatchObject({ clickId, confidenceScore: 79 });
    expect(await explain(byFields.conversionId)).toMatchObject({ signal: 'ip_user_agent' });
  });

  it('identity: a later conversion with the same email follows an earlier attributed one', async () => {
    const storeId = await makeStore(ctx.app, key);
    const now = Date.now();
    const clickId = await click(storeId, { fbclid: 'identity-click', timestamp: iso(now - DAY) });
    const first = await convert(storeId, {
      fbclid: 'identity-click',
      customerData: { email: 'Buyer@Example.com' },
      timestamp: iso(now - DAY / 2),
    });
    expect(first.attributedTo.confidenceScore).toBe(100);
    const second = await convert(storeId, { customerData: { email: ' buyer@example.com ' }, timestamp: iso(now) });
    expect(second.attributedTo.clickId).toBe(clickId);
    expect(second.attributedTo.confidenceScore).toBeGreaterThanOrEqual(50);
    expect(second.attributedTo.confidenceScore).toBeLessThanOrEqual(64);
    expect(await explain(second.conversionId)).toMatchObject({ signal: 'identity' });
    // Same email in another store links nothing.
    const otherStore = await makeStore(ctx.app, key);
    expect((await convert(otherStore, { customerData: { email: 'buyer@example.com' } })).attributed).toBe(false);
  });

  it('identity at the window edge: an earlier conversion up to 5 minutes before its click still links it', async () => {
    // The click is at the edge of the second conversion's 7-day window; the first conversion
    // named it 4 minutes before the click came (a click may follow its conversion by 5), so it
    // is earlier than the window itself. The lookup of earlier conversions must reach it.
    const storeId = await makeStore(ctx.app, key);
    const now = Date.now();
    const clickTime = now - 7 * DAY + 30_000;
    const clickId = await click(storeId, { fbclid: 'edge-click', timestamp: iso(clickTime) });
    const first = await convert(storeId, {
      fbclid: 'edge-click',
      customerData: { email: 'edge@example.com' },
      timestamp: iso(clickTime - 4 * 60_000),
    });
    expect(first.attributedTo).toMatchObject({ clickId, confidenceScore: 100 });
    const second = await convert(storeId, { customerData: { email: 'edge@example.com' }, timestamp: iso(now) });
    // Identity scores 64 down to 50 over the window: 64 − ⌊14 × (7 days − 30 s) ÷ 7 days⌋ = 51.
    expect(second.attributedTo).toMatchObject({ clickId, confidenceScore: 51 });
    expect(await explain(second.conversionId)).toMatchObject({ signal: 'identity' });
  });

  it('IP only: below the default threshold of 50, attributed when the store accepts 30', async () => {
    const strict = await makeStore(ctx.app, key);
    await click(strict, { ipAddress: IP });
    expect((await convert(strict, { ipAddress: IP })).attributed).toBe(false);
    const lenient = await makeStore(ctx.app, key, { minConfidence: 30 });
    const clickId = await click(lenient, { ipAddress: IP, userAgent: 'Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X)' });
    const result = await convert(lenient, { ipAddress: IP, userAgent: UA });
    expect(result.attributedTo).toMatchObject({ clickId, confidenceScore: 49 });
  });

  it('a stronger signal on an older click beats a weaker one on a newer click; both are touchpoints', async () => {
    const storeId = await makeStore(ctx.app, key);
    const now = Date.now();
    const older = await click(storeId, { fingerprint: 'fp-strong', timestamp: iso(now - 6 * DAY) });
    const newer = await click(storeId, { ipAddress: IP, userAgent: UA, timestamp: iso(now - 60_000) });
    const result = await convert(storeId, { fingerprint: 'fp-strong', ipAddress: IP, userAgent: UA, timestamp: iso(now) });
    expect(result.attributedTo.clickId).toBe(older);
    const explanation = await explain(result.conversionId);
    expect(explanation.touchpoints.map((t: { clickId: string; signal: string }) => [t.clickId, t.signal])).toEqual([
      [older, 'fingerprint'],
      [newer, 'ip_user_agent'],
    ]);
    expect(explanation.touchpoints[0].score).toBe(explanation.score);
  });

  it('never attributes to a bot click or a click outside the window', async () => {
    const storeId = await makeStore(ctx.app, key);
    const now = Date.now();
    await click(storeId, { fingerprint: 'fp-bot', userAgent: 'Googlebot/2.1 (+http://www.google.com/bot.html)' });
    await click(storeId, { fingerprint: 'fp-old', timestamp: iso(now - 8 * DAY) });
    expect((await convert(storeId, { fingerprint: 'fp-bot' })).attributed).toBe(false);
    const old = await convert(storeId, { fingerprint: 'fp-old', timestamp: iso(now) });
    expect(old.attributed).toBe(false);
    // Neither the bot's click nor one outside the window is even a candidate.
    expect(await explain(old.conversionId)).toEqual({
      signal: null,
      score: null,
      touchpoints: [],
      reason: 'no_candidates',
      message: expect.stringMatching(/^No candidate click/),
      minConfidence: 50,
    });
  });
});

describe('POST /v1/conversions/:id/reattribute', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(async () => ctx.close());

  it('credits a click that arrived after its conversion, and is idempotent', async () => {
    const key = ctx.a.live;
    const storeId = await makeStore(ctx.app, key);
    const now = Date.now();
    const conversion = await call(ctx.app, 'POST', '/v1/track/conversion', {
      key,
      body: conversionBody(storeId, { fingerprint: 'late-click', timestamp: iso(now - 60_000) }),
    });
    expect(conversion.body.data.attributed).toBe(false);
    const id = conversion.body.data.conversionId;
    const late = await call(ctx.app, 'POST', '/v1/track/click', {
      key,
      body: clickBody(storeId, { fingerprint: 'late-click', timestamp: iso(now - 120_000) }),
    });
    const first = await call(ctx.app, 'POST', `/v1/conversions/${id}/reattribute`, { key });
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({
      conversionId: id,
      attributed: true,
      attributedTo: { clickId: late.body.data.clickId, confidenceScore: 95 },
      attribution: { signal: 'fingerprint', score: 95 },
    });
    const again = await call(ctx.app, 'POST', `/v1/conversions/${id}/reattribute`, { key });
    expect(again.body.data.attributedTo).toEqual(first.body.data.attributedTo);
    expect(again.body.data.attribution).toEqual(first.body.data.attribution);
    // The stored result changed too, and metrics count it as attributed.
    const stored = await call(ctx.app, 'GET', `/v1/conversions/${id}`, { key });
    expect(stored.body.data.attributed).toBe(true);
    const metrics = await call(ctx.app, 'GET', `/v1/analytics/metrics?storeId=${storeId}`, { key });
    expect(metrics.body.data.attributedConversions).toBe(1);
  });

  it('never changes a result that already had confidence 100', async () => {
    const key = ctx.a.live;
    const storeId = await makeStore(ctx.app, key);
    const clickId = (await call(ctx.app, 'POST', '/v1/track/click', { key, body: clickBody(storeId, { fbclid: 'explicit-1' }) }))
      .body.data.clickId;
    const conv = await call(ctx.app, 'POST', '/v1/track/conversion', {
      key,
      body: conversionBody(storeId, { fbclid: 'explicit-1', fingerprint: 'fp-x' }),
    });
    await call(ctx.app, 'POST', '/v1/track/click', { key, body: clickBody(storeId, { fingerprint: 'fp-x' }) });
    const res = await call(ctx.app, 'POST', `/v1/conversions/${conv.body.data.conversionId}/reattribute`, { key });
    expect(res.body.data.attributedTo).toMatchObject({ clickId, confidenceScore: 100 });
    expect(res.body.data.attribution.touchpoints.map((t: { clickId: string }) => t.clickId)).toEqual([clickId]);
  });

  it('answers not_found for an unknown id', async () => {
    expectError(await call(ctx.app, 'POST', '/v1/conversions/conv_unknown/reattribute', { key: ctx.a.live }), 404, 'not_found');
  });
});
