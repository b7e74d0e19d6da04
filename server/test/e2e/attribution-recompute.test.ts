import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Attribution, Touchpoint } from '../../src/attribution/model.js';
import { MODELS } from '../../src/attribution/models.js';
import { applyReattribution } from '../../src/tracking/conversion-attribution.js';
import { type RecomputeChange, type RecomputeError, recomputeAttribution } from '../../src/tracking/recompute.js';
import { call, conversionBody, createTestContext, makeStore, type TestContext } from '../helpers.js';
import { cliAsync } from './process.js';

// `waytrack attribution recompute` (issue 38 point 6): recorded conversions keep their attribution
// until an operator re-scores them; a dry run writes nothing and lists what would change, --apply
// changes exactly that (through the re-attribution function), and a second run finds nothing left.
// The work is called in-process; the real CLI runs (awaited) for its help, its errors and one run
// against the database the test's server has open.

let ctx: TestContext;
let storeId: string;
const DAY = new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10);
const at = (time: string) => `${DAY}T${time}:00Z`;

interface Click {
  clickId: string;
  time: number;
}

async function click(body: Record<string, unknown>, key = ctx.a.live): Promise<Click> {
  const res = await call(ctx.app, 'POST', '/v1/track/click', {
    key,
    body: {
      storeId,
      fbclid: `rc-${Math.random().toString(36).slice(2)}`,
      landingPage: 'https://shop.acme.test/p?utm_source=x',
      ipAddress: '203.0.113.50',
      ...body,
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { clickId: res.body.data.clickId, time: Date.parse(String(body.timestamp)) };
}

async function convert(body: Record<string, unknown>, key = ctx.a.live): Promise<string> {
  const res = await call(ctx.app, 'POST', '/v1/track/conversion', {
    key,
    body: conversionBody(storeId, { currency: 'USD', ipAddress: '198.51.100.77', userAgent: 'Buyer/1.0', ...body }),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.conversionId;
}

/** A result as an older model might have recorded it: `click` by fingerprint at 70. */
function olderResult(c: Click): Attribution {
  const t: Touchpoint = {
    clickId: c.clickId,
    fbclid: '',
    signal: 'fingerprint',
    score: 70,
    clickTime: c.time,
    evidence: [{ kind: 'fingerprint', sharedBy: 2 }],
    browser: 'older',
  };
  return { winner: t, touchpoints: [t], candidates: [t] };
}

/** Everything recompute may write: the conversions' attribution, their touchpoints, the analytics. */
async function snapshot() {
  const conversions = await ctx.database.read
    .selectFrom('conversions')
    .select(['id', 'attributed', 'attributed_click_id', 'confidence', 'attribution_signal', 'match_quality'])
    .where('store_id', '=', storeId)
    .orderBy('id')
    .execute();
  const touchpoints = await ctx.database.read
    .selectFrom('touchpoints')
    .select(['conversion_id', 'click_id', 'score'])
    .where(
      'conversion_id',
      'in',
      conversions.map((c) => c.id),
    )
    .orderBy('conversion_id')
    .orderBy('click_id')
    .execute();
  const range = `storeId=${storeId}&startDate=${DAY}&endDate=${DAY}`;
  const metrics = await call(ctx.app, 'GET', `/v1/analytics/metrics?${range}`, { key: ctx.a.live });
  const messages = await ctx.database.read.selectFrom('webhook_messages').select('event_id').execute();
  return { conversions, touchpoints, metrics: metrics.body.data, messages: messages.length };
}

const ids: Record<string, string> = {};

beforeAll(async () => {
  ctx = await createTestContext();
  storeId = await makeStore(ctx.app, ctx.a.live);
  const c1 = await click({ visitorId: 'wt.rc-1', timestamp: at('08:00') });
  const c2 = await click({ visitorId: 'wt.rc-2', timestamp: at('08:05') });
  await click({ visitorId: 'wt.rc-3', timestamp: at('08:10') });
  await click({ fbclid: 'RC-explicit', timestamp: at('08:15') });
  // A: attributed by the same browser, then given an older model's result (c2 by fingerprint).
  ids.a = await convert({ orderId: 'rc-a', visitorId: 'wt.rc-1', eventValue: 30, timestamp: at('09:00') });
  // B: an explicit reference (100): never re-scored.
  ids.b = await convert({ orderId: 'rc-b', fbclid: 'RC-explicit', eventValue: 20, timestamp: at('09:05') });
  // C: recorded before its browser's click was: unattributed until re-scored.
  ids.c = await convert({ orderId: 'rc-c', visitorId: 'wt.rc-9', eventValue: 12.5, timestamp: at('09:10') });
  await click({ visitorId: 'wt.rc-9', timestamp: at('07:30') });
  // D: attributed as the model still does: no change.
  ids.d = await convert({ orderId: 'rc-d', visitorId: 'wt.rc-3', eventValue: 5, timestamp: at('09:15') });
  // E: before --since.
  ids.e = await convert({
    orderId: 'rc-e',
    visitorId: 'wt.rc-1',
    eventValue: 7,
    timestamp: new Date(Date.now() - 6 * 86_400_000).toISOString(),
  });
  const before = await ctx.database.read.selectFrom('conversions').selectAll().where('id', '=', ids.a).executeTakeFirstOrThrow();
  expect(before).toMatchObject({ attributed: 1, attributed_click_id: c1.clickId, attribution_signal: 'same_browser' });
  const older = await applyReattribution(
    ctx.database,
    { accountId: ctx.a.accountId, livemode: 1, conversionId: ids.a },
    olderResult(c2),
  );
  expect(older?.outcome).toBe('changed');
  // F: test mode, given an older result too.
  const t1 = await click({ visitorId: 'wt.rc-t', timestamp: at('08:00') }, ctx.a.test);
  const t2 = await click({ visitorId: 'wt.rc-u', timestamp: at('08:01') }, ctx.a.test);
  ids.f = await convert({ orderId: 'rc-f', visitorId: 'wt.rc-t', eventValue: 9, timestamp: at('09:00') }, ctx.a.test);
  await applyReattribution(ctx.database, { accountId: ctx.a.accountId, livemode: 0, conversionId: ids.f }, olderResult(t2));
  expect(t1.clickId).not.toBe(t2.clickId);
}, 120_000);
afterAll(async () => ctx?.close());

const changeKey = (c: RecomputeChange) => [c.conversionId, c.before, c.after, c.moved];

describe('waytrack attribution recompute', { timeout: 180_000 }, () => {
  it('a dry run writes nothing and reports; --apply changes exactly what it reported; a second run finds nothing', async () => {
    const untouched = await snapshot();
    const dryChanges: RecomputeChange[] = [];
    const dry = await recomputeAttribution(ctx.database, { storeId, since: DAY, mode: 'live', apply: false }, (c) =>
      dryChanges.push(c),
    );
    expect(await snapshot()).toEqual(untouched);
    expect(dry).toMatchObject({ examined: 4, explicitKept: 1, changed: 2, applied: false, mode: 'live' });
    expect(dryChanges.map((c) => c.conversionId).sort()).toEqual([ids.a, ids.c].sort());
    const a = dryChanges.find((c) => c.conversionId === ids.a);
    expect(a?.before).toMatchObject({ confidence: 70, signal: 'fingerprint' });
    expect(a?.after).toMatchObject({ signal: 'same_browser' });
    expect(a?.after.confidence).toBeGreaterThanOrEqual(90);
    const c = dryChanges.find((x) => x.conversionId === ids.c);
    expect(c?.before).toEqual({ clickId: null, confidence: null, signal: null });
    expect(c?.after.clickId).toBeTruthy();
    // Last click: A's 30 moves from the older click, C's 12.5 from no click.
    expect(dry.revenueMoved.last_click).toEqual({ USD: 42.5 });
    for (const model of MODELS) expect(dry.revenueMoved[model].USD).toBeGreaterThan(0);

    const applied: RecomputeChange[] = [];
    const summary = await recomputeAttribution(ctx.database, { storeId, since: DAY, mode: 'live', apply: true }, (x) =>
      applied.push(x),
    );
    expect(applied.map(changeKey)).toEqual(dryChanges.map(changeKey));
    expect(applied.every((x) => x.outcome === 'changed')).toBe(true);
    expect({ ...summary, applied: false }).toEqual(dry);
    const after = await snapshot();
    const row = (id: string) => after.conversions.find((x) => x.id === id);
    expect(row(ids.a as string)).toMatchObject({ attributed_click_id: a?.after.clickId, confidence: a?.after.confidence });
    expect(row(ids.c as string)).toMatchObject({ attributed: 1, attributed_click_id: c?.after.clickId });
    // Only A and C changed.
    for (const id of [ids.b, ids.d, ids.e] as string[]) {
      expect(row(id)).toEqual(untouched.conversions.find((x) => x.id === id));
    }
    expect(after.metrics.attributedRevenue).toBe(untouched.metrics.attributedRevenue + 12.5);

    const again = await recomputeAttribution(ctx.database, { storeId, since: DAY, mode: 'live', apply: true });
    expect(again).toMatchObject({ examined: 4, changed: 0 });
    expect(await snapshot()).toEqual(after);
  });

  it('refuses what it cannot do, naming the option', async () => {
    const refuse = (options: Parameters<typeof recomputeAttribution>[1]) =>
      recomputeAttribution(ctx.database, options).then(
        () => undefined,
        (error: RecomputeError) => ({ message: error.message, field: error.field }),
      );
    expect(await refuse({ storeId, since: '2026-02-30', apply: false })).toEqual({
      message: '--since must be a calendar date YYYY-MM-DD (got "2026-02-30")',
      field: 'since',
    });
    expect(await refuse({ storeId: 'st_nope', since: DAY, apply: false })).toEqual({
      message: 'no store st_nope',
      field: 'store',
    });
    expect(await refuse({ storeId, since: DAY, apply: false, accountId: ctx.b.accountId })).toMatchObject({ field: 'store' });
  });

  it('the real CLI: help, usage errors with exit code 1, and a dry run then --apply beside the running server', async () => {
    const env = ctx.store.env;
    const [help, missing, badMode, badDate, noStore] = await Promise.all([
      cliAsync(['attribution', 'recompute', '--help'], env),
      cliAsync(['attribution', 'recompute', '--store', storeId], env),
      cliAsync(['attribution', 'recompute', '--store', storeId, '--since', DAY, '--mode', 'prod'], env),
      cliAsync(['attribution', 'recompute', '--store', storeId, '--since', 'yesterday'], env),
      cliAsync(['attribution', 'recompute', '--store', 'st_missing', '--since', DAY], env),
    ]);
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^Usage: waytrack attribution recompute --store ID --since DATE/);
    for (const option of ['--store', '--since', '--apply', '--account', '--mode', '--json']) {
      expect(help.stdout).toMatch(new RegExp(`^  ${option}\\b`, 'm'));
    }
    expect(missing).toMatchObject({ status: 1 });
    expect(missing.stderr).toContain('--since is required');
    expect(badMode.status).toBe(1);
    expect(badMode.stderr).toContain('--mode must be live or test');
    expect(badDate.status).toBe(1);
    expect(badDate.stderr).toContain('--since must be a calendar date YYYY-MM-DD (got "yesterday")');
    expect(noStore.status).toBe(1);
    expect(noStore.stderr).toContain('no store st_missing');

    // The test-mode conversion F is still as an older model left it.
    const untouched = await snapshot();
    const dry = await cliAsync(['attribution', 'recompute', '--store', storeId, '--since', DAY, '--mode', 'test'], env);
    expect(dry.status, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`${ids.f} order rc-f test`);
    expect(dry.stdout).toContain('70 fingerprint →');
    expect(dry.stdout).toContain('1 of 1 conversions since');
    expect(dry.stdout).toContain('would change');
    expect(dry.stdout).toContain('last_click: 9 USD');
    expect(dry.stdout).toContain('Run again with --apply');
    expect(await snapshot()).toEqual(untouched);

    const json = await cliAsync(['attribution', 'recompute', '--store', storeId, '--since', DAY, '--apply', '--json'], env);
    expect(json.status, json.stderr).toBe(0);
    const result = JSON.parse(json.stdout);
    expect(result.summary).toMatchObject({ mode: 'both', applied: true, changed: 1, explicitKept: 1 });
    expect(result.changes).toEqual([
      expect.objectContaining({
        conversionId: ids.f,
        mode: 'test',
        outcome: 'changed',
        after: expect.objectContaining({ signal: 'same_browser' }),
      }),
    ]);
    const shown = await call(ctx.app, 'GET', `/v1/conversions/${ids.f}`, { key: ctx.a.test });
    expect(shown.body.data.attribution).toMatchObject({ signal: 'same_browser' });
  });
});
