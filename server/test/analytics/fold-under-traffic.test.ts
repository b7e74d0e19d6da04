import { afterEach, describe, expect, it } from 'vitest';
import { type RollupRefresher, startRollupRefresher } from '../../src/analytics/rollups.js';
import type { Database } from '../../src/db/database.js';
import { bumpQueued, queueSize } from '../../src/db/repositories/rollup-queue.js';
import { createTestContext, makeStore, type TestContext } from '../helpers.js';
import { analyticsApi, utcDaysAgo } from './fixtures.js';

/**
 * Traffic that changes queued conversions while folds run: before every write, the newest queued
 * conversion changes (its first delivery recorded, as deliveries record within their 200 ms
 * linger). A fold whose step holds that conversion is stale and not written. Under a steady load
 * on a slow machine every step took longer than that, so a step that read the whole queue was
 * stale every time and nothing was folded while the load lasted (a crash-loop run waited 45 s
 * for a fold that never came). Smaller steps from the queue's head get through.
 */
function withTraffic(inner: Database, on: () => boolean): Database {
  return {
    ...inner,
    async write(fn) {
      if (on()) {
        await inner.write(async (trx) => {
          const newest = await trx
            .selectFrom('rollup_queue')
            .select('id')
            .where('kind', '=', 'conversion')
            .orderBy('id', 'desc')
            .limit(1)
            .executeTakeFirst();
          if (newest) await bumpQueued(trx, newest.id);
        });
      }
      return inner.write(fn);
    },
  };
}

describe('analytics rollups under traffic that changes queued events', () => {
  let ctx: TestContext;
  let refresher: RollupRefresher | undefined;
  const api = analyticsApi(() => ctx);
  afterEach(async () => {
    await refresher?.stop();
    refresher = undefined;
    await ctx.close();
  });

  it('keeps folding from the head of the queue, and every figure is exact once the traffic stops', async () => {
    let traffic = false;
    ctx = await createTestContext({ wrapDatabase: (inner) => withTraffic(inner, () => traffic) });
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const day = utcDaysAgo(2);
    const values = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120];
    for (const [i, value] of values.entries()) {
      await api.convert(storeId, {
        orderId: `busy-${i}`,
        eventValue: value,
        timestamp: `${day}T10:${String(i).padStart(2, '0')}:00Z`,
      });
    }
    expect((await queueSize(ctx.database.read)).conversion).toBe(values.length);

    traffic = true;
    refresher = startRollupRefresher(ctx.database, { intervalMs: 5, foldEveryMs: 5 });
    // While the newest conversion keeps changing, every other one is folded.
    const deadline = Date.now() + 10_000;
    while ((await queueSize(ctx.database.read)).conversion > 1) {
      if (Date.now() > deadline) throw new Error(`still queued: ${(await queueSize(ctx.database.read)).conversion}`);
      await new Promise((r) => setTimeout(r, 20));
    }

    traffic = false;
    const settled = Date.now() + 10_000;
    while ((await queueSize(ctx.database.read)).conversion > 0) {
      if (Date.now() > settled) throw new Error('the last conversion was not folded once the traffic stopped');
      await new Promise((r) => setTimeout(r, 20));
    }
    await refresher.stop();
    const metrics = await api.getOk(`/v1/analytics/metrics?storeId=${storeId}&startDate=${day}&endDate=${day}`);
    expect(metrics).toMatchObject({ totalConversions: values.length, totalRevenue: 780 });
  });
});
