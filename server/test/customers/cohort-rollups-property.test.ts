import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zoneOf } from '../../src/calendar/zone.js';
import { cohortNet } from '../../src/db/repositories/cohorts.js';
import { newCustomersBetween } from '../../src/db/repositories/new-customers.js';
import { loadRates } from '../../src/fx/operations.js';
import { call, clickBody, conversionBody, createTestContext, makeStore, type TestContext } from '../helpers.js';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const HORIZON_MS = 366 * DAY_MS;

const scenario = fc.record({
  timezone: fc.constantFrom('UTC', 'America/New_York', 'Asia/Tokyo'),
  conversions: fc.array(
    fc.record({
      customer: fc.integer({ min: 0, max: 3 }),
      daysAgo: fc.integer({ min: 0, max: 85 }),
      hour: fc.integer({ min: 0, max: 23 }),
      cents: fc.integer({ min: 1, max: 90_000 }),
      lead: fc.boolean(),
      eur: fc.boolean(),
      clicked: fc.boolean(),
      campaign: fc.constantFrom('123', '456'),
      refund: fc.constantFrom(0, 0, 0.4, 1),
      refundDaysLater: fc.integer({ min: 0, max: 40 }),
    }),
    { minLength: 1, maxLength: 8 },
  ),
  rateLate: fc.boolean(),
  /** Cohorts read (and so folded) after this many conversions too: later ones fold customers again. */
  readAfter: fc.integer({ min: 1, max: 7 }),
  moveZone: fc.boolean(),
});

/**
 * The cohort rollups (analytics/cohort-rollups.ts) against the cohorts computed straight from
 * the stored customers, conversions and refunds: customers converting in any order (an earlier
 * purchase recorded later moves the customer), refunds, other currencies with a rate recorded
 * late (the conversions get their rate afterwards), attributed and unattributed first purchases,
 * and a store that changes its time zone — read through the cohorts endpoint, which folds first.
 * The new customers per channel and campaign (the channel report's) too, over local date spans
 * of whole and partial months.
 */
describe('cohort rollups property', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(async () => ctx?.close());

  /** The twelve local months before now's and now's, as the cohorts' month starts (and the day after the last). */
  const monthStartsOf = (timezone: string, now: number) => {
    const today = zoneOf(timezone).date(now);
    const [y, m] = today.split('-').map(Number) as [number, number];
    const at = (months: number) => new Date(Date.UTC(y, m - 1 + months, 1)).toISOString().slice(0, 10);
    return Array.from({ length: 14 }, (_, i) => at(i - 12));
  };

  /** Local date spans: the cohorts' whole range, one across months cut inside them, one inside a month. */
  const spansOf = (timezone: string, now: number) => {
    const zone = zoneOf(timezone);
    const today = zone.date(now);
    const ago = (days: number) => zone.date(now - days * DAY_MS);
    return [
      { startDate: monthStartsOf(timezone, now)[0] as string, endDate: today },
      { startDate: ago(70), endDate: ago(10) },
      { startDate: `${today.slice(0, 7)}-01`, endDate: today },
    ];
  };

  /** Net per cohort, channel and day, and customers per cohort and channel, from the stored rows (api.md §11). */
  async function reference(storeId: string, timezone: string, monthStarts: string[]) {
    const db = ctx.database.read;
    const zone = zoneOf(timezone);
    const customers = await db
      .selectFrom('customers')
      .selectAll()
      .where('store_id', '=', storeId)
      .where('livemode', '=', 1)
      .execute();
    const conversions = await db.selectFrom('conversions').selectAll().where('store_id', '=', storeId).execute();
    const refunds = await db.selectFrom('refunds').selectAll().where('store_id', '=', storeId).execute();
    const out = new Map<string, number>();
    const add = (key: string, amount: number) => out.set(key, (out.get(key) ?? 0) + amount);
    for (const [i, span] of spansOf(timezone, Date.now()).entries()) {
      for (const u of customers) {
        const date = zone.date(Number(u.first_event_time));
        if (date >= span.startDate && date <= span.endDate) add(`new ${i}|${u.channel}|${u.campaign_id}`, 1);
      }
    }
    for (const u of customers) {
      const first = Number(u.first_event_time);
      const month = zone.date(first).slice(0, 7);
      const cohort = monthStarts.slice(0, -1).findIndex((s) => s.slice(0, 7) === month);
      if (cohort < 0) continue;
      add(`${cohort}|${u.channel}|customers`, 1);
      for (const c of conversions) {
        const t = Number(c.event_time);
        if (c.customer_key !== u.customer_key || c.event_type !== 'Purchase' || t < first || t >= first + HORIZON_MS) continue;
        const value = Number(c.value_minor);
        const fx = c.fx_value_minor === null ? null : Number(c.fx_value_minor);
        add(`${cohort}|${u.channel}|${Math.trunc((t - first) / DAY_MS)}`, c.currency === 'USD' ? value : (fx ?? 0));
        for (const r of refunds) {
          const rt = Number(r.refund_time);
          if (r.conversion_id !== c.id || rt >= first + HORIZON_MS) continue;
          const amount = Number(r.amount_minor);
          const converted = fx === null || value === 0 ? 0 : Number((BigInt(amount) * BigInt(fx)) / BigInt(value));
          add(
            `${cohort}|${u.channel}|${Math.max(0, Math.trunc((rt - first) / DAY_MS))}`,
            -(r.currency === 'USD' ? amount : converted),
          );
        }
      }
    }
    return new Map([...out].filter(([, v]) => v !== 0));
  }

  async function rolledUp(storeId: string, timezone: string, monthStarts: string[]) {
    // The endpoint folds the store's events and customers first.
    const res = await call(ctx.app, 'GET', `/v1/analytics/cohorts?storeId=${storeId}&startDate=${monthStarts[0]}&by=channel`, {
      key: ctx.a.live,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.timezone).toBe(timezone);
    const rows = await cohortNet(ctx.database.read, { storeId, livemode: 1, monthStarts, currency: 'USD' });
    const out = new Map<string, number>();
    const add = (key: string, n: number) => out.set(key, (out.get(key) ?? 0) + n);
    for (const r of rows) {
      add(`${r.cohort}|${r.channel}|${r.day}`, r.amount);
      add(`${r.cohort}|${r.channel}|customers`, r.customers);
    }
    for (const [i, span] of spansOf(timezone, Date.now()).entries()) {
      for (const r of await newCustomersBetween(ctx.database.read, storeId, 1, span)) {
        add(`new ${i}|${r.channel}|${r.campaignId}`, r.customers);
      }
    }
    return new Map([...out].filter(([, v]) => v !== 0));
  }

  it('equal the cohorts computed from the stored rows, whatever the order of events', async () => {
    let run = 0;
    const seen = { moved: 0, refunds: 0, converted: 0, cells: 0, midway: 0, campaigns: new Set<string>() };
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        run++;
        const now = Date.now();
        let timezone: string = s.timezone;
        const storeId = await makeStore(ctx.app, ctx.a.live, { currency: 'USD', timezone });
        const rates = (days: number[]) =>
          loadRates(
            ctx.database,
            [
              'date,base,currency,rate',
              ...days.map((d) => `${new Date(now - d * DAY_MS).toISOString().slice(0, 10)},EUR,USD,1.0837`),
            ].join('\n'),
          );
        const days = [...new Set(s.conversions.map((c) => c.daysAgo))];
        if (!s.rateLate) await rates(days);
        const firsts = new Map<number, number>();
        for (const [i, c] of s.conversions.entries()) {
          const time = Math.min(
            now - HOUR_MS,
            Date.parse(new Date(now - c.daysAgo * DAY_MS).toISOString().slice(0, 10)) + c.hour * HOUR_MS,
          );
          const email = `p${run}c${c.customer}@example.com`;
          if ((firsts.get(c.customer) ?? Number.POSITIVE_INFINITY) < time)
            firsts.set(c.customer, firsts.get(c.customer) as number);
          else {
            if (firsts.has(c.customer)) seen.moved++;
            firsts.set(c.customer, time);
          }
          let fbclid: string | undefined;
          if (c.clicked) {
            const click = clickBody(storeId, {
              timestamp: new Date(time - HOUR_MS).toISOString(),
              landingPage: `https://shop.acme.test/?utm_source=facebook&campaign_id=${c.campaign}`,
            });
            const res = await call(ctx.app, 'POST', '/v1/track/click', { key: ctx.a.live, body: click });
            expect(res.status, JSON.stringify(res.body)).toBe(200);
            fbclid = click.fbclid;
          }
          const orderId = `p${run}o${i}`;
          const currency = c.eur ? 'EUR' : 'USD';
          const res = await call(ctx.app, 'POST', '/v1/track/conversion', {
            key: ctx.a.live,
            body: conversionBody(storeId, {
              orderId,
              eventType: c.lead ? 'Lead' : 'Purchase',
              eventValue: c.cents / 100,
              currency,
              timestamp: new Date(time).toISOString(),
              customerData: { email },
              ...(fbclid && { fbclid }),
            }),
          });
          expect(res.status, JSON.stringify(res.body)).toBe(200);
          if (!c.lead && c.eur) seen.converted++;
          if (!c.lead && c.refund > 0) {
            const amount = c.refund === 1 ? undefined : Math.max(1, Math.floor(c.cents * c.refund)) / 100;
            const refundAt = Math.min(now - 60_000, time + c.refundDaysLater * DAY_MS);
            const refund = await call(ctx.app, 'POST', '/v1/track/refund', {
              key: ctx.a.live,
              body: {
                storeId,
                orderId,
                refundId: `${orderId}r`,
                currency,
                timestamp: new Date(refundAt).toISOString(),
                ...(amount !== undefined && { amount }),
              },
            });
            expect(refund.status, JSON.stringify(refund.body)).toBe(200);
            seen.refunds++;
          }
          if (i + 1 === s.readAfter && i + 1 < s.conversions.length) {
            const starts = monthStartsOf(timezone, now);
            expect(await rolledUp(storeId, timezone, starts)).toEqual(await reference(storeId, timezone, starts));
            seen.midway++;
          }
        }
        const monthStarts = monthStartsOf(timezone, now);
        const expected = await reference(storeId, timezone, monthStarts);
        seen.cells += expected.size;
        for (const key of expected.keys()) if (key.startsWith('new ')) seen.campaigns.add(key.split('|')[2] as string);
        expect(await rolledUp(storeId, timezone, monthStarts)).toEqual(expected);
        if (s.rateLate) {
          // The rates arrive: conversions in EUR get theirs recorded, and their customers are folded again.
          await rates(days);
          expect(await rolledUp(storeId, timezone, monthStarts)).toEqual(await reference(storeId, timezone, monthStarts));
        }
        if (s.moveZone) {
          timezone = timezone === 'Asia/Tokyo' ? 'America/Los_Angeles' : 'Asia/Tokyo';
          const patch = await call(ctx.app, 'PATCH', `/v1/stores/${storeId}`, { key: ctx.a.live, body: { timezone } });
          expect(patch.status, JSON.stringify(patch.body)).toBe(200);
          const moved = monthStartsOf(timezone, now);
          expect(await rolledUp(storeId, timezone, moved)).toEqual(await reference(storeId, timezone, moved));
        }
      }),
      { numRuns: 10, seed: 40_09 },
    );
    // The scenarios did exercise what this test is about.
    expect(seen.moved).toBeGreaterThan(0);
    expect(seen.refunds).toBeGreaterThan(0);
    expect(seen.converted).toBeGreaterThan(0);
    expect(seen.cells).toBeGreaterThan(20);
    expect(seen.midway).toBeGreaterThan(0);
    expect([...seen.campaigns].sort()).toEqual(['', '123', '456']);
  });
});
