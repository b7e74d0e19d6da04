import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Attribution, Touchpoint } from '../../src/attribution/model.js';
import { MODELS } from '../../src/attribution/models.js';
import { applyReattribution } from '../../src/tracking/conversion-attribution.js';
import { addDays, analyticsApi, utcDaysAgo } from '../analytics/fixtures.js';
import { call, conversionBody, createTestContext, makeStore, type TestContext } from '../helpers.js';
import { Receiver } from '../webhooks/receiver.js';

// Re-attribution (issue 38 point 5) through the one domain function: the rollups move a
// conversion's revenue exactly once however often and however concurrently it is re-attributed
// (checked against a recomputation from the raw rows), match quality follows the new click, and
// `conversion.attributed` is delivered again with it.

let ctx: TestContext;
let receiver: Receiver;
const api = analyticsApi(() => ctx);
beforeAll(async () => {
  receiver = await Receiver.start();
  ctx = await createTestContext({
    env: { WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCALE: '0.00001' },
    webhooks: { pollMs: 20, ca: receiver.cert },
  });
});
afterAll(async () => {
  await ctx?.close();
  await receiver?.close();
});

interface Click {
  clickId: string;
  fbclid: string;
  time: number;
}

function touchpoint(click: Click, score: number, signal: Touchpoint['signal']): Touchpoint {
  return {
    clickId: click.clickId,
    fbclid: click.fbclid,
    signal,
    score,
    clickTime: click.time,
    evidence: [{ kind: signal, sharedBy: 1 }],
    browser: `b-${click.clickId}`,
  };
}

/** A result attributing to `winner` with `others` as the buyer's other touchpoints; no winner: not attributed. */
function result(winner: Click | undefined, others: Click[] = [], score = 80): Attribution {
  if (!winner) return { winner: null, touchpoints: [], candidates: [] };
  const first = touchpoint(winner, score, 'ip_user_agent');
  const rest = [...new Map(others.filter((o) => o.clickId !== winner.clickId).map((o) => [o.clickId, o])).values()];
  const touchpoints = [first, ...rest.map((o) => touchpoint(o, 40, 'ip'))];
  return { winner: first, touchpoints, candidates: touchpoints };
}

const ref = (conversionId: string) => ({ accountId: ctx.a.accountId, livemode: 1, conversionId });

/** A small deterministic generator (mulberry32): the test's sequence is the same on every run. */
function random(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function makeClicks(storeId: string, day: string, count: number, prefix: string): Promise<Click[]> {
  const clicks: Click[] = [];
  for (let i = 0; i < count; i++) {
    const fbclid = `${prefix}${i}`;
    const timestamp = `${day}T0${i % 6}:1${i % 10}:00Z`;
    const { clickId } = await api.click(storeId, fbclid, timestamp, { campaign_id: `camp-${i}`, utm_source: `src-${i % 3}` });
    clicks.push({ clickId, fbclid, time: Date.parse(timestamp) });
  }
  return clicks;
}

/** Everything the analytics answer for the store's range: metrics, and each model's breakdown by two dimensions. */
async function analytics(storeId: string, day: string) {
  const range = `storeId=${storeId}&startDate=${addDays(day, -1)}&endDate=${addDays(day, 1)}`;
  const metrics = await api.getOk(`/v1/analytics/metrics?${range}`);
  const breakdowns: Record<string, unknown> = {};
  for (const model of MODELS) {
    for (const by of ['campaign_id', 'utm_source']) {
      const data = await api.getOk(`/v1/analytics/breakdown?${range}&by=${by}&model=${model}`);
      breakdowns[`${model}/${by}`] = (data.groups as Array<Record<string, unknown>>)
        .map((g) => [g.value, g.attributedConversions, g.attributedRevenue])
        .sort((x, y) => String(x[0]).localeCompare(String(y[0])));
    }
  }
  return {
    metrics: {
      totalConversions: metrics.totalConversions,
      attributedConversions: metrics.attributedConversions,
      totalRevenue: metrics.totalRevenue,
      attributedRevenue: metrics.attributedRevenue,
    },
    breakdowns,
  };
}

/** The same answers recomputed from the raw rows: every rollup of the store deleted and folded again. */
async function recomputed(storeId: string, day: string) {
  await ctx.database.write((trx) =>
    trx.updateTable('rollup_stores').set({ tzdata: 'older' }).where('store_id', '=', storeId).execute(),
  );
  return analytics(storeId, day);
}

describe('re-attribution moves the rollups exactly once', () => {
  it('random re-attributions, repeated and concurrent, leave every model equal to a recomputation', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const day = utcDaysAgo(3);
    const clicks = await makeClicks(storeId, day, 8, 'rr');
    const conversions: string[] = [];
    for (let i = 0; i < 6; i++) {
      const { conversionId } = await api.convert(storeId, {
        orderId: `rr-order-${i}`,
        eventValue: 10 * (i + 1),
        currency: 'USD',
        timestamp: `${day}T08:00:00Z`,
        ipAddress: `198.51.100.${i + 1}`,
      });
      conversions.push(conversionId);
    }
    // Folded once before anything moves: re-attribution must subtract what was counted.
    const initial = await analytics(storeId, day);
    expect(initial.metrics.totalConversions).toBe(6);

    const next = random(38);
    const pick = () => clicks[Math.floor(next() * clicks.length)] as Click;
    let changed = 0;
    for (let round = 0; round < 24; round++) {
      const conversionId = conversions[Math.floor(next() * conversions.length)] as string;
      const winner = next() < 0.15 ? undefined : pick();
      const attribution = result(winner, [pick(), pick()], 50 + Math.floor(next() * 49));
      if (round % 4 === 3) {
        // Two callers at once with different results: one wins, each is counted at most once.
        const other = result(pick(), [pick()], 60);
        const both = await Promise.all([
          applyReattribution(ctx.database, ref(conversionId), attribution),
          applyReattribution(ctx.database, ref(conversionId), other),
        ]);
        changed += both.filter((b) => b?.outcome === 'changed').length;
      } else {
        const first = await applyReattribution(ctx.database, ref(conversionId), attribution);
        if (first?.outcome === 'changed') changed++;
        // The same result again changes nothing.
        const again = await applyReattribution(ctx.database, ref(conversionId), attribution);
        expect(again?.outcome).toBe('unchanged');
      }
      // Read between rounds now and then: some changes meet a folded conversion, some a queued one.
      if (round % 5 === 0) await analytics(storeId, day);
    }
    expect(changed).toBeGreaterThan(10);

    const incremental = await analytics(storeId, day);
    // Attributed revenue is the sum over the rows as they now are.
    const rows = await ctx.database.read
      .selectFrom('conversions')
      .select(['attributed', 'value_minor'])
      .where('store_id', '=', storeId)
      .execute();
    const attributed = rows.filter((r) => r.attributed === 1);
    expect(incremental.metrics.attributedConversions).toBe(attributed.length);
    expect(incremental.metrics.attributedRevenue).toBeCloseTo(attributed.reduce((s, r) => s + r.value_minor, 0) / 100, 6);
    expect(incremental.metrics.totalRevenue).toBe(210);
    expect(await recomputed(storeId, day)).toEqual(incremental);
  });

  it('a stored confidence 100 is kept; "stronger" applies only a stronger result', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const day = utcDaysAgo(2);
    const clicks = await makeClicks(storeId, day, 3, 'st');
    const explicit = await api.convert(storeId, { orderId: 'st-1', fbclid: 'st0', timestamp: `${day}T09:00:00Z` });
    expect(explicit.attributed).toBe(true);
    const kept = await applyReattribution(ctx.database, ref(explicit.conversionId), result(clicks[1], [], 95));
    expect(kept?.outcome).toBe('explicit_kept');
    expect(kept?.after.attributed_click_id).toBe(clicks[0]?.clickId);

    const plain = await api.convert(storeId, { orderId: 'st-2', timestamp: `${day}T09:00:00Z`, ipAddress: '192.0.2.99' });
    await applyReattribution(ctx.database, ref(plain.conversionId), result(clicks[1], [], 70));
    const weaker = await applyReattribution(ctx.database, ref(plain.conversionId), result(clicks[2], [], 60), {
      when: 'stronger',
    });
    expect(weaker?.outcome).toBe('not_stronger');
    const stronger = await applyReattribution(ctx.database, ref(plain.conversionId), result(clicks[2], [], 90), {
      when: 'stronger',
    });
    expect(stronger?.outcome).toBe('changed');
    expect(stronger?.after).toMatchObject({ attributed_click_id: clicks[2]?.clickId, confidence: 90 });
    expect(await applyReattribution(ctx.database, { ...ref('conv_nope'), conversionId: 'conv_nope' }, result(undefined))).toBe(
      undefined,
    );
  });
});

describe('what follows the new click', () => {
  it('match quality is computed again for the new click, keeping what only the request knew', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live, { pixelId: '123456789012345', capiAccessToken: 'EAAB-token-reattr' });
    const day = utcDaysAgo(1);
    const clicks = await makeClicks(storeId, day, 2, 'mq');
    const res = await call(ctx.app, 'POST', '/v1/track/conversion', {
      key: ctx.a.live,
      body: conversionBody(storeId, {
        orderId: 'mq-1',
        timestamp: `${day}T10:00:00Z`,
        ipAddress: '192.0.2.44',
        userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Test',
        customerData: { email: 'not-an-address', phone: '5551234567' },
      }),
    });
    expect(res.status).toBe(200);
    const id = res.body.data.conversionId as string;
    const quality = async () => (await call(ctx.app, 'GET', `/v1/conversions/${id}`, { key: ctx.a.live })).body.data.matchQuality;
    const before = await quality();
    expect(before.meta.keys).not.toContain('clickId');
    const warnings = (q: { warnings: Array<{ code: string }> }) => q.warnings.map((w) => w.code).sort();

    const applied = await applyReattribution(ctx.database, ref(id), result(clicks[0], [], 85));
    expect(applied?.outcome).toBe('changed');
    const after = await quality();
    expect(after.meta.keys).toContain('clickId');
    expect(after.meta.score).toBeGreaterThan(before.meta.score);
    // The raw email and phone are gone; their warnings stay.
    expect(warnings(after.meta)).toEqual(warnings(before.meta));
    expect(after.meta.keys.filter((k: string) => k !== 'clickId')).toEqual(before.meta.keys);

    // Unattributed again: back to the score without a click id.
    await applyReattribution(ctx.database, ref(id), result(undefined));
    expect(await quality()).toEqual(before);
  });

  it('conversion.attributed is delivered again with the new click, once per change', async () => {
    const created = await call(ctx.app, 'POST', '/v1/webhooks', {
      key: ctx.a.live,
      body: { url: receiver.url('/reattribution'), events: ['conversion.attributed'] },
    });
    expect(created.status).toBe(201);
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const day = utcDaysAgo(1);
    const clicks = await makeClicks(storeId, day, 2, 'wh');
    const { conversionId } = await api.convert(storeId, { orderId: 'wh-1', fbclid: 'wh0', timestamp: `${day}T11:00:00Z` });
    await ctx.database.write((trx) =>
      // Below 100, so a re-attribution may replace it (as one recorded by probabilistic evidence).
      trx.updateTable('conversions').set({ confidence: 70, attribution_signal: 'ip' }).where('id', '=', conversionId).execute(),
    );
    const events = () =>
      receiver
        .ofType('conversion.attributed')
        .map((r) => JSON.parse(r.body).data)
        .filter((d) => d.conversionId === conversionId);
    await receiver.waitFor(() => events().length >= 1);
    expect(events()[0]).toMatchObject({ attributedClickId: clicks[0]?.clickId, confidence: 100 });

    const moved = await applyReattribution(ctx.database, ref(conversionId), result(clicks[1], [], 88));
    expect(moved?.webhook).toBe(true);
    await receiver.waitFor(() => events().length >= 2);
    expect(events()[1]).toMatchObject({
      attributedClickId: clicks[1]?.clickId,
      fbclid: 'wh1',
      confidence: 88,
      signal: 'ip_user_agent',
    });
    // Unchanged, and unattributed: no new event.
    expect((await applyReattribution(ctx.database, ref(conversionId), result(clicks[1], [], 88)))?.webhook).toBe(false);
    expect((await applyReattribution(ctx.database, ref(conversionId), result(undefined)))?.webhook).toBe(false);
    await new Promise((r) => setTimeout(r, 300));
    expect(events()).toHaveLength(2);
    const messages = await ctx.database.read
      .selectFrom('webhook_messages')
      .select('payload')
      .where('event_type', '=', 'conversion.attributed')
      .execute();
    expect(messages.filter((m) => m.payload.includes(conversionId))).toHaveLength(2);
  });

  it('POST /v1/conversions/:id/reattribute goes through it: a click recorded after its conversion', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const day = utcDaysAgo(1);
    const { conversionId, attributed } = await api.convert(storeId, {
      orderId: 'late-1',
      fbclid: 'late-click',
      eventValue: 42,
      currency: 'USD',
      timestamp: `${day}T12:00:00Z`,
    });
    expect(attributed).toBe(false);
    const range = `storeId=${storeId}&startDate=${day}&endDate=${day}`;
    expect((await api.getOk(`/v1/analytics/metrics?${range}`)).attributedRevenue).toBe(0);
    await api.click(storeId, 'late-click', `${day}T11:00:00Z`, { campaign_id: 'late' });
    const res = await call(ctx.app, 'POST', `/v1/conversions/${conversionId}/reattribute`, { key: ctx.a.live });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ attributed: true, attributedTo: { fbclid: 'late-click', confidenceScore: 100 } });
    const again = await call(ctx.app, 'POST', `/v1/conversions/${conversionId}/reattribute`, { key: ctx.a.live });
    expect(again.status).toBe(200);
    expect((await api.getOk(`/v1/analytics/metrics?${range}`)).attributedRevenue).toBe(42);
    expect(await recomputed(storeId, day)).toMatchObject({ metrics: { attributedRevenue: 42 } });
  });
});
