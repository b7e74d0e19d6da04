import { type Kysely, sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FOLD_QUEUED, foldQueued } from '../../src/analytics/rollups.js';
import { BACKGROUND_APPLICATION_NAME } from '../../src/db/postgres/worker.js';
import { ENGINE } from '../engine.js';
import { call, clickBody, createTestContext, makeStore, type TestContext } from '../helpers.js';

/**
 * `Database.background` runs its job on a worker thread with a connection of its own, on both
 * engines (the rollup fold's reads and folding: off the event loop serving requests).
 */
describe('background jobs on a thread of their own', () => {
  let ctx: TestContext;
  beforeEach(async () => {
    ctx = await createTestContext();
  });
  afterEach(async () => {
    await ctx.close();
  });

  const raw = () => ctx.database.read as unknown as Kysely<unknown>;
  const queueClicks = async (n: number) => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    for (let i = 0; i < n; i++) {
      const res = await call(ctx.app, 'POST', '/v1/track/click', {
        key: ctx.a.live,
        body: clickBody(storeId, { fbclid: `bg_thread_${i}` }),
      });
      expect(res.status).toBe(200);
    }
    return storeId;
  };

  it('answers what the job answers on the event loop: the same fold, crossed back whole', async () => {
    await queueClicks(5);
    const here = await foldQueued(ctx.database.read, { limit: 100 });
    const there = await ctx.database.background(FOLD_QUEUED, { limit: 100 });
    expect(here?.queued).toHaveLength(5);
    expect(there).toEqual(here);
  });

  it.runIf(ENGINE === 'postgres')('PostgreSQL: on a connection of its own, named in pg_stat_activity', async () => {
    await queueClicks(1);
    await ctx.database.background(FOLD_QUEUED, { limit: 10 });
    const connections = async () =>
      (
        await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
          where datname = current_database() and application_name = ${BACKGROUND_APPLICATION_NAME}`.execute(raw())
      ).rows[0]?.n;
    expect(await connections()).toBe(1);
    await ctx.database.background(FOLD_QUEUED, { limit: 10 });
    expect(await connections()).toBe(1); // the same one, kept
  });

  it("fails with the database's own error code, so an outage still reads as one", async () => {
    await queueClicks(1);
    await sql`drop table rollup_queue`.execute(raw());
    const failed = await ctx.database.background(FOLD_QUEUED, { limit: 10 }).then(
      () => undefined,
      (error: unknown) => error as { code?: string; message: string },
    );
    expect(failed?.message).toMatch(/rollup_queue/);
    expect(failed?.code).toBe(ENGINE === 'postgres' ? '42P01' : 'SQLITE_ERROR');
  });
});
