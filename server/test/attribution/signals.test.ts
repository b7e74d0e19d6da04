import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Evidence } from '../../src/attribution/model.js';
import { confidenceOf, SAME_BROWSER_CONFIDENCE, weightOf } from '../../src/attribution/probability.js';
import { call, clickBody, conversionBody, createTestContext, expectError, makeStore, type TestContext } from '../helpers.js';

// The evidence of api.md §13 end to end: what each piece attributes, with which confidence (the
// model's own formula, so the test holds whatever the fitted constants), how the store's own data
// makes shared evidence count for less, and how a conversion explains itself and is re-attributed.
const DAY = 86_400_000;
const MINUTE = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();
const IP = '198.51.100.23';
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36';
const OTHER_UA =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

/** The confidence of a lone candidate with this evidence and click age (probability.ts). */
const expected = (evidence: Evidence[], ageMs: number, ipShared = 1) => {
  const w = weightOf(evidence, ipShared, ageMs);
  return confidenceOf(w / (1 + w));
};

describe('attribution evidence (api.md §13)', () => {
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

  it("same browser: the conversion's visitorId, fbp or ttp equals the click's (at least 90)", async () => {
    const storeId = await makeStore(ctx.app, key);
    const now = Date.now();
    for (const id of [{ visitorId: 'wt.visitor-1' }, { fbp: 'fb.1.1700000000000.123456789' }, { ttp: 'ttp-browser-1' }]) {
      const clickId = await click(storeId, { ...id, timestamp: iso(now - 2 * DAY) });
      const result = await convert(storeId, { ...id, timestamp: iso(now) });
      expect(result.attributedTo).toEqual({
        clickId,
        fbclid: expect.any(String),
        clickIds: { fbclid: expect.any(String) },
        channel: 'meta',
        confidenceScore: SAME_BROWSER_CONFIDENCE,
      });
      expect(await explain(result.conversionId)).toMatchObject({
        signal: 'same_browser',
        score: SAME_BROWSER_CONFIDENCE,
        candidates: [{ clickId, confidence: SAME_BROWSER_CONFIDENCE, evidence: [{ kind: 'same_browser', sharedBy: 1 }] }],
      });
    }
    expect(SAME_BROWSER_CONFIDENCE).toBeGreaterThanOrEqual(90);
  });

  it('the click and conversion answers carry visitorId', async () => {
    const storeId = await makeStore(ctx.app, key);
    const clickId = await click(storeId, { visitorId: 'wt.shown' });
    const shown = await call(ctx.app, 'GET', `/v1/clicks/${clickId}`, { key });
    expect(shown.body.data.visitorId).toBe('wt.shown');
    const first = await convert(storeId, { orderId: 'vid-1', visitorId: 'wt.shown' });
    const again = await convert(storeId, { orderId: 'vid-1', visitorId: 'wt.other' });
    expect(again).toMatchObject({ duplicate: true, conversionId: first.conversionId, differences: ['visitorId'] });
    const tooLong = await call(ctx.app, 'POST', '/v1/track/click', {
      key,
      body: clickBody(storeId, { visitorId: 'v'.repeat(129) }),
    });
    expectError(tooLong, 400, 'invalid_request');
    expect(tooLong.body.error.details.field).toBe('visitorId');
  });

  it('IP + user agent: the derived fingerprint sha256(ip|ua), or both fields equal', async () => {
    const storeId = await makeStore(ctx.app, key);
    const now = Date.now();
    const clickId = await click(storeId, { ipAddress: IP, userAgent: UA, timestamp: iso(now - MINUTE) });
    const derived = createHash('sha256').update(`${IP}|${UA}`).digest('hex');
    const byFingerprint = await convert(storeId, { fingerprint: derived, timestamp: iso(now) });
    const alone = expected([{ kind: 'ip_user_agent', sharedBy: 1 }], MINUTE);
    expect(byFingerprint).toMatchObject({ attributed: alone >= 50 });
    expect((await explain(byFingerprint.conversionId)).candidates).toEqual([
      expect.objectContaining({ clickId, confidence: alone, evidence: [{ kind: 'ip_user_agent', sharedBy: 1 }] }),
    ]);
    const byFields = await convert(storeId, { ipAddress: IP, userAgent: UA, timestamp: iso(now) });
    const both = [
      { kind: 'ip_user_agent', sharedBy: 1 },
      { kind: 'ip', sharedBy: 1 },
    ] as Evidence[];
    expect((await explain(byFields.conversionId)).candidates[0]).toMatchObject({
      clickId,
      confidence: expected(both, MINUTE),
      evidence: both,
    });
  });

  it('IPv6 is compared by its /64: the same phone with a new interface id', async () => {
    const storeId = await makeStore(ctx.app, key);
    const now = Date.now();
    const clickId = await click(storeId, {
      ipAddress: '2001:db8:7:9:1111:2222:3333:4444',
      userAgent: UA,
      timestamp: iso(now - DAY),
    });
    const result = await convert(storeId, { ipAddress: '2001:db8:7:9:aaaa::1', userAgent: UA, timestamp: iso(now) });
    expect((await explain(result.conversionId)).candidates[0]).toMatchObject({
      clickId,
      evidence: [
        { kind: 'ip_user_agent', sharedBy: 1 },
        { kind: 'ip', sharedBy: 1 },
      ],
    });
    const elsewhere = await convert(storeId, { ipAddress: '2001:db8:7:10::1', userAgent: UA, timestamp: iso(now) });
    expect((await explain(elsewhere.conversionId)).candidates).toEqual([]);
  });

  it("evidence shared in the store's data counts for less: browsers on one IP are counted as clicks arrive", async () => {
    const storeId = await makeStore(ctx.app, key);
    const now = Date.now();
    const clickId = await click(storeId, { ipAddress: IP, userAgent: UA, visitorId: 'wt.mine', timestamp: iso(now - 2 * DAY) });
    const alone = await convert(storeId, { ipAddress: IP, userAgent: OTHER_UA, timestamp: iso(now) });
    const lone = (await explain(alone.conversionId)).candidates[0];
    expect(lone).toMatchObject({ clickId, evidence: [{ kind: 'ip', sharedBy: 1 }] });
    // Three more browsers click from that address (an office, a carrier's NAT), one of them twice.
    for (const visitorId of ['wt.a', 'wt.b', 'wt.c', 'wt.c']) {
      // (earlier the same day: the same age bucket, so the tie goes to the most recent click, ours)
      await click(storeId, { ipAddress: IP, userAgent: UA, visitorId, timestamp: iso(now - 2 * DAY - 60 * MINUTE) });
    }
    const shared = await convert(storeId, { ipAddress: IP, userAgent: OTHER_UA, timestamp: iso(now) });
    const candidates = (await explain(shared.conversionId)).candidates;
    expect(candidates).toHaveLength(4);
    for (const c of candidates) expect(c.evidence).toEqual([{ kind: 'ip', sharedBy: 4 }]);
    expect(candidates[0]).toMatchObject({ clickId, confidence: expect.any(Number) });
    expect(candidates[0].confidence).toBeLessThanOrEqual(lone.confidence);
    for (const c of candidates) expect(c.confidence).toBeLessThanOrEqual(25); // 100 ÷ 4
  });

  it('identity: a later conversion with the same email, from any device, follows an earlier one', async () => {
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
    const score = expected([{ kind: 'identity', sharedBy: 1 }], DAY);
    expect(second).toMatchObject({ attributed: score >= 50 });
    expect((await explain(second.conversionId)).candidates[0]).toMatchObject({
      clickId,
      confidence: score,
      evidence: [{ kind: 'identity', sharedBy: 1 }],
    });
    // Same email in another store links nothing.
    const otherStore = await makeStore(ctx.app, key);
    expect((await convert(otherStore, { customerData: { email: 'buyer@example.com' } })).attributed).toBe(false);
  });

  it("identity through a browser: an earlier conversion's visitorId links that browser's later clicks", async () => {
    const storeId = await makeStore(ctx.app, key);
    const now = Date.now();
    // An order from the phone without any click, then an ad click on that phone, then an order from a laptop.
    await convert(storeId, { visitorId: 'wt.phone', customerData: { phone: '+1 555 010 2030' }, timestamp: iso(now - 3 * DAY) });
    const clickId = await click(storeId, { visitorId: 'wt.phone', timestamp: iso(now - 2 * DAY) });
    const laptop = await convert(storeId, {
      visitorId: 'wt.laptop',
      customerData: { phone: '+15550102030' },
      timestamp: iso(now),
    });
    expect((await explain(laptop.conversionId)).candidates[0]).toMatchObject({
      clickId,
      evidence: [{ kind: 'identity', sharedBy: 1 }],
      confidence: expected([{ kind: 'identity', sharedBy: 1 }], 2 * DAY),
    });
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
      timestamp: iso(clickTime - 4 * MINUTE),
    });
    expect(first.attributedTo).toMatchObject({ clickId, confidenceScore: 100 });
    const second = await convert(storeId, { customerData: { email: 'edge@example.com' }, timestamp: iso(now) });
    expect((await explain(second.conversionId)).candidates[0]).toMatchObject({
      clickId,
      evidence: [{ kind: 'identity', sharedBy: 1 }],
      confidence: expected([{ kind: 'identity', sharedBy: 1 }], now - clickTime),
    });
  });

  it('IP only: attributed only at or above the store threshold', async () => {
    const score = expected([{ kind: 'ip', sharedBy: 1 }], MINUTE);
    for (const minConfidence of [score, score + 1]) {
      const storeId = await makeStore(ctx.app, key, { minConfidence });
      const clickId = await click(storeId, { ipAddress: IP, userAgent: OTHER_UA, timestamp: iso(Date.now() - MINUTE) });
      const result = await convert(storeId, { ipAddress: IP, userAgent: UA });
      expect(result.attributed).toBe(minConfidence === score);
      expect((await explain(result.conversionId)).candidates[0]).toMatchObject({ clickId, confidence: score });
    }
  });

  it("same-browser evidence on an older click beats IP + user agent on another browser's newer click", async () => {
    const storeId = await makeStore(ctx.app, key);
    const now = Date.now();
    const older = await click(storeId, { visitorId: 'wt.buyer', timestamp: iso(now - 6 * DAY) });
    const newer = await click(storeId, { ipAddress: IP, userAgent: UA, visitorId: 'wt.someone', timestamp: iso(now - MINUTE) });
    const result = await convert(storeId, { visitorId: 'wt.buyer', ipAddress: IP, userAgent: UA, timestamp: iso(now) });
    expect(result.attributedTo).toMatchObject({ clickId: older, confidenceScore: SAME_BROWSER_CONFIDENCE });
    const explanation = await explain(result.conversionId);
    // Touchpoints are the buyer's browser's clicks; the other browser is a runner-up with what same-browser evidence leaves.
    expect(explanation.touchpoints.map((t: { clickId: string }) => t.clickId)).toEqual([older]);
    expect(explanation.candidates.map((c: { clickId: string }) => c.clickId)).toEqual([older, newer]);
    expect(explanation.candidates[1].confidence).toBeLessThanOrEqual(100 - SAME_BROWSER_CONFIDENCE);
  });

  it('never attributes to a bot click or a click outside the window', async () => {
    const storeId = await makeStore(ctx.app, key);
    const now = Date.now();
    await click(storeId, { visitorId: 'wt.bot', userAgent: 'Googlebot/2.1 (+http://www.google.com/bot.html)' });
    await click(storeId, { visitorId: 'wt.old', timestamp: iso(now - 8 * DAY) });
    expect((await convert(storeId, { visitorId: 'wt.bot' })).attributed).toBe(false);
    const old = await convert(storeId, { visitorId: 'wt.old', timestamp: iso(now) });
    expect(old.attributed).toBe(false);
    // Neither the bot's click nor one outside the window is even a candidate.
    expect(await explain(old.conversionId)).toEqual({
      signal: null,
      score: null,
      touchpoints: [],
      candidates: [],
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
      body: conversionBody(storeId, { visitorId: 'wt.late', timestamp: iso(now - MINUTE) }),
    });
    expect(conversion.body.data.attributed).toBe(false);
    const id = conversion.body.data.conversionId;
    const late = await call(ctx.app, 'POST', '/v1/track/click', {
      key,
      body: clickBody(storeId, { visitorId: 'wt.late', timestamp: iso(now - 2 * MINUTE) }),
    });
    const first = await call(ctx.app, 'POST', `/v1/conversions/${id}/reattribute`, { key });
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({
      conversionId: id,
      attributed: true,
      attributedTo: { clickId: late.body.data.clickId, confidenceScore: SAME_BROWSER_CONFIDENCE },
      attribution: {
        signal: 'same_browser',
        score: SAME_BROWSER_CONFIDENCE,
        candidates: [{ clickId: late.body.data.clickId, evidence: [{ kind: 'same_browser', sharedBy: 1 }] }],
      },
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
      body: conversionBody(storeId, { fbclid: 'explicit-1', visitorId: 'wt.x' }),
    });
    await call(ctx.app, 'POST', '/v1/track/click', { key, body: clickBody(storeId, { visitorId: 'wt.x' }) });
    const res = await call(ctx.app, 'POST', `/v1/conversions/${conv.body.data.conversionId}/reattribute`, { key });
    expect(res.body.data.attributedTo).toMatchObject({ clickId, confidenceScore: 100 });
    expect(res.body.data.attribution.touchpoints.map((t: { clickId: string }) => t.clickId)).toEqual([clickId]);
  });

  it('answers not_found for an unknown id', async () => {
    expectError(await call(ctx.app, 'POST', '/v1/conversions/conv_unknown/reattribute', { key: ctx.a.live }), 404, 'not_found');
  });
});
