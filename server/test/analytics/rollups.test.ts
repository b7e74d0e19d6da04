import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  applyFold,
  foldQueued,
  refreshRollups,
  StaleFold,
  startRollupRefresher,
  withConversionRollup,
} from '../../src/analytics/rollups.js';
import { allocateCredit, MODELS } from '../../src/attribution/models.js';
import { zoneOf } from '../../src/calendar/zone.js';
import type { Writer } from '../../src/db/database.js';
import { insertClickOnce } from '../../src/db/repositories/clicks.js';
import { queueSize } from '../../src/db/repositories/rollup-queue.js';
import { ENGINE } from '../engine.js';
import { call, clickRow, createTestContext, makeStore, type TestContext } from '../helpers.js';
import { addDays, analyticsApi, DAY_MS, expectMonthsMatchDays, utcDaysAgo } from './fixtures.js';
import { aggregateConversions, countClicks } from './reference-queries.js';

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
    // 80 days: ranges of whole months read the month rollups (migration 0039), and their edges the days.
    const start = Date.parse(`${utcDaysAgo(80)}T00:00:00Z`);
    const clicks: Array<{ clickId: string; fbclid: string; time: number }> = [];
    for (let i = 0; i < 160; i++) {
      const time = start + Math.floor(random() * 78 * DAY_MS);
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

    const db = ctx.database.read;
    const zone = zoneOf(timezone);
    const monthStart = (monthsAgo: number) => {
      const d = new Date();
      return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - monthsAgo, 1)).toISOString().slice(0, 10);
    };
    for (const [from, to] of [
      [utcDaysAgo(80), utcDaysAgo(0)],
      [monthStart(2), addDays(monthStart(0), -1)],
      [addDays(monthStart(2), 3), addDays(monthStart(0), 2)],
      [addDays(monthStart(2), 3), addDays(monthStart(1), 2)],
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
    await expectMonthsMatchDays(db);
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
    const reattribute = (conversionId: string, winner: string, touchpoints: string[]) => async (trx: Writer) => {
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

  it('rebuild a store whose time zone changed, and stay exact when a conversion is reattributed before the refold', async () => {
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
    expect(await queueSize(ctx.database.read)).toEqual({ click: 0, conversion: 0, refund: 0 });
    await call(ctx.app, 'PATCH', `/v1/stores/${storeId}`, { key: ctx.a.live, body: { timezone: 'Asia/Tokyo' } });
    // The next read rebuilds: every event of the store is queued again, its rollups start over.
    const store = { id: storeId, timezone: 'Asia/Tokyo' };
    const { rebuildIfZoneChanged } = await import('../../src/analytics/rollups.js');
    expect(await ctx.database.write((trx) => rebuildIfZoneChanged(trx, store))).toBe(true);
    expect(await ctx.database.write((trx) => rebuildIfZoneChanged(trx, store))).toBe(false);
    expect(await queueSize(ctx.database.read)).toEqual({ click: 5, conversion: 3, refund: 0 });

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
    // A fold computed now, before the move, must not be written after it.
    const before = await foldQueued(ctx.database.read, { limit: 100, storeId });
    await moveTo((conversions[0] as { conversionId: string }).conversionId, 3);
    await expect(ctx.database.write((trx) => applyFold(trx, before as NonNullable<typeof before>))).rejects.toBeInstanceOf(
      StaleFold,
    );
    await moveTo((conversions[2] as { conversionId: string }).conversionId, 4);
    const expected = [
      ['c4', 1, 1, 30],
      ['c1', 1, 1, 20],
      ['c3', 1, 1, 10],
      ['c0', 1, 0, 0],
      ['c2', 1, 0, 0],
    ];
    expect(await groups(q)).toEqual(expected); // the read folds the queue
    // a rebuild from scratch agrees
    await ctx.database.write((trx) => trx.updateTable('rollup_stores').set({ tzdata: 'older' }).execute());
    expect(await groups(q)).toEqual(expected);
  });

  it('fold in bounded chunks and skip bot clicks, taking them off the queue', async () => {
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
    const steps = [];
    for (let i = 0; i < 3; i++) {
      const pending = await foldQueued(ctx.database.read, { limit: 2 });
      if (!pending) break;
      await ctx.database.write((trx) => applyFold(trx, pending));
      steps.push([pending.clicks, pending.more]);
    }
    expect(steps).toEqual([
      [2, true],
      [2, true],
      [1, false],
    ]);
    expect(await foldQueued(ctx.database.read, { limit: 2 })).toBeNull();
    const rows = await ctx.database.read.selectFrom('rollup_hours').select(['clicks']).where('store_id', '=', storeId).execute();
    expect(rows.reduce((s, r) => s + Number(r.clicks), 0)).toBe(4);
  });

  it('are kept up to date in the background, off the event loop', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    await api.click(storeId, 'bg1', new Date().toISOString());
    await api.convert(storeId, { fbclid: 'bg1', eventValue: 1 });
    const errors: unknown[] = [];
    const refresher = startRollupRefresher(ctx.database, { intervalMs: 5, foldEveryMs: 5, onError: (e) => errors.push(e) });
    try {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const queued = await queueSize(ctx.database.read);
        if (queued.click === 0 && queued.conversion === 0) break;
        if (Date.now() > deadline) throw new Error('the refresher did not catch up');
        await new Promise((r) => setTimeout(r, 10));
      }
    } finally {
      await refresher.stop();
    }
    expect(errors).toEqual([]);
    const rows = await ctx.database.read.selectFrom('rollup_hours').selectAll().where('store_id', '=', storeId).execute();
    expect(
      rows.map((r) => [r.currency, Number(r.clicks), Number(r.conversions), Number(r.attributed_revenue_minor)]).sort(),
    ).toEqual([
      ['', 1, 0, 0],
      ['USD', 0, 1, 100],
    ]);
  });

  describe('several folds at once (several instances): each event counted once, none skipped', () => {
    const seed = async (n: number) => {
      const storeId = await makeStore(ctx.app, ctx.a.live);
      const day = utcDaysAgo(2);
      for (let i = 0; i < n; i++) {
        const hh = String(i % 24).padStart(2, '0');
        await api.click(storeId, `bg${i}`, `${day}T${hh}:00:00Z`, { campaign_id: `c${i % 3}` });
        await api.convert(storeId, { fbclid: `bg${i}`, eventValue: 10, timestamp: `${day}T${hh}:30:00Z` });
      }
      const range = `storeId=${storeId}&startDate=${addDays(day, -1)}&endDate=${addDays(day, 1)}`;
      return { storeId, day, range };
    };

    it('a fold whose rows another fold took first is not written', async () => {
      const { range } = await seed(20);
      const first = await foldQueued(ctx.database.read, { limit: 100 });
      const second = await foldQueued(ctx.database.read, { limit: 100 });
      await ctx.database.write((trx) => applyFold(trx, first as NonNullable<typeof first>));
      await expect(ctx.database.write((trx) => applyFold(trx, second as NonNullable<typeof second>))).rejects.toBeInstanceOf(
        StaleFold,
      );
      expect(await api.getOk(`/v1/analytics/metrics?${range}`)).toMatchObject({
        totalClicks: 20,
        totalConversions: 20,
        totalRevenue: 200,
      });
    });

    it('racing folds and reads agree with the stored rows', async () => {
      const { storeId, range } = await seed(40);
      const other = ctx.store.openAnother(); // a second instance's connection
      try {
        const store = { id: storeId, timezone: 'UTC' };
        await Promise.all([
          refreshRollups(ctx.database, store),
          refreshRollups(other, store),
          (async () => {
            const pending = await other.background((await import('../../src/analytics/rollups.js')).FOLD_QUEUED, { limit: 7 });
            if (pending) await other.write((trx) => applyFold(trx, pending)).catch((e) => expect(e).toBeInstanceOf(StaleFold));
          })(),
        ]);
      } finally {
        await other.close();
      }
      expect(await api.getOk(`/v1/analytics/metrics?${range}`)).toMatchObject({
        totalClicks: 40,
        totalConversions: 40,
        totalRevenue: 400,
      });
    });

    it('an event committed after a later one was folded is still folded (a watermark would skip it)', async () => {
      const { storeId, day, range } = await seed(3);
      expect(await api.getOk(`/v1/analytics/metrics?${range}`)).toMatchObject({ totalClicks: 3 });
      // An id taken before the folded ones, committed only now: what a slow transaction of
      // another instance does. A fold "above the highest id folded" would never see it.
      await ctx.database.write((trx) =>
        insertClickOnce(
          trx,
          clickRow(ctx, storeId, {
            id: 'clk_00000000000000000000000001',
            fbclid: 'late',
            click_time: Date.parse(`${day}T12:00:00Z`),
            created_at: Date.now() - 60_000,
          }),
        ),
      );
      expect(await api.getOk(`/v1/analytics/metrics?${range}`)).toMatchObject({ totalClicks: 4 });
    });

    it.skipIf(ENGINE !== 'postgres')('a transaction still open while a fold runs is folded once it commits', async () => {
      const { storeId, day, range } = await seed(2);
      const other = ctx.store.openAnother();
      let release: () => void = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let inserted: () => void = () => {};
      const insertedOnce = new Promise<void>((resolve) => {
        inserted = resolve;
      });
      try {
        // Another instance's request: its click is inserted (with an earlier id) but not committed.
        const slow = other.write(async (trx) => {
          await insertClickOnce(trx, {
            ...(await ctx.database.read
              .selectFrom('clicks')
              .selectAll()
              .where('store_id', '=', storeId)
              .executeTakeFirstOrThrow()),
            id: 'clk_00000000000000000000000002',
            fbclid: 'slow',
            click_time: Date.parse(`${day}T13:00:00Z`),
          });
          inserted();
          await held;
        });
        await insertedOnce;
        await api.click(storeId, 'fast', `${day}T14:00:00Z`);
        expect(await api.getOk(`/v1/analytics/metrics?${range}`)).toMatchObject({ totalClicks: 3 });
        release();
        await slow;
        expect(await api.getOk(`/v1/analytics/metrics?${range}`)).toMatchObject({ totalClicks: 4 });
      } finally {
        release();
        await other.close();
      }
    });
  });
});
