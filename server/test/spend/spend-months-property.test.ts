import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spendByCampaign } from '../../src/db/repositories/channels.js';
import { cohortSpend } from '../../src/db/repositories/cohorts.js';
import { replaceSyncedSpend, upsertSpend } from '../../src/db/repositories/spend.js';
import type { AdSpendTable } from '../../src/db/schema.js';
import { createTestContext, makeStore, type TestContext } from '../helpers.js';

const DAY_MS = 86_400_000;
/** Days over four months (2026-01-20 … 2026-05-09): ranges of whole months and partial ones. */
const date = (day: number) => new Date(Date.parse('2026-01-20T00:00:00Z') + day * DAY_MS).toISOString().slice(0, 10);
const DAYS = 110;

const entry = fc.record({
  day: fc.integer({ min: 0, max: DAYS - 1 }),
  platform: fc.constantFrom('meta', 'google_ads'),
  campaign: fc.constantFrom('c1', 'c2', ''),
  // Lower-case ASCII names: SQL `max` orders them the same under every collation.
  name: fc.constantFrom('alpha', 'beta', 'gamma', null),
  cents: fc.integer({ min: 0, max: 5_000_000 }),
  currency: fc.constantFrom('USD', 'USD', 'EUR'),
});

const scenario = fc.record({
  // Batches written one after another: a later write of a key replaces the earlier one.
  batches: fc.array(fc.array(entry, { minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 4 }),
  // A sync of Meta over some days that reports only some of its earlier entries (the rest go to 0).
  sync: fc.option(
    fc.record({
      from: fc.integer({ min: 0, max: DAYS - 1 }),
      span: fc.integer({ min: 0, max: 60 }),
      keep: fc.integer({ min: 0, max: 3 }),
    }),
  ),
  ranges: fc.array(fc.tuple(fc.integer({ min: 0, max: DAYS - 1 }), fc.integer({ min: 0, max: DAYS - 1 })), {
    minLength: 1,
    maxLength: 4,
  }),
});

/**
 * The spend reads that use the month rollups (migration 0041) — the channel report's spend per
 * campaign, tracking health's, the cohorts' spend per month — equal the same sums computed
 * here from the stored entries, whatever was written, replaced or zeroed by a sync, over ranges
 * of whole and partial months.
 */
describe('spend month rollups', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(async () => ctx?.close());

  it('sum to what the entries say, for any writes and ranges', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const storeId = await makeStore(ctx.app, ctx.a.live);
        const now = Date.now();
        const row = (e: (typeof s.batches)[number][number]) =>
          ({
            id: `sp_${run++}`,
            account_id: ctx.a.accountId,
            store_id: storeId,
            livemode: 1,
            date: date(e.day),
            platform: e.platform,
            campaign_id: e.campaign,
            campaign_name: e.name,
            amount_minor: e.cents,
            currency: e.currency,
            source: 'sync',
            created_at: now,
            updated_at: now,
          }) as AdSpendTable;
        for (const batch of s.batches) await ctx.database.write((trx) => upsertSpend(trx, batch.map(row)));
        if (s.sync) {
          const range = { startDate: date(s.sync.from), endDate: date(Math.min(DAYS - 1, s.sync.from + s.sync.span)) };
          const kept = s.batches
            .flat()
            .filter((e) => e.platform === 'meta' && date(e.day) >= range.startDate && date(e.day) <= range.endDate)
            .slice(0, s.sync.keep);
          await ctx.database.write((trx) => replaceSyncedSpend(trx, { storeId, platform: 'meta' }, range, kept.map(row), now));
        }
        const stored = await ctx.database.read.selectFrom('ad_spend').selectAll().where('store_id', '=', storeId).execute();
        for (const [a, b] of s.ranges) {
          const range = { startDate: date(Math.min(a, b)), endDate: date(Math.max(a, b)) };
          const inRange = stored.filter((e) => e.date >= range.startDate && e.date <= range.endDate);
          for (const perDayUnless of [undefined, 'USD']) {
            const got = await spendByCampaign(ctx.database.read, storeId, 1, range, perDayUnless);
            const want = new Map<string, { total: number; entries: number; name: string | null }>();
            for (const e of inRange) {
              const daily = perDayUnless !== undefined && e.currency !== perDayUnless;
              const key = [e.platform, e.campaign_id, e.currency, daily ? e.date : ''].join('|');
              const w = want.get(key) ?? { total: 0, entries: 0, name: null };
              w.total += Number(e.amount_minor);
              w.entries++;
              if (e.campaign_name !== null && (w.name === null || e.campaign_name > w.name)) w.name = e.campaign_name;
              want.set(key, w);
            }
            const gotMap = new Map(
              got.map((g) => [
                [g.platform, g.campaignId, g.currency, g.date].join('|'),
                { total: g.total, entries: g.entries, name: g.campaignName },
              ]),
            );
            expect(gotMap.size, 'one row per key').toBe(got.length);
            expect(Object.fromEntries(gotMap), JSON.stringify(range)).toEqual(Object.fromEntries(want));
          }
          // Cohorts: one per month of the range, the first from its start date.
          const starts = [range.startDate];
          for (let m = range.startDate.slice(0, 7); ; ) {
            const [y, mo] = m.split('-').map(Number) as [number, number];
            m = `${mo === 12 ? y + 1 : y}-${String(mo === 12 ? 1 : mo + 1).padStart(2, '0')}`;
            if (`${m}-01` > range.endDate) break;
            starts.push(`${m}-01`);
          }
          starts.push(new Date(Date.parse(`${range.endDate}T00:00:00Z`) + DAY_MS).toISOString().slice(0, 10));
          const cohorts = await cohortSpend(ctx.database.read, { storeId, livemode: 1, monthStarts: starts });
          const wantCohorts = new Map<string, number>();
          for (const e of inRange) {
            const cohort = starts.findLastIndex((start) => start <= e.date);
            const key = [cohort, e.platform, e.currency].join('|');
            wantCohorts.set(key, (wantCohorts.get(key) ?? 0) + Number(e.amount_minor));
          }
          const gotCohorts = new Map(cohorts.map((c) => [[c.cohort, c.platform, c.currency].join('|'), c.amount]));
          expect(gotCohorts.size).toBe(cohorts.length);
          expect(Object.fromEntries(gotCohorts), JSON.stringify(starts)).toEqual(Object.fromEntries(wantCohorts));
        }
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 25) },
    );
  });

  it('writes in chunks: each entry answers its own write, a key met twice in one call is written twice in order', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const now = Date.now();
    const entry = (i: number, campaign: string, cents: number) =>
      ({
        id: `chunk_${storeId}_${i}`,
        account_id: ctx.a.accountId,
        store_id: storeId,
        livemode: 1,
        date: '2026-03-01',
        platform: 'meta',
        campaign_id: campaign,
        campaign_name: null,
        amount_minor: cents,
        currency: 'USD',
        source: 'sync',
        created_at: now,
        updated_at: now,
      }) as AdSpendTable;
    // 1,200 campaigns (three statements of at most 500), then c7 again within the call.
    const entries = Array.from({ length: 1_200 }, (_, i) => entry(i, `c${i}`, i + 1));
    entries.splice(900, 0, entry(5_000, 'c7', 777));
    const stored = await ctx.database.write((trx) => upsertSpend(trx, entries));
    expect(stored).toHaveLength(1_201);
    expect(stored.map((r) => [r.campaign_id, Number(r.amount_minor)])).toEqual(
      entries.map((e) => [e.campaign_id, e.amount_minor]),
    );
    // The second write of c7 replaced the first: same row, its amount.
    expect(stored[900]?.id).toBe(stored[7]?.id);
    const rows = await ctx.database.read
      .selectFrom('ad_spend')
      .select(['campaign_id', 'amount_minor'])
      .where('store_id', '=', storeId)
      .execute();
    expect(rows).toHaveLength(1_200);
    expect(Number(rows.find((r) => r.campaign_id === 'c7')?.amount_minor)).toBe(777);
    const total = (
      await spendByCampaign(ctx.database.read, storeId, 1, { startDate: '2026-03-01', endDate: '2026-03-31' })
    ).reduce((n, r) => n + r.total, 0);
    expect(total).toBe((1_200 * 1_201) / 2 - 8 + 777);
  });
});
