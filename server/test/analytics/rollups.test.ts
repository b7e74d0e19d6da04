import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FoldThread } from '../../src/analytics/fold-thread.js';
import {
  catchUp,
  catchUpInBackground,
  catchUpInWorker,
  foldPending,
  rebuildStep,
  startRebuildIfStale,
  startRollupRefresher,
  withConversionRollup,
} from '../../src/analytics/rollups.js';
import { zoneOf } from '../../src/analytics/zone.js';
import { allocateCredit, MODELS } from '../../src/attribution/models.js';
import type { Executor } from '../../src/db/database.js';
import { aggregateConversions, countClicks } from '../../src/db/repositories/analytics.js';
import { rollupProgress } from '../../src/db/repositories/rollups.js';
import { call, createTestContext, makeStore, type TestContext, tempDir } from '../helpers.js';
import { addDays, analyticsApi, DAY_MS, utcDaysAgo } from './fixtures.js';

interface Group {
  value: string | null;
  clicks: number;
  attributedConversions: number;
  attributedRevenue: number;
}

describe('analytics rollups', () => {
  let ctx: TestContext;
  const api = analyticsApi(() => ctx);
  beforeEach(async () => {
    ctx = await createTestContext();
  });
  afterEach(async () => ctx.close());

  const groups = async (query: string) =>
    ((await api.getOk(`/v1/analytics/breakdown?${query}`)).groups as Group[]).map((g) => [
      g.value,
      g.clicks,
      g.attributedConversions,
      g.attributedRevenue,
    ]);

  it('stay exact after a store changes its time zone', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const day = utcDaysAgo(9);
    const prev = addDays(day, -1);
    await api.click(storeId, 'z1', `${day}T02:00:00Z`, { campaign_id: 'night' }); // prev 21:00 in New York
    await api.click(storeId, 'z2', `${day}T15:00:00Z`, { campaign_id: 'noon' });
    await api.convert(storeId, { fbclid: 'z1', eventValue: 30, timestamp: `${day}T03:00:00Z` });
    const range = (d: string) => `storeId=${storeId}&startDate=${d}&endDate=${d}`;

    // read once in UTC, so the rollups are computed in UTC
    expect(await api.getOk(`/v1/analytics/metrics?${range(day)}`)).toMatchObject({ totalClicks: 2, totalRevenue: 30 });
    expect(await groups(`${range(prev)}&by=campaign_id`)).toEqual([]);

    const patch = await call(ctx.app, 'PATCH', `/v1/stores/${storeId}`, {
      key: ctx.a.live,
      body: { timezone: 'America/New_York' },
    });
    expect(patch.status).toBe(200);
    // a click arriving after the change, before the next read
    await api.click(storeId, 'z3', `${day}T04:30:00Z`, { campaign_id: 'night' }); // prev 23:30 EST/EDT

    expect(await api.getOk(`/v1/analytics/metrics?${range(prev)}`)).toMatchObject({
      totalClicks: 2,
      totalConversions: 1,
      totalRevenue: 30,
      attributedRevenue: 30,
      timezone: 'America/New_York',
    });
    expect(await api.getOk(`/v1/analytics/metrics?${range(day)}`)).toMatchObject({ totalClicks: 1, totalConversions: 0 });
    expect(await groups(`${range(prev)}&by=campaign_id`)).toEqual([['night', 2, 1, 30]]);
    expect(await groups(`${range(day)}&by=campaign_id`)).toEqual([['noon', 1, 0, 0]]);
    const series = await api.getOk(`/v1/analytics/timeseries?storeId=${storeId}&startDate=${prev}&endDate=${day}`);
    expect(series.buckets.map((b: { clicks: number; revenue: number }) => [b.clicks, b.revenue])).toEqual([
      [2, 30],
      [1, 0],
    ]);
    const hours = await api.getOk(`/v1/analytics/timeseries?storeId=${storeId}&startDate=${prev}&endDate=${prev}&interval=hour`);
    const zone = zoneOf('America/New_York');
    const busy = hours.buckets.filter((b: { clicks: number; conversions: number }) => b.clicks + b.conversions > 0);
    expect(busy.map((b: { label: string }) => b.label)).toEqual(
      [`${day}T02:00:00Z`, `${day}T03:00:00Z`, `${day}T04:30:00Z`].map((t) => zone.label(zone.hourStart(Date.parse(t)))),
    );

    // and back to UTC
    await call(ctx.app, 'PATCH', `/v1/stores/${storeId}`, { key: ctx.a.live, body: { timezone: 'UTC' } });
    expect(await groups(`${range(day)}&by=campaign_id`)).toEqual([
      ['night', 2, 1, 30],
      ['noon', 1, 0, 0],
    ]);
  });

  it('agree with queries over the stored rows, for every range, bucket and model', async () => {
    const timezone = 'America/New_York';
    const storeId = await makeStore(ctx.app, ctx.a.live, { timezone });
    let seed = 42;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const start = Date.parse(`${utcDaysAgo(20)}T00:00:00Z`);
    const clicks: Array<{ clickId: string; fbclid: string; time: number }> = [];
    for (let i = 0; i < 120; i++) {
      const time = start + Math.floor(random() * 18 * DAY_MS);
      const fbclid = `r${i}`;
      const params = random() < 0.8 ? { campaign_id: `c${Math.floor(random() * 4)}`, utm_source: ['fb', 'ig'][i % 2] } : {};
      const { clickId } = await api.click(storeId, fbclid, new Date(time).toISOString(), params as Record<string, string>);
      clicks.push({ clickId, fbclid, time });
    }
    for (let i = 0; i < 50; i++) {
      const click = clicks[Math.floor(random() * clicks.length)] as (typeof clicks)[number];
      const time = click.time + Math.floor(random() * 2 * DAY_MS);
      if (time > Date.now()) continue;
      const eventType = random() < 0.8 ? 'Purchase' : 'Lead';
      const currency = random() < 0.9 ? 'USD' : 'EUR';
      const body = {
        fbclid: random() < 0.7 ? click.fbclid : undefined,
        eventType,
        currency,
        eventValue: Math.floor(random() * 100_000) / 100,
        timestamp: new Date(time).toISOString(),
      };
      const conversion = await api.convert(storeId, body);
      if (conversion.attributed && random() < 0.5) {
        // more touchpoints: clicks before the conversion
        const extra = clicks.filter((c) => c.time < time && c.fbclid !== click.fbclid).slice(0, 1 + Math.floor(random() * 3));
        await api.addTouchpoints(
          conversion.conversionId,
          extra.map((c) => ({ clickId: c.clickId, clickTime: new Date(c.time).toISOString() })),
        );
      }
    }

    const db = ctx.database.db;
    const zone = zoneOf(timezone);
    for (const [from, to] of [
      [utcDaysAgo(20), utcDaysAgo(0)],
      [utcDaysAgo(15), utcDaysAgo(12)],
      [utcDaysAgo(9), utcDaysAgo(9)],
    ] as const) {
      const q = `storeId=${storeId}&startDate=${from}&endDate=${to}`;
      const range = { from: zone.dayStart(from), to: zone.dayStart(addDays(to, 1)) };
      const metrics = await api.getOk(`/v1/analytics/metrics?${q}`);
      expect(metrics.totalClicks).toBe(await countClicks(db, storeId, 1, range));
      const raw = await aggregateConversions(db, storeId, 1, range);
      expect(metrics.totalConversions).toBe(raw.reduce((s, a) => s + a.conversions, 0));
      expect(metrics.attributedConversions).toBe(raw.reduce((s, a) => s + a.attributed, 0));
      const usd = raw.filter((a) => a.isPurchase && a.currency === 'USD');
      expect(Math.round(metrics.totalRevenue * 100)).toBe(usd.reduce((s, a) => s + a.valueMinor, 0));

      // every hourly bucket against a count over its instants
      const hours = to === from ? await api.getOk(`/v1/analytics/timeseries?${q}&interval=hour`) : undefined;
      if (hours) {
        const buckets = hours.buckets as Array<{ start: string; clicks: number; conversions: number }>;
        for (const [i, b] of buckets.entries()) {
          const next = buckets[i + 1]?.start ?? new Date(range.to).toISOString();
          const span = { from: Date.parse(b.start), to: Date.parse(next) };
          expect(b.clicks).toBe(await countClicks(db, storeId, 1, span));
          const inBucket = await aggregateConversions(db, storeId, 1, span);
          expect(b.conversions).toBe(inBucket.reduce((s, a) => s + a.conversions, 0));
        }
      }

      // every model's credit per campaign against allocateCredit over the stored touchpoints
      const conversions = await db
        .selectFrom('conversions')
        .selectAll()
        .where('store_id', '=', storeId)
        .where('attributed', '=', 1)
        .where('event_time', '>=', range.from)
        .where('event_time', '<', range.to)
        .execute();
      for (const model of MODELS) {
        const expected = new Map<string | null, { units: number; cents: number }>();
        for (const c of conversions) {
          const tps = await db
            .selectFrom('touchpoints')
            .innerJoin('clicks', 'clicks.id', 'touchpoints.click_id')
            .select(['clicks.id', 'clicks.click_time', 'clicks.campaign_id'])
            .where('conversion_id', '=', c.id)
            .execute();
          const touchpoints = tps.map((t) => ({ clickId: t.id, clickTime: t.click_time }));
          const units = allocateCredit(model, touchpoints, c.attributed_click_id as string, 1_000_000, c.event_time);
          const cents = allocateCredit(model, touchpoints, c.attributed_click_id as string, c.value_minor, c.event_time);
          for (const [i, credit] of units.entries()) {
            const campaign = tps.find((t) => t.id === credit.clickId)?.campaign_id ?? null;
            const e = expected.get(campaign) ?? { units: 0, cents: 0 };
            e.units += credit.valueMinor;
            if (c.event_type === 'Purchase' && c.currency === 'USD') e.cents += (cents[i] as { valueMinor: number }).valueMinor;
            expected.set(campaign, e);
          }
        }
        const got = (await api.getOk(`/v1/analytics/breakdown?${q}&by=campaign_id&model=${model}&limit=100`)).groups as Group[];
        for (const [campaign, e] of expected) {
          const g = got.find((x) => x.value === campaign);
          expect(g?.attributedRevenue ?? 0, `${model} ${campaign}`).toBe(e.cents / 100);
          expect(g?.attributedConversions ?? 0, `${model} ${campaign}`).toBe(Math.round(e.units / 10_000) / 100);
        }
        const totalCents = got.reduce((s, g) => s + Math.round(g.attributedRevenue * 100), 0);
        expect(totalCents, model).toBe(Math.round(metrics.attributedRevenue * 100));
      }
    }
  });

  it('follow a reattribution made through withConversionRollup, and only through it', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const day = utcDaysAgo(3);
    const ids: Record<string, { clickId: string; time: string }> = {};
    for (const [i, campaign] of ['c1', 'c2', 'c3'].entries()) {
      const time = `${day}T0${i + 1}:00:00Z`;
      ids[campaign] = { clickId: (await api.click(storeId, campaign, time, { campaign_id: campaign })).clickId, time };
    }
    const c = (name: string) => ids[name] as { clickId: string; time: string };
    const one = await api.convert(storeId, { fbclid: 'c3', eventValue: 90, timestamp: `${day}T05:00:00Z` });
    const two = await api.convert(storeId, { fbclid: 'c3', eventValue: 10, timestamp: `${day}T05:00:00Z` });
    const q = `storeId=${storeId}&startDate=${day}&endDate=${day}&by=campaign_id`;
    expect(await groups(`${q}&model=linear`)).toEqual([
      ['c3', 1, 2, 100],
      ['c1', 1, 0, 0],
      ['c2', 1, 0, 0],
    ]);

    /** What a reattribution does: new winner, new touchpoints. */
    const reattribute = (conversionId: string, winner: string, touchpoints: string[]) => async (trx: Executor) => {
      await trx
        .updateTable('conversions')
        .set({ attributed_click_id: c(winner).clickId })
        .where('id', '=', conversionId)
        .execute();
      await trx.deleteFrom('touchpoints').where('conversion_id', '=', conversionId).execute();
      await trx
        .insertInto('touchpoints')
        .values(
          touchpoints.map((name) => ({
            conversion_id: conversionId,
            click_id: c(name).clickId,
            signal: 'fingerprint',
            score: 70,
            click_time: Date.parse(c(name).time),
          })),
        )
        .execute();
    };
    await ctx.database.write((trx) =>
      withConversionRollup(trx, one.conversionId, () => reattribute(one.conversionId, 'c1', ['c1', 'c2', 'c3'])(trx)),
    );
    expect(await groups(`${q}&model=linear`)).toEqual([
      ['c3', 1, 1.33, 40],
      ['c1', 1, 0.33, 30],
      ['c2', 1, 0.33, 30],
    ]);
    expect(await groups(`${q}&model=last_click`)).toEqual([
      ['c1', 1, 1, 90],
      ['c3', 1, 1, 10],
      ['c2', 1, 0, 0],
    ]);

    // The same change made without the hook leaves the rollups behind ...
    await ctx.database.write((trx) => reattribute(two.conversionId, 'c2', ['c2'])(trx));
    const stale = await groups(`${q}&model=last_click`);
    expect(stale).toEqual([
      ['c1', 1, 1, 90],
      ['c3', 1, 1, 10],
      ['c2', 1, 0, 0],
    ]);
    // ... until they are rebuilt (here: as after an update of the platform's time zone data).
    await ctx.database.write((trx) => trx.updateTable('rollup_stores').set({ tzdata: 'older' }).execute());
    expect(await groups(`${q}&model=last_click`)).toEqual([
      ['c1', 1, 1, 90],
      ['c2', 1, 1, 10],
      ['c3', 1, 0, 0],
    ]);

    // Unattributing through the hook moves the totals too.
    await ctx.database.write((trx) =>
      withConversionRollup(trx, one.conversionId, async () => {
        await trx
          .updateTable('conversions')
          .set({ attributed: 0, attributed_click_id: null })
          .where('id', '=', one.conversionId)
          .execute();
        await trx.deleteFrom('touchpoints').where('conversion_id', '=', one.conversionId).execute();
      }),
    );
    const metrics = await api.getOk(`/v1/analytics/metrics?storeId=${storeId}&startDate=${day}&endDate=${day}`);
    expect(metrics).toMatchObject({ totalConversions: 2, attributedConversions: 1, attributedRevenue: 10, totalRevenue: 100 });
    expect(await groups(`${q}&model=linear`)).toEqual([
      ['c2', 1, 1, 10],
      ['c1', 1, 0, 0],
      ['c3', 1, 0, 0],
    ]);

    // A conversion not folded in yet: the hook does nothing, the catch-up folds in its new state once.
    const three = await api.convert(storeId, { fbclid: 'c1', eventValue: 5, timestamp: `${day}T06:00:00Z` });
    await ctx.database.write((trx) =>
      withConversionRollup(trx, three.conversionId, () => reattribute(three.conversionId, 'c3', ['c3'])(trx)),
    );
    expect(await groups(`${q}&model=last_click`)).toEqual([
      ['c2', 1, 1, 10],
      ['c3', 1, 1, 5],
      ['c1', 1, 0, 0],
    ]);
  });

  it('rebuild in bounded steps, and stay exact when a conversion is reattributed mid-rebuild', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const day = utcDaysAgo(4);
    const clickIds: string[] = [];
    for (let i = 0; i < 5; i++) {
      clickIds.push((await api.click(storeId, `s${i}`, `${day}T0${i}:30:00Z`, { campaign_id: `c${i}` })).clickId);
    }
    const conversions = [];
    for (let i = 0; i < 3; i++) {
      conversions.push(await api.convert(storeId, { fbclid: `s${i}`, eventValue: 10 * (i + 1), timestamp: `${day}T06:00:00Z` }));
    }
    const q = `storeId=${storeId}&startDate=${addDays(day, -1)}&endDate=${day}&by=campaign_id&model=last_click`;
    expect(await groups(q)).toEqual([
      ['c2', 1, 1, 30],
      ['c1', 1, 1, 20],
      ['c0', 1, 1, 10],
      ['c3', 1, 0, 0],
      ['c4', 1, 0, 0],
    ]);
    await call(ctx.app, 'PATCH', `/v1/stores/${storeId}`, { key: ctx.a.live, body: { timezone: 'Asia/Tokyo' } });
    expect(await ctx.database.write((trx) => startRebuildIfStale(trx, storeId))).toBe(true);
    expect(await ctx.database.write((trx) => startRebuildIfStale(trx, storeId))).toBe(false);
    // 2 clicks and 2 conversions per step: the third conversion is not refolded yet
    expect(await ctx.database.write((trx) => rebuildStep(trx, storeId, 2))).toBe(false);

    /** Moves a conversion to another click, through the hook. */
    const moveTo = (conversionId: string, click: number) =>
      ctx.database.write((trx) =>
        withConversionRollup(trx, conversionId, async () => {
          const clickId = clickIds[click] as string;
          await trx.updateTable('conversions').set({ attributed_click_id: clickId }).where('id', '=', conversionId).execute();
          await trx
            .updateTable('touchpoints')
            .set({ click_id: clickId, click_time: Date.parse(`${day}T0${click}:30:00Z`) })
            .where('conversion_id', '=', conversionId)
            .execute();
        }),
      );
    await moveTo((conversions[0] as { conversionId: string }).conversionId, 3); // already refolded
    await moveTo((conversions[2] as { conversionId: string }).conversionId, 4); // still to be refolded
    const expected = [
      ['c4', 1, 1, 30],
      ['c1', 1, 1, 20],
      ['c3', 1, 1, 10],
      ['c0', 1, 0, 0],
      ['c2', 1, 0, 0],
    ];
    expect(await groups(q)).toEqual(expected); // the read completes the rebuild
    const state = await ctx.database.db
      .selectFrom('rollup_stores')
      .selectAll()
      .where('store_id', '=', storeId)
      .executeTakeFirst();
    expect(state).toMatchObject({ timezone: 'Asia/Tokyo', rebuild_clicks: null, rebuild_until_clicks: null });
    // a rebuild from scratch agrees
    await ctx.database.write((trx) => trx.updateTable('rollup_stores').set({ tzdata: 'older' }).execute());
    expect(await groups(q)).toEqual(expected);
  });

  it('fold in bounded chunks and skip bot clicks, while moving the watermark past them', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const day = utcDaysAgo(1);
    for (let i = 0; i < 4; i++) await api.click(storeId, `h${i}`, `${day}T10:00:00Z`);
    const bot = await call(ctx.app, 'POST', '/v1/track/click', {
      key: ctx.a.live,
      body: {
        fbclid: 'bot',
        storeId,
        landingPage: 'https://shop.acme.test/',
        userAgent: 'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)',
        timestamp: `${day}T10:00:00Z`,
      },
    });
    expect(bot.status).toBe(200);
    const results = [];
    for (let i = 0; i < 3; i++) results.push(await ctx.database.write((trx) => catchUp(trx, 2)));
    expect(results).toEqual([
      { clicks: 2, conversions: 0, more: true },
      { clicks: 2, conversions: 0, more: true },
      { clicks: 1, conversions: 0, more: false },
    ]);
    const progress = await rollupProgress(ctx.database.db);
    expect(progress.folded).toEqual(progress.stored);
    const rows = await ctx.database.db.selectFrom('rollup_hours').select(['clicks']).where('store_id', '=', storeId).execute();
    expect(rows.reduce((s, r) => s + Number(r.clicks), 0)).toBe(4);
  });

  it.each([
    ['in-process', false],
    ['in a worker thread', true],
  ])('are kept up to date in the background (%s)', async (_, inWorker) => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    await api.click(storeId, 'bg1', new Date().toISOString());
    await api.convert(storeId, { fbclid: 'bg1', eventValue: 1 });
    const errors: unknown[] = [];
    const refresher = startRollupRefresher(ctx.database, {
      intervalMs: 5,
      foldEveryMs: 5,
      inWorker,
      onError: (e) => errors.push(e),
    });
    try {
      const deadline = Date.now() + 5_000;
      for (;;) {
        const { stored, folded } = await rollupProgress(ctx.database.db);
        if (folded.clicks === stored.clicks && folded.conversions === stored.conversions) break;
        if (Date.now() > deadline) throw new Error('the refresher did not catch up');
        await new Promise((r) => setTimeout(r, 10));
      }
    } finally {
      await refresher.stop();
    }
    expect(errors).toEqual([]);
    const rows = await ctx.database.db.selectFrom('rollup_hours').selectAll().where('store_id', '=', storeId).execute();
    expect(
      rows.map((r) => [r.currency, Number(r.clicks), Number(r.conversions), Number(r.attributed_revenue_minor)]).sort(),
    ).toEqual([
      ['', 1, 0, 0],
      ['USD', 0, 1, 100],
    ]);
  });

  describe('background catch-up (folds outside the write, writes only if nothing moved)', () => {
    /** Clicks and attributed conversions, one campaign each, not folded yet. */
    const seed = async (n: number) => {
      const storeId = await makeStore(ctx.app, ctx.a.live);
      const day = utcDaysAgo(2);
      const conversionIds: string[] = [];
      const clickIds: string[] = [];
      for (let i = 0; i < n; i++) {
        const hh = String(i % 24).padStart(2, '0');
        clickIds.push((await api.click(storeId, `bg${i}`, `${day}T${hh}:00:00Z`, { campaign_id: `c${i % 3}` })).clickId);
        const conversion = await api.convert(storeId, { fbclid: `bg${i}`, eventValue: 10, timestamp: `${day}T${hh}:30:00Z` });
        conversionIds.push(conversion.conversionId);
      }
      const q = `storeId=${storeId}&startDate=${addDays(day, -1)}&endDate=${addDays(day, 1)}&by=campaign_id&model=last_click`;
      return { storeId, day, q, conversionIds, clickIds };
    };

    it('folds what was stored, sliced, like the catch-up inside a write', async () => {
      const { q } = await seed(150); // more than one slice of 64
      const result = await catchUpInBackground(ctx.database, 1000);
      expect(result).toEqual({ clicks: 150, conversions: 150, more: false, stale: false });
      const { stored, folded } = await rollupProgress(ctx.database.db);
      expect(folded).toEqual(stored);
      expect(await groups(q)).toEqual([
        ['c0', 50, 50, 500],
        ['c1', 50, 50, 500],
        ['c2', 50, 50, 500],
      ]);
    });

    it('writes nothing when a read’s catch-up folded the rows first, so nothing counts twice', async () => {
      const { q } = await seed(100);
      const background = catchUpInBackground(ctx.database, 1000);
      await ctx.database.write((trx) => catchUp(trx)); // lands while the background one is folding
      expect(await background).toMatchObject({ stale: true, clicks: 0, conversions: 0 });
      expect((await groups(q)).map((g) => g[1])).toEqual([34, 33, 33]);
    });

    it('writes nothing when a conversion was re-attributed meanwhile, and the next one folds its new state', async () => {
      const { q, conversionIds, clickIds, day } = await seed(90);
      const background = catchUpInBackground(ctx.database, 1000);
      // Moves the first conversion (campaign c0) to the second click (campaign c1) before the fold is written.
      await ctx.database.write((trx) =>
        withConversionRollup(trx, conversionIds[0] as string, async () => {
          await trx
            .updateTable('conversions')
            .set({ attributed_click_id: clickIds[1] as string })
            .where('id', '=', conversionIds[0] as string)
            .execute();
          await trx
            .updateTable('touchpoints')
            .set({ click_id: clickIds[1] as string, click_time: Date.parse(`${day}T01:00:00Z`) })
            .where('conversion_id', '=', conversionIds[0] as string)
            .execute();
        }),
      );
      expect(await background).toMatchObject({ stale: true });
      expect(await catchUpInBackground(ctx.database, 1000)).toMatchObject({ stale: false, conversions: 90 });
      expect(await groups(q)).toEqual([
        ['c1', 30, 31, 310],
        ['c2', 30, 30, 300],
        ['c0', 30, 29, 290],
      ]);
    });

    it('writes nothing when the store’s time zone changed meanwhile', async () => {
      const { storeId } = await seed(70);
      const background = catchUpInBackground(ctx.database, 1000);
      await call(ctx.app, 'PATCH', `/v1/stores/${storeId}`, { key: ctx.a.live, body: { timezone: 'Asia/Tokyo' } });
      // The rollups of a store never folded take its zone when first folded: the PATCH itself
      // does not touch them, so the background fold (in UTC) must see the store's zone changed.
      expect(await background).toMatchObject({ stale: true });
    });
    describe('background fold in a worker thread', () => {
      let thread: FoldThread;
      beforeEach(() => {
        thread = new FoldThread(ctx.database.file);
      });
      afterEach(async () => thread.close());

      /** A row as JSON with its columns in name order and numbers as numbers. */
      const canonical = (row: object) =>
        JSON.stringify(
          Object.entries(row)
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v]),
        );
      /** A store's rows of every rollup table, in a stable order. */
      const rollupRows = async (storeId: string) => {
        const rows: Record<string, unknown[]> = {};
        for (const table of ['rollup_days', 'rollup_hours', 'rollup_dimension_clicks', 'rollup_dimension_credits'] as const) {
          const found = await ctx.database.db.selectFrom(table).selectAll().where('store_id', '=', storeId).execute();
          rows[table] = found.map(canonical).sort();
        }
        return rows;
      };

      it('folds and writes on its own connection exactly what the in-process fold computes', async () => {
        const { q, storeId } = await seed(150);
        const reference = await foldPending(ctx.database.db, 1000); // computed in-process, not written
        expect(await catchUpInWorker(ctx.database, thread, 1000)).toEqual({
          clicks: 150,
          conversions: 150,
          more: false,
          stale: false,
        });
        const rows = reference?.rows;
        const asJson = (list: object[] = []) => list.map(canonical).sort();
        const written = await rollupRows(storeId);
        // The store's rollups were empty: they now hold exactly the reference fold's rows.
        expect(written.rollup_days).toEqual(asJson(rows?.days));
        expect(written.rollup_hours).toEqual(asJson(rows?.hours));
        expect(written.rollup_dimension_clicks).toEqual(asJson(rows?.clicks));
        expect(written.rollup_dimension_credits).toEqual(asJson(rows?.credits));
        expect(await groups(q)).toEqual([
          ['c0', 50, 50, 500],
          ['c1', 50, 50, 500],
          ['c2', 50, 50, 500],
        ]);
        expect(await thread.fold(1000)).toBeNull(); // nothing left above the watermarks
      });

      it('reads in chunks: `more` until everything is folded', async () => {
        await seed(30);
        const results = [];
        for (let i = 0; i < 4; i++) results.push(await catchUpInWorker(ctx.database, thread, 12));
        expect(results.map((r) => [r.clicks, r.conversions, r.more])).toEqual([
          [12, 12, true],
          [12, 12, true],
          [6, 6, false],
          [0, 0, false],
        ]);
      });

      it('writes nothing when a read’s catch-up folded the rows first, so nothing counts twice', async () => {
        const { q } = await seed(100);
        const folded = await thread.fold(1000); // computed and kept by the worker
        expect(folded).toMatchObject({ conversions: 100 });
        await ctx.database.write((trx) => catchUp(trx)); // lands before the worker's write
        expect(await ctx.database.writeAlone(() => thread.write())).toMatchObject({ stale: true, conversions: 0 });
        expect((await groups(q)).map((g) => g[1])).toEqual([34, 33, 33]);
      });

      it('never counts a row twice when a read’s catch-up races it', async () => {
        const { q } = await seed(100);
        const background = catchUpInWorker(ctx.database, thread, 1000);
        await ctx.database.write((trx) => catchUp(trx));
        const result = await background;
        // Whichever read the rows first, the other one found them folded (stale) or found nothing.
        expect(result.stale || result.conversions === 0).toBe(true);
        expect((await groups(q)).map((g) => g[1])).toEqual([34, 33, 33]);
      });

      it('fails what it cannot do instead of hanging, and a new worker takes over', async () => {
        const broken = new FoldThread(path.join(tempDir(), 'missing.db'));
        await expect(broken.fold(10)).rejects.toThrow(/fold worker failed|unable to open|does not exist/i);
        await expect(broken.fold(10)).rejects.toThrow(); // a new worker, the same failure
        await broken.close();
        await expect(thread.write()).rejects.toThrow(/nothing folded/);
        await seed(5);
        const pending = thread.fold(1000);
        await thread.close();
        await expect(pending).rejects.toThrow(/stopped/);
        expect(await catchUpInWorker(ctx.database, thread, 1000)).toMatchObject({ conversions: 5, stale: false });
      });
    });
  });
});
