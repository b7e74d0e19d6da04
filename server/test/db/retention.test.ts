import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { subtractDeleted } from '../../src/analytics/report-rollups.js';
import { refreshRollups } from '../../src/analytics/rollups.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import type { Database } from '../../src/db/database.js';
import { insertClickOnce } from '../../src/db/repositories/clicks.js';
import { recordConversionOnce } from '../../src/db/repositories/conversions.js';
import { deleteExpiredEvents, retentionBatchBudgetMs } from '../../src/db/repositories/retention.js';
import type { ClicksTable, ConversionsTable } from '../../src/db/schema.js';
import { newId } from '../../src/ids.js';
import { startRetention } from '../../src/retention.js';
import { ENGINE } from '../engine.js';
import { call, clickBody, clickRow, conversionBody, createTestContext, makeStore, type TestContext } from '../helpers.js';

const DAY_MS = 86_400_000;
const RETENTION_DAYS = 30;

const iso = (ms: number) => new Date(ms).toISOString();

/** A click row as the tracking endpoint stores it (for times the endpoint refuses: over 90 days old). */
function expiredClick(ctx: TestContext, storeId: string, time: number, fbclid: string): ClicksTable {
  return clickRow(ctx, storeId, {
    fbclid,
    click_time: time,
    landing_page: `https://shop.acme.test/p?fbclid=${fbclid}&campaign_id=old`,
    ip_address: '203.0.113.9',
    user_agent: 'Mozilla/5.0',
    campaign_id: 'old',
  });
}

function conversionRow(ctx: TestContext, storeId: string, time: number, orderId: string, click?: ClicksTable): ConversionsTable {
  return {
    id: newId('conversion', time),
    account_id: ctx.a.accountId,
    store_id: storeId,
    livemode: 1,
    event_type: 'Purchase',
    order_id: orderId,
    event_id: orderId,
    event_time: time,
    created_at: time,
    value_minor: 2500,
    currency: 'USD',
    products: '[]',
    user_data: '{}',
    email_hash: null,
    phone_hash: null,
    ip_address: null,
    user_agent: null,
    fingerprint: null,
    ref_click_id: click?.id ?? null,
    ref_fbclid: null,
    ref_fbc: null,
    fbp: null,
    event_source_url: null,
    attributed: click ? 1 : 0,
    attributed_click_id: click?.id ?? null,
    attributed_fbclid: click?.fbclid ?? null,
    confidence: click ? 100 : null,
    attribution_signal: click ? 'explicit' : null,
    capi_status: 'pending',
    capi_attempts: 0,
    capi_last_error: null,
    capi_sent_at: null,
  };
}

function outboxJob(conversion: ConversionsTable) {
  return {
    conversion_id: conversion.id,
    account_id: conversion.account_id,
    store_id: conversion.store_id,
    destination: 'meta',
    job_key: '',
    kind: 'conversion' as const,
    livemode: conversion.livemode,
    route: '123456:',
    payload: '{}',
    status: 'pending' as const,
    attempts: 0,
    next_attempt_at: conversion.event_time,
    expires_at: conversion.event_time + 7 * DAY_MS,
    claimed_by: null,
    last_error: null,
    trace_id: null,
    created_at: conversion.event_time,
    updated_at: conversion.event_time,
    sent_at: null,
  };
}

describe(`retention (${ENGINE})`, () => {
  let ctx: TestContext;
  let storeId: string;
  let now: number;
  let before: number;

  beforeEach(async () => {
    ctx = await createTestContext();
    // A 90-day window, so that a new conversion can be attributed to a click older than the retention.
    storeId = await makeStore(ctx.app, ctx.a.live, { attributionWindowDays: 90 });
    now = Date.now();
    before = now - RETENTION_DAYS * DAY_MS;
  });
  afterEach(async () => ctx.close());

  const track = async (path: 'click' | 'conversion', body: Record<string, unknown>) => {
    const res = await call(ctx.app, 'POST', `/v1/track/${path}`, { key: ctx.a.live, body });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data;
  };
  const click = async (daysAgo: number, fbclid: string): Promise<string> =>
    (await track('click', clickBody(storeId, { fbclid, timestamp: iso(now - daysAgo * DAY_MS) }))).clickId;
  const convert = async (daysAgo: number, fields: Record<string, unknown>): Promise<string> =>
    (await track('conversion', conversionBody(storeId, { ...fields, timestamp: iso(now - daysAgo * DAY_MS) }))).conversionId;

  const ids = async (table: 'clicks' | 'conversions') =>
    (await ctx.database.read.selectFrom(table).select('id').orderBy('id').execute()).map((r) => r.id);
  const touchpoints = async () =>
    (
      await ctx.database.read
        .selectFrom('touchpoints')
        .select(['conversion_id', 'click_id'])
        .orderBy('conversion_id')
        .orderBy('click_id')
        .execute()
    ).map((t) => `${t.conversion_id}→${t.click_id}`);
  const outbox = async () =>
    (
      await ctx.database.read
        .selectFrom('destination_jobs')
        .select('conversion_id')
        .where('destination', '=', 'meta')
        .orderBy('conversion_id')
        .execute()
    ).map((r) => r.conversion_id);
  const fold = () => refreshRollups(ctx.database, { id: storeId, timezone: 'UTC' });

  /** Every rollup row, in key order: what analytics answers from. */
  const rollups = async () => ({
    days: await ctx.database.read
      .selectFrom('rollup_days')
      .selectAll()
      .orderBy('store_id')
      .orderBy('livemode')
      .orderBy('local_date')
      .orderBy('currency')
      .execute(),
    hours: await ctx.database.read
      .selectFrom('rollup_hours')
      .selectAll()
      .orderBy('store_id')
      .orderBy('livemode')
      .orderBy('local_date')
      .orderBy('hour_start')
      .orderBy('currency')
      .execute(),
    dimensionClicks: await ctx.database.read
      .selectFrom('rollup_dimension_clicks')
      .selectAll()
      .orderBy('store_id')
      .orderBy('livemode')
      .orderBy('dimension')
      .orderBy('local_date')
      .orderBy('value')
      .execute(),
    dimensionCredits: await ctx.database.read
      .selectFrom('rollup_dimension_credits')
      .selectAll()
      .orderBy('store_id')
      .orderBy('livemode')
      .orderBy('dimension')
      .orderBy('model')
      .orderBy('local_date')
      .orderBy('value')
      .orderBy('currency')
      .execute(),
    monthClicks: await ctx.database.read
      .selectFrom('rollup_month_clicks')
      .selectAll()
      .orderBy('store_id')
      .orderBy('livemode')
      .orderBy('dimension')
      .orderBy('local_month')
      .orderBy('value')
      .execute(),
    monthCredits: await ctx.database.read
      .selectFrom('rollup_month_credits')
      .selectAll()
      .orderBy('store_id')
      .orderBy('livemode')
      .orderBy('dimension')
      .orderBy('model')
      .orderBy('local_month')
      .orderBy('value')
      .orderBy('currency')
      .execute(),
  });

  /**
   * Runs retention's steps until one says nothing more is left; returns each batch's count (a
   * month PostgreSQL dropped whole, in a step of its own, counted with the batch after it).
   */
  const expireAll = async (limit: number) => {
    const batches: number[] = [];
    let months = 0;
    for (;;) {
      const deleted = await ctx.database.write((trx) => deleteExpiredEvents(trx, before, limit, subtractDeleted));
      if (deleted.month !== undefined) months += deleted.clicks + deleted.conversions;
      else {
        batches.push(months + deleted.clicks + deleted.conversions);
        months = 0;
      }
      if (!deleted.more) return batches;
      if (batches.length > 50) throw new Error('retention does not end');
    }
  };

  it('deletes exactly the expired clicks and conversions and their dependants, and leaves the rollups as they were', async () => {
    // Expired: a click too old for the API (200 days) and its conversion, with an outbox job.
    const ancientClick = expiredClick(ctx, storeId, now - 200 * DAY_MS, 'fb_ancient');
    const ancientConversion = conversionRow(ctx, storeId, now - 199 * DAY_MS, 'order_ancient', ancientClick);
    await ctx.database.write(async (trx) => {
      await insertClickOnce(trx, ancientClick);
      await recordConversionOnce(trx, {
        conversion: ancientConversion,
        touchpoints: [
          {
            conversion_id: ancientConversion.id,
            click_id: ancientClick.id,
            signal: 'explicit',
            score: 100,
            click_time: ancientClick.click_time,
          },
        ],
        jobs: [outboxJob(ancientConversion)],
      });
    });
    // Expired, through the API: clicks 40 and 35 days old, a conversion of 39 days on the first.
    const oldClick = await click(40, 'fb_old');
    const oldConversion = await convert(39, { fbclid: 'fb_old' });
    const oldClickOfNew = await click(35, 'fb_old_of_new');
    const unattributedOld = await convert(45, {});

    // Kept: a click and a conversion of a day ago, and a new conversion attributed to the 35-day-old click.
    const newClick = await click(1, 'fb_new');
    const newConversion = await convert(1, { fbclid: 'fb_new' });
    const newOnOldClick = await convert(2, { fbclid: 'fb_old_of_new' });
    const boundaryClick = await click(RETENTION_DAYS - 0.01, 'fb_boundary');

    await ctx.database.write(async (trx) => {
      const rows = await trx.selectFrom('conversions').selectAll().where('id', 'in', [oldConversion, newConversion]).execute();
      for (const conversion of rows) await trx.insertInto('destination_jobs').values(outboxJob(conversion)).execute();
    });
    expect(await touchpoints()).toEqual(
      [
        `${ancientConversion.id}→${ancientClick.id}`,
        `${oldConversion}→${oldClick}`,
        `${newConversion}→${newClick}`,
        `${newOnOldClick}→${oldClickOfNew}`,
      ].sort(),
    );

    await fold();
    const metricsQuery = `/v1/analytics/metrics?storeId=${storeId}&startDate=${iso(now - 300 * DAY_MS).slice(0, 10)}&endDate=${iso(now).slice(0, 10)}`;
    const metricsBefore = (await call(ctx.app, 'GET', metricsQuery, { key: ctx.a.live })).body.data;
    expect(metricsBefore).toMatchObject({ totalClicks: 5, totalConversions: 5 });
    const rollupsBefore = await rollups();

    const batches = await expireAll(1000);
    expect(batches).toEqual([6]); // 3 clicks, 3 conversions

    expect(await ids('clicks')).toEqual([newClick, boundaryClick].sort());
    expect(await ids('conversions')).toEqual([newConversion, newOnOldClick].sort());
    // The new conversion's touchpoint on the expired click went with the click.
    expect(await touchpoints()).toEqual([`${newConversion}→${newClick}`]);
    expect(await outbox()).toEqual([newConversion]);
    expect(await ctx.database.read.selectFrom('rollup_queue').select('id').execute()).toEqual([]);

    // It keeps what it was attributed to, as recorded.
    const kept = await call(ctx.app, 'GET', `/v1/conversions/${newOnOldClick}`, { key: ctx.a.live });
    expect(kept.status).toBe(200);
    expect(kept.body.data).toMatchObject({ attributed: true, attributedTo: { clickId: oldClickOfNew, fbclid: 'fb_old_of_new' } });
    expect(kept.body.data.attribution.touchpoints).toEqual([]);
    expect((await call(ctx.app, 'GET', `/v1/clicks/${oldClick}`, { key: ctx.a.live })).status).toBe(404);
    expect((await call(ctx.app, 'GET', `/v1/clicks/${newClick}`, { key: ctx.a.live })).status).toBe(200);
    expect((await call(ctx.app, 'GET', `/v1/conversions/${unattributedOld}`, { key: ctx.a.live })).status).toBe(404);

    // The aggregates stay: analytics answer for the expired days as before.
    expect((await call(ctx.app, 'GET', metricsQuery, { key: ctx.a.live })).body.data).toEqual(metricsBefore);
    expect(await rollups()).toEqual(rollupsBefore);

    // Nothing left: a second run deletes nothing.
    expect(await expireAll(1000)).toEqual([0]);
  });

  it('takes the destination jobs of expired conversions and the click ids of expired clicks along', async () => {
    const oldClick = (
      await track('click', clickBody(storeId, { gclid: 'gclid_old', ttclid: 'tt_old', timestamp: iso(now - 40 * DAY_MS) }))
    ).clickId;
    const newClick = (await track('click', clickBody(storeId, { gclid: 'gclid_new', timestamp: iso(now - DAY_MS) }))).clickId;
    const oldConversion = await convert(39, {});
    const newConversion = await convert(1, {});
    await ctx.database.write(async (trx) => {
      for (const [conversionId, destination] of [
        [oldConversion, 'google_ads'],
        [oldConversion, 'tiktok'],
        [newConversion, 'google_ads'],
      ] as const) {
        await trx
          .insertInto('destination_jobs')
          .values({
            conversion_id: conversionId,
            destination,
            job_key: '',
            kind: 'conversion',
            account_id: ctx.a.accountId,
            store_id: storeId,
            livemode: 1,
            route: '',
            payload: '{}',
            status: 'pending',
            attempts: 0,
            next_attempt_at: now + DAY_MS,
            expires_at: now + DAY_MS,
            claimed_by: null,
            last_error: null,
            trace_id: null,
            created_at: now,
            updated_at: now,
            sent_at: null,
          })
          .execute();
      }
    });
    const clickIds = async () =>
      (await ctx.database.read.selectFrom('click_ids').select(['kind', 'value', 'click_id']).orderBy('value').execute()).map(
        (r) => `${r.kind}:${r.value}→${r.click_id}`,
      );
    const jobs = async () =>
      (
        await ctx.database.read
          .selectFrom('destination_jobs')
          .select(['conversion_id', 'destination'])
          .orderBy('destination')
          .execute()
      ).map((r) => `${r.conversion_id}:${r.destination}`);
    expect(await clickIds()).toEqual([`gclid:gclid_new→${newClick}`, `gclid:gclid_old→${oldClick}`, `ttclid:tt_old→${oldClick}`]);
    await fold();

    expect(await expireAll(1000)).toEqual([2]);
    expect(await clickIds()).toEqual([`gclid:gclid_new→${newClick}`]);
    expect(await jobs()).toEqual([`${newConversion}:google_ads`]);

    // The expired click's ids are free again: a new click with one of them is not a duplicate.
    const again = await track('click', clickBody(storeId, { gclid: 'gclid_old' }));
    expect(again.duplicate).toBe(false);
  });

  it('works in bounded batches', async () => {
    for (let i = 0; i < 5; i++) await click(40 + i, `fb_batch_${i}`);
    for (let i = 0; i < 4; i++) await convert(40 + i, {});
    await click(1, 'fb_new');
    await fold();

    expect(await expireAll(2)).toEqual([2, 2, 2, 2, 1]);
    expect(await ids('clicks')).toHaveLength(1);
    expect(await ids('conversions')).toEqual([]);
  });

  it('keeps an expired event until the rollups have folded it in', async () => {
    const oldClick = await click(40, 'fb_unfolded');
    await convert(39, { fbclid: 'fb_unfolded' });
    // Queued, not folded: deleting them now would lose them from the rollups.
    expect(await expireAll(10)).toEqual([0]);
    expect(await ids('clicks')).toEqual([oldClick]);

    // The conversion folded, the click queued again (as a time zone rebuild does): the click stays until folded in again.
    await fold();
    await ctx.database.write((trx) =>
      trx.insertInto('rollup_queue').values({ id: oldClick, store_id: storeId, kind: 'click', version: 0 }).execute(),
    );
    expect(await expireAll(10)).toEqual([1]);
    expect(await ids('conversions')).toEqual([]);
    expect(await ids('clicks')).toEqual([oldClick]);

    // A click credited by a queued conversion waits for that conversion's fold as well.
    await fold();
    const newOnOld = await convert(1, { fbclid: 'fb_unfolded' });
    expect(await touchpoints()).toEqual([`${newOnOld}→${oldClick}`]);
    expect(await expireAll(10)).toEqual([0]);
    await fold();
    expect(await expireAll(10)).toEqual([1]);
    expect(await ids('clicks')).toEqual([]);
    expect(await touchpoints()).toEqual([]);
  });

  it('runs in the background until nothing is left, in one write per batch', async () => {
    for (let i = 0; i < 5; i++) await click(40 + i, `fb_bg_${i}`);
    await click(1, 'fb_new');
    await fold();

    let writes = 0;
    const counting: Database = {
      ...ctx.database,
      // Retention writes through its jobs (retention.ts): on SQLite the writer thread runs them.
      runWrite: async (job, arg) => {
        const result = await ctx.database.runWrite(job, arg);
        // A month PostgreSQL drops whole is a write of its own (db/postgres/retention.ts).
        if ((result as { month?: string } | undefined)?.month === undefined) writes++;
        return result;
      },
    };
    const done = new Promise<{ clicks: number; conversions: number }>((resolve) => {
      const retention = startRetention(counting, {
        days: RETENTION_DAYS,
        firstRunMs: 0,
        batchSize: 2,
        onDeleted: (deleted) => void retention.stop().then(() => resolve(deleted)),
      });
    });
    expect(await done).toEqual({ clicks: 5, conversions: 0 });
    expect(writes).toBe(4); // events 2 + 2 + 1, then identity links: one write that finds none
    expect(await ids('clicks')).toHaveLength(1);
  });

  it('sizes batches by time where requests wait for them (SQLite), by count where they do not', () => {
    expect(retentionBatchBudgetMs(ctx.database.read)).toBe(ENGINE === 'sqlite' ? 10 : undefined);
  });

  it('reports a failing run once, and again only after a run succeeded', async () => {
    // The months PostgreSQL drops whole go first, so that a run is the two writes counted below.
    await expireAll(1000);
    let failing = true;
    const errors: unknown[] = [];
    let runs = 0;
    const flaky: Database = {
      ...ctx.database,
      runWrite: async (job, arg) => {
        runs++;
        if (failing) throw new Error('database unreachable');
        return ctx.database.runWrite(job, arg);
      },
    };
    const retention = startRetention(flaky, {
      days: RETENTION_DAYS,
      firstRunMs: 0,
      intervalMs: 5,
      onError: (e) => errors.push(e),
    });
    try {
      await waitFor(() => runs >= 5);
      expect(errors).toHaveLength(1);
      expect((errors[0] as Error).message).toBe('database unreachable');
      failing = false;
      const succeeded = runs;
      await waitFor(() => runs >= succeeded + 2);
      failing = true;
      const failed = runs;
      await waitFor(() => runs >= failed + 3);
      expect(errors).toHaveLength(2);
    } finally {
      await retention.stop();
    }
    const stoppedAt = runs;
    await new Promise((r) => setTimeout(r, 30));
    expect(runs).toBe(stoppedAt);
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 2));
  }
}

describe('RETENTION_DAYS', () => {
  it('is unset by default: events are kept forever', () => {
    expect(loadConfig({}).retentionDays).toBeUndefined();
    expect(loadConfig({ RETENTION_DAYS: '' }).retentionDays).toBeUndefined();
  });

  it('takes a whole number of days from 1 to 36500', () => {
    expect(loadConfig({ RETENTION_DAYS: '1' }).retentionDays).toBe(1);
    expect(loadConfig({ RETENTION_DAYS: '90' }).retentionDays).toBe(90);
    expect(loadConfig({ RETENTION_DAYS: '36500' }).retentionDays).toBe(36_500);
  });

  it.each(['0', '36501', '-1', '1.5', '30d', 'forever', ' 30'])('refuses %j, naming the variable', (value) => {
    expect(() => loadConfig({ RETENTION_DAYS: value })).toThrow(ConfigError);
    expect(() => loadConfig({ RETENTION_DAYS: value })).toThrow(/^RETENTION_DAYS must be/);
  });
});
