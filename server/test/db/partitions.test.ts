import { type Kysely, sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { subtractDeleted } from '../../src/analytics/report-rollups.js';
import { refreshRollups } from '../../src/analytics/rollups.js';
import { ensurePartitions, listPartitions, MONTHS_AHEAD, monthStart, partitionName } from '../../src/db/postgres/partitions.js';
import { deleteExpiredEvents, type RetentionStep } from '../../src/db/repositories/retention.js';
import type { DB } from '../../src/db/schema.js';
import { ENGINE } from '../engine.js';
import { call, clickBody, conversionBody, createTestContext, makeStore, type TestContext } from '../helpers.js';

// PostgreSQL keeps clicks and conversions in monthly partitions (migration 0007); SQLite does not.
if (ENGINE !== 'postgres') console.log('skipped: set DATABASE_URL (monthly partitions are PostgreSQL only)');

const DAY_MS = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();
const added = (steps: RetentionStep[]) => ({
  clicks: steps.reduce((n, s) => n + s.clicks, 0),
  conversions: steps.reduce((n, s) => n + s.conversions, 0),
});

describe.skipIf(ENGINE !== 'postgres')('monthly partitions (postgres)', () => {
  let ctx: TestContext;
  let storeId: string;
  const db = () => ctx.database.read as unknown as Kysely<DB>;
  const names = async (table: 'clicks' | 'conversions') => (await listPartitions(db(), table)).map((p) => p.name);

  beforeEach(async () => {
    ctx = await createTestContext();
    storeId = await makeStore(ctx.app, ctx.a.live, { attributionWindowDays: 90 });
  });
  afterEach(async () => ctx.close());
  /** Retention's steps until one says nothing more is left (db/repositories/retention.ts). */
  const expireAll = async (before: number) => {
    const steps: RetentionStep[] = [];
    do steps.push(await ctx.database.write((trx) => deleteExpiredEvents(trx, before, 1000, subtractDeleted)));
    while (steps.at(-1)?.more && steps.length < 50);
    return steps;
  };

  const track = async (path: 'click' | 'conversion', body: Record<string, unknown>) => {
    const res = await call(ctx.app, 'POST', `/v1/track/${path}`, { key: ctx.a.live, body });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data;
  };

  it('holds the last three months, this one and the next three, and a default partition', async () => {
    const now = Date.now();
    for (const table of ['clicks', 'conversions'] as const) {
      const expected = [];
      for (let m = -3; m <= MONTHS_AHEAD; m++) expected.push(partitionName(table, monthStart(now, m)));
      expect(await names(table)).toEqual([...expected, `${table}_pdefault`]);
    }
    const { rows } = await sql<{ kind: string }>`select relkind as kind from pg_class
      where relname in ('clicks', 'conversions') and relnamespace = current_schema()::regnamespace`.execute(db());
    expect(rows.map((r) => r.kind)).toEqual(['p', 'p']);
  });

  it('creates months ahead as time passes, filling a gap, and is safe to run from several instances at once', async () => {
    const later = monthStart(Date.now(), 6) + 5 * DAY_MS;
    const other = ctx.store.openAnother();
    try {
      const runs = await Promise.all([
        ensurePartitions(db(), later),
        ensurePartitions(other.read as unknown as Kysely<DB>, later),
        ensurePartitions(db(), later),
      ]);
      // Months 4 to 9 ahead of now were missing: each made once, by one of the runs.
      expect(
        runs
          .flat()
          .filter((n) => n.startsWith('clicks_'))
          .sort(),
      ).toEqual([4, 5, 6, 7, 8, 9].map((m) => partitionName('clicks', monthStart(Date.now(), m))));
      expect(await ensurePartitions(db(), later)).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it('stores each event in its month, an ancient conversion in the default partition, and deduplicates across months', async () => {
    const now = Date.now();
    const clickId = (await track('click', clickBody(storeId, { fbclid: 'fb_month', timestamp: iso(now - 40 * DAY_MS) }))).clickId;
    // The same fbclid again, with another time: still one click (the dedup key has no partition key).
    const again = await track('click', clickBody(storeId, { fbclid: 'fb_month', timestamp: iso(now - 2 * DAY_MS) }));
    expect(again).toMatchObject({ clickId, duplicate: true });
    const ancient = (await track('conversion', conversionBody(storeId, { orderId: 'o_1999', timestamp: '1999-05-01T00:00:00Z' })))
      .conversionId;
    const { rows } = await sql<{ id: string; part: string }>`
      select id, tableoid::regclass::text as part from clicks union all
      select id, tableoid::regclass::text from conversions`.execute(db());
    const where = new Map(rows.map((r) => [r.id, r.part.replace(/^.*\./, '')]));
    expect(where.get(clickId)).toBe(partitionName('clicks', monthStart(now - 40 * DAY_MS)));
    expect(where.get(ancient)).toBe('conversions_pdefault');
    const dup = await track('conversion', conversionBody(storeId, { orderId: 'o_1999', timestamp: iso(now) }));
    expect(dup).toMatchObject({ conversionId: ancient, duplicate: true });
  });

  it('retention drops a wholly expired month as a table, with its touchpoints and outbox jobs, and deletes the rest row by row', async () => {
    const now = Date.now();
    const thisMonth = monthStart(now);
    // A click in the oldest month (dropped whole) credited by a conversion of today (kept).
    const oldMonthTime = monthStart(now, -3) + DAY_MS;
    const old = (
      await track(
        'click',
        clickBody(storeId, { fbclid: 'fb_old_month', timestamp: iso(Math.max(oldMonthTime, now - 89 * DAY_MS)) }),
      )
    ).clickId;
    const credited = (await track('conversion', conversionBody(storeId, { fbclid: 'fb_old_month', orderId: 'o_new' })))
      .conversionId;
    const ancient = (
      await track('conversion', conversionBody(storeId, { orderId: 'o_ancient', timestamp: '2001-01-01T00:00:00Z' }))
    ).conversionId;
    const recent = (await track('click', clickBody(storeId, { fbclid: 'fb_recent' }))).clickId;
    await refreshRollups(ctx.database, { id: storeId, timezone: 'UTC' });

    // Everything before this month has expired: the older months go whole, the ancient conversion by row.
    const oldMonth = partitionName('clicks', monthStart(Math.max(oldMonthTime, now - 89 * DAY_MS)));
    expect(await names('clicks')).toContain(oldMonth);
    // A month a step, alone in its transaction (a second lock taken after the first deadlocked readers), then the rows.
    // A month a step, alone in its transaction (a transaction holding one dropped month's lock
    // while asking for another's deadlocked readers of both tables), then the rows.
    const steps = await expireAll(thisMonth);
    const months = steps.filter((step) => step.month !== undefined);
    expect(months.map((step) => step.month)).toContain(oldMonth);
    expect(new Set(months.map((step) => step.month)).size).toBe(months.length);
    expect(steps.slice(0, months.length)).toEqual(months);
    expect(steps.at(-1)).toEqual({ clicks: 0, conversions: 1, more: false });
    expect(added(steps)).toEqual({ clicks: 1, conversions: 1 });
    expect(await names('clicks')).not.toContain(oldMonth);
    expect((await names('clicks'))[0]).toBe(partitionName('clicks', thisMonth));
    expect((await names('conversions'))[0]).toBe(partitionName('conversions', thisMonth));

    const ids = async (table: 'clicks' | 'conversions') => (await db().selectFrom(table).select('id').execute()).map((r) => r.id);
    expect(await ids('clicks')).toEqual([recent]);
    expect(await ids('conversions')).toEqual([credited]);
    expect(ancient).not.toBe(credited);
    expect(await db().selectFrom('touchpoints').select('click_id').where('click_id', '=', old).execute()).toEqual([]);
    // A second run finds nothing more.
    expect(await expireAll(thisMonth)).toEqual([{ clicks: 0, conversions: 0, more: false }]);
  });

  it('keeps a month while one of its events waits to be folded into the rollups', async () => {
    const now = Date.now();
    const time = Math.max(monthStart(now, -2) + DAY_MS, now - 80 * DAY_MS);
    await track('click', clickBody(storeId, { fbclid: 'fb_unfolded', timestamp: iso(time) }));
    const month = partitionName('clicks', monthStart(time));
    const cutoff = monthStart(time, 1);
    expect(added(await expireAll(cutoff))).toEqual({ clicks: 0, conversions: 0 });
    expect(await names('clicks')).toContain(month);
    await refreshRollups(ctx.database, { id: storeId, timezone: 'UTC' });
    expect(await expireAll(cutoff)).toEqual([
      { clicks: 1, conversions: 0, more: true, month },
      { clicks: 0, conversions: 0, more: false },
    ]);
    expect(await names('clicks')).not.toContain(month);
  });
});
