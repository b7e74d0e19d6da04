import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { subtractDeleted } from '../../src/analytics/report-rollups.js';
import { refreshRollups, withConversionRollup } from '../../src/analytics/rollups.js';
import { allocateCredit, MODELS } from '../../src/attribution/models.js';
import { zoneOf } from '../../src/calendar/zone.js';
import type { Writer } from '../../src/db/database.js';
import { deleteExpiredEvents } from '../../src/db/repositories/retention.js';
import { moneyRatio } from '../../src/money.js';
import { call, createTestContext, makeStore, type TestContext } from '../helpers.js';
import { addDays, analyticsApi, DAY_MS, HOUR_MS, utcDaysAgo } from './fixtures.js';
import { aggregateConversions, aggregateRefunds } from './reference-queries.js';

interface Group {
  value: string | null;
  attributedRevenue: number;
  refunds: number;
  netRevenue: number;
  roas: number | null;
}

const cents = (amount: number) => Math.round(amount * 100);

describe('refunds in the analytics rollups', () => {
  let ctx: TestContext;
  const api = analyticsApi(() => ctx);
  beforeEach(async () => {
    ctx = await createTestContext();
  });
  afterEach(async () => ctx.close());

  const refund = async (storeId: string, body: Record<string, unknown>) => {
    const res = await call(ctx.app, 'POST', '/v1/track/refund', { key: ctx.a.live, body: { storeId, ...body } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data as { refundedTotal: number; remaining: number };
  };
  const groups = async (query: string) => (await api.getOk(`/v1/analytics/breakdown?${query}&limit=100`)).groups as Group[];

  it('agree with queries over the stored rows: partial, full and later-day refunds, other currencies, every model', async () => {
    const timezone = 'America/New_York';
    const storeId = await makeStore(ctx.app, ctx.a.live, { timezone });
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const start = Date.parse(`${utcDaysAgo(16)}T00:00:00Z`);
    const clicks: Array<{ clickId: string; fbclid: string; time: number }> = [];
    for (let i = 0; i < 40; i++) {
      const time = start + Math.floor(random() * 12 * DAY_MS);
      const fbclid = `rf${i}`;
      const { clickId } = await api.click(storeId, fbclid, new Date(time).toISOString(), { campaign_id: `c${i % 4}` });
      clicks.push({ clickId, fbclid, time });
    }
    for (let i = 0; i < 30; i++) {
      const click = clicks[Math.floor(random() * clicks.length)] as (typeof clicks)[number];
      const time = click.time + Math.floor(random() * DAY_MS);
      const currency = random() < 0.85 ? 'USD' : 'EUR';
      const orderId = `o${i}`;
      const value = 1 + Math.floor(random() * 50_000) / 100;
      const conversion = await api.convert(storeId, {
        orderId,
        fbclid: random() < 0.75 ? click.fbclid : undefined,
        eventType: random() < 0.9 ? 'Purchase' : 'Lead',
        currency,
        eventValue: value,
        timestamp: new Date(time).toISOString(),
      });
      if (conversion.attributed && random() < 0.6) {
        const extra = clicks.filter((c) => c.time < time && c.fbclid !== click.fbclid).slice(0, 1 + Math.floor(random() * 3));
        await api.addTouchpoints(
          conversion.conversionId,
          extra.map((c) => ({ clickId: c.clickId, clickTime: new Date(c.time).toISOString() })),
        );
      }
      // Up to three refunds, on the same day or up to four days later; the last one may take the whole rest.
      let at = time;
      let left = cents(value);
      for (let r = 0; r < 3 && left > 0 && random() < 0.6; r++) {
        at = Math.min(Date.now() - HOUR_MS, at + Math.floor(random() * 4 * DAY_MS));
        const whole = random() < 0.3;
        const part = Math.max(1, Math.floor(left * random() * 0.6));
        const done = await refund(storeId, {
          orderId,
          refundId: `${orderId}-r${r}`,
          currency,
          timestamp: new Date(at).toISOString(),
          ...(whole ? {} : { amount: part / 100 }),
        });
        left = cents(done.remaining);
      }
    }
    await api.spend(storeId, [{ date: utcDaysAgo(8), amount: 120, currency: 'USD', campaignId: 'c1' }]);

    const db = ctx.database.read;
    const zone = zoneOf(timezone);
    const stored = await db.selectFrom('refunds').selectAll().where('store_id', '=', storeId).execute();
    expect(stored.length).toBeGreaterThan(8);
    expect(stored.some((r) => zone.date(Number(r.refund_time)) !== zone.date(Number(r.conversion_time)))).toBe(true);

    for (const [from, to] of [
      [utcDaysAgo(17), utcDaysAgo(0)],
      [utcDaysAgo(11), utcDaysAgo(6)],
      [utcDaysAgo(8), utcDaysAgo(8)],
    ] as const) {
      const q = `storeId=${storeId}&startDate=${from}&endDate=${to}`;
      const range = { from: zone.dayStart(from), to: zone.dayStart(addDays(to, 1)) };
      const metrics = await api.getOk(`/v1/analytics/metrics?${q}`);
      const raw = (await aggregateRefunds(db, storeId, 1, range)).find((a) => a.currency === 'USD');
      const revenue = (await aggregateConversions(db, storeId, 1, range)).filter((a) => a.isPurchase && a.currency === 'USD');
      expect(cents(metrics.refunds)).toBe(raw?.refundsMinor ?? 0);
      expect(cents(metrics.netRevenue)).toBe(revenue.reduce((s, a) => s + a.valueMinor, 0) - (raw?.refundsMinor ?? 0));
      const netAttributed = revenue.reduce((s, a) => s + a.attributedValueMinor, 0) - (raw?.attributedRefundsMinor ?? 0);

      // Every bucket against the refunds over its instants (hours for one day, days otherwise).
      const interval = from === to ? 'hour' : 'day';
      const series = await api.getOk(`/v1/analytics/timeseries?${q}&interval=${interval}`);
      const buckets = series.buckets as Array<{ start: string; refunds: number }>;
      for (const [i, b] of buckets.entries()) {
        const span = { from: Date.parse(b.start), to: Date.parse(buckets[i + 1]?.start ?? new Date(range.to).toISOString()) };
        const inBucket = (await aggregateRefunds(db, storeId, 1, span)).find((a) => a.currency === 'USD');
        expect(cents(b.refunds), b.start).toBe(inBucket?.refundsMinor ?? 0);
      }

      // Every model's refund credit per campaign: each refund's share is the touchpoint's share of
      // the refunded total after it minus its share of the total before it.
      const inRange = await db
        .selectFrom('refunds as r')
        .innerJoin('conversions as c', 'c.id', 'r.conversion_id')
        .select(['r.amount_minor', 'r.refunded_after_minor', 'c.id', 'c.event_time', 'c.attributed_click_id'])
        .where('r.store_id', '=', storeId)
        .where('r.currency', '=', 'USD')
        .where('c.event_type', '=', 'Purchase')
        .where('c.attributed', '=', 1)
        .where('r.refund_time', '>=', range.from)
        .where('r.refund_time', '<', range.to)
        .execute();
      for (const model of MODELS) {
        const expected = new Map<string | null, number>();
        for (const r of inRange) {
          const tps = await db
            .selectFrom('touchpoints')
            .innerJoin('clicks', 'clicks.id', 'touchpoints.click_id')
            .select(['clicks.id', 'clicks.click_time', 'clicks.campaign_id'])
            .where('conversion_id', '=', r.id)
            .execute();
          const touchpoints = tps.map((t) => ({ clickId: t.id, clickTime: Number(t.click_time) }));
          const upTo = (minor: number) =>
            allocateCredit(model, touchpoints, r.attributed_click_id as string, minor, Number(r.event_time));
          const after = upTo(Number(r.refunded_after_minor));
          const before = upTo(Number(r.refunded_after_minor) - Number(r.amount_minor));
          for (const [i, credit] of after.entries()) {
            const campaign = tps.find((t) => t.id === credit.clickId)?.campaign_id ?? null;
            const share = credit.valueMinor - (before[i]?.valueMinor ?? 0);
            expected.set(campaign, (expected.get(campaign) ?? 0) + share);
          }
        }
        const got = await groups(`${q}&by=campaign_id&model=${model}`);
        for (const [campaign, e] of expected) {
          const g = got.find((x) => x.value === campaign);
          expect(cents(g?.refunds ?? 0), `${model} ${campaign}`).toBe(e);
        }
        for (const g of got) expect(cents(g.netRevenue)).toBe(cents(g.attributedRevenue) - cents(g.refunds));
        expect(
          got.reduce((s, g) => s + cents(g.netRevenue), 0),
          model,
        ).toBe(netAttributed);
        const c1 = got.find((g) => g.value === 'c1');
        if (from <= utcDaysAgo(8) && to >= utcDaysAgo(8) && c1) {
          expect(c1.roas).toBe(moneyRatio(cents(c1.netRevenue), 12_000));
        }
      }
    }
  });

  it('net a fully refunded multi-touch purchase to zero in every group and model, on the refund days', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const day = utcDaysAgo(6);
    const later = utcDaysAgo(2);
    const ids: string[] = [];
    for (const [i, campaign] of ['a', 'b', 'c'].entries()) {
      ids.push((await api.click(storeId, `full${i}`, `${day}T0${i + 1}:00:00Z`, { campaign_id: campaign })).clickId);
    }
    const conversion = await api.convert(storeId, {
      orderId: 'F',
      fbclid: 'full2',
      eventValue: 100,
      timestamp: `${day}T05:00:00Z`,
    });
    await api.addTouchpoints(
      conversion.conversionId,
      ids.slice(0, 2).map((clickId, i) => ({ clickId, clickTime: `${day}T0${i + 1}:00:00Z` })),
    );
    await refund(storeId, { orderId: 'F', refundId: 'F1', amount: 33.33, currency: 'USD', timestamp: `${day}T09:00:00Z` });
    await refund(storeId, { orderId: 'F', refundId: 'F2', amount: 0.01, currency: 'USD', timestamp: `${later}T10:00:00Z` });
    await refund(storeId, { orderId: 'F', refundId: 'F3', currency: 'USD', timestamp: `${later}T11:00:00Z` });
    for (const model of MODELS) {
      const all = await groups(`storeId=${storeId}&startDate=${day}&endDate=${later}&by=campaign_id&model=${model}`);
      for (const g of all) expect(g.netRevenue, `${model} ${g.value}`).toBe(0);
      expect(all.reduce((s, g) => s + cents(g.refunds), 0)).toBe(10_000);
      // The conversion's day holds its revenue and the first refund; the later day the rest, with no revenue.
      const first = await groups(`storeId=${storeId}&startDate=${day}&endDate=${day}&by=campaign_id&model=${model}`);
      expect(first.reduce((s, g) => s + cents(g.refunds), 0)).toBe(3333);
      const second = await groups(`storeId=${storeId}&startDate=${later}&endDate=${later}&by=campaign_id&model=${model}`);
      expect(second.reduce((s, g) => s + cents(g.attributedRevenue), 0)).toBe(0);
      expect(second.reduce((s, g) => s + cents(g.netRevenue), 0)).toBe(-6667);
    }
    const metrics = await api.getOk(`/v1/analytics/metrics?storeId=${storeId}&startDate=${later}&endDate=${later}`);
    expect(metrics).toMatchObject({ totalRevenue: 0, refunds: 66.67, netRevenue: -66.67 });
  });

  it('move a refund’s credit with its conversion’s reattribution, folded or still queued', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const day = utcDaysAgo(3);
    const x = await api.click(storeId, 'rx', `${day}T01:00:00Z`, { campaign_id: 'x' });
    const y = await api.click(storeId, 'ry', `${day}T02:00:00Z`, { campaign_id: 'y' });
    const conversion = await api.convert(storeId, { orderId: 'R', fbclid: 'rx', eventValue: 80, timestamp: `${day}T03:00:00Z` });
    await refund(storeId, { orderId: 'R', refundId: 'R1', amount: 20, currency: 'USD', timestamp: `${day}T04:00:00Z` });
    const q = `storeId=${storeId}&startDate=${day}&endDate=${day}&by=campaign_id&model=last_click`;
    const view = async () => (await groups(q)).map((g) => [g.value, g.attributedRevenue, g.refunds]);
    expect(await view()).toEqual([
      ['x', 80, 20],
      ['y', 0, 0],
    ]);
    const toY = (trx: Writer) =>
      withConversionRollup(trx, conversion.conversionId, async () => {
        await trx
          .updateTable('conversions')
          .set({ attributed_click_id: y.clickId })
          .where('id', '=', conversion.conversionId)
          .execute();
        await trx.deleteFrom('touchpoints').where('conversion_id', '=', conversion.conversionId).execute();
        await trx
          .insertInto('touchpoints')
          .values({
            conversion_id: conversion.conversionId,
            click_id: y.clickId,
            signal: 'fingerprint',
            score: 70,
            click_time: Date.parse(`${day}T02:00:00Z`),
          })
          .execute();
      });
    // Folded: the refund's credit moves at once.
    await ctx.database.write(toY);
    expect(await view()).toEqual([
      ['y', 80, 20],
      ['x', 0, 0],
    ]);
    // A second refund still queued when the conversion moves back: folded once, in its new place.
    await refund(storeId, { orderId: 'R', refundId: 'R2', amount: 10, currency: 'USD', timestamp: `${day}T05:00:00Z` });
    await ctx.database.write((trx) =>
      withConversionRollup(trx, conversion.conversionId, async () => {
        await trx
          .updateTable('conversions')
          .set({ attributed_click_id: x.clickId })
          .where('id', '=', conversion.conversionId)
          .execute();
        await trx.deleteFrom('touchpoints').where('conversion_id', '=', conversion.conversionId).execute();
      }),
    );
    expect(await view()).toEqual([
      ['x', 80, 30],
      ['y', 0, 0],
    ]);
    const metrics = await api.getOk(`/v1/analytics/metrics?storeId=${storeId}&startDate=${day}&endDate=${day}`);
    expect(metrics).toMatchObject({ attributedRevenue: 80, refunds: 30, netRevenue: 50 });
  });

  it('go with their conversion under retention, and every figure stays as it was', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const old = utcDaysAgo(40);
    const recent = utcDaysAgo(5);
    await api.click(storeId, 'ret', `${old}T01:00:00Z`, { campaign_id: 'old' });
    const conversion = await api.convert(storeId, {
      orderId: 'OLD',
      fbclid: 'ret',
      eventValue: 60,
      timestamp: `${old}T02:00:00Z`,
    });
    const store = { id: storeId, timezone: 'UTC' };
    await refreshRollups(ctx.database, store);
    await refund(storeId, { orderId: 'OLD', refundId: 'OLD1', amount: 15, currency: 'USD', timestamp: `${recent}T03:00:00Z` });
    const cutoff = Date.now() - 30 * DAY_MS;
    const refundsOf = async () =>
      (await ctx.database.read.selectFrom('refunds').select('id').where('conversion_id', '=', conversion.conversionId).execute())
        .length;

    /** Retention's steps until one says nothing more is left (PostgreSQL drops whole months in steps of their own). */
    const expire = async () => {
      const total = { clicks: 0, conversions: 0 };
      for (let more = true; more; ) {
        const step = await ctx.database.write((trx) => deleteExpiredEvents(trx, cutoff, 100, subtractDeleted));
        total.clicks += step.clicks;
        total.conversions += step.conversions;
        more = step.more;
      }
      return total;
    };

    // The refund not folded yet: its conversion (and the click it credits) stay until it is counted.
    expect(await expire()).toEqual({ clicks: 0, conversions: 0 });
    expect(await refundsOf()).toBe(1);

    await refreshRollups(ctx.database, store);
    const q = `storeId=${storeId}&startDate=${old}&endDate=${recent}`;
    const before = await api.getOk(`/v1/analytics/metrics?${q}`);
    const beforeGroups = await groups(`${q}&by=campaign_id`);
    const beforeSeries = await api.getOk(`/v1/analytics/timeseries?${q}`);
    expect(before).toMatchObject({ refunds: 15, netRevenue: 45 });
    expect(beforeGroups.map((g) => [g.value, g.refunds])).toEqual([['old', 15]]);

    expect(await expire()).toEqual({ clicks: 1, conversions: 1 });
    expect(await refundsOf()).toBe(0);
    expect(await api.getOk(`/v1/analytics/metrics?${q}`)).toEqual(before);
    expect(await groups(`${q}&by=campaign_id`)).toEqual(beforeGroups);
    expect(await api.getOk(`/v1/analytics/timeseries?${q}`)).toEqual(beforeSeries);
  });
});
