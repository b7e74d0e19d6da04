import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RollupRefresher, startRollupRefresher } from '../../src/analytics/rollups.js';
import { queueSize } from '../../src/db/repositories/rollup-queue.js';
import { call, createTestContext, makeStore, type TestContext } from '../helpers.js';
import { analyticsApi, utcDaysAgo } from './fixtures.js';

interface Line {
  obj: Record<string, unknown>;
  msg: string;
}

// Long background work tells the operator how far it got: the first build of the rollups after
// an upgrade, and the rebuild after a store's time zone changed.
describe('analytics rollups: progress of long folds', () => {
  let ctx: TestContext;
  let refresher: RollupRefresher | undefined;
  const api = analyticsApi(() => ctx);
  beforeEach(async () => {
    ctx = await createTestContext();
  });
  afterEach(async () => {
    await refresher?.stop();
    refresher = undefined;
    await ctx.close();
  });

  const caughtUp = async () => {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const queued = await queueSize(ctx.database.read);
      if (queued.click === 0 && queued.conversion === 0) return;
      if (Date.now() > deadline) throw new Error('the refresher did not catch up');
      await new Promise((r) => setTimeout(r, 10));
    }
  };

  it('logs rows folded of the total while it works, then once when done, and a rebuild when a time zone changes', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const day = utcDaysAgo(3);
    for (let i = 0; i < 7; i++) await api.click(storeId, `p${i}`, `${day}T0${i}:00:00Z`);
    const lines: Line[] = [];
    const log = { info: (obj: object, msg: string) => lines.push({ obj: obj as Record<string, unknown>, msg }) };
    refresher = startRollupRefresher(ctx.database, { intervalMs: 5, foldEveryMs: 5, chunk: 2, progressEveryMs: 0, log });
    await caughtUp();
    await refresher.stop();

    const progress = lines.filter((l) => l.msg.includes(' rows folded ('));
    expect(progress.map((l) => [l.obj.done, l.obj.total])).toEqual([
      [2, 7],
      [4, 7],
      [6, 7],
      [7, 7],
    ]);
    expect(progress[0]?.msg).toBe('analytics rollups: 2 of 7 rows folded (28%)');
    expect(lines.at(-1)?.msg).toMatch(/^analytics rollups are up to date: 7 rows folded in [\d.]+ s$/);

    // The store moves to another time zone: its events are folded again, in the new zone.
    lines.length = 0;
    const patched = await call(ctx.app, 'PATCH', `/v1/stores/${storeId}`, { key: ctx.a.live, body: { timezone: 'Asia/Tokyo' } });
    expect(patched.status).toBe(200);
    refresher = startRollupRefresher(ctx.database, { intervalMs: 5, foldEveryMs: 5, chunk: 2, progressEveryMs: 0, log });
    const deadline = Date.now() + 15_000;
    while (!lines.some((l) => l.msg.startsWith('analytics rollups are up to date'))) {
      if (Date.now() > deadline) throw new Error(`no rebuild logged:\n${lines.map((l) => l.msg).join('\n')}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(lines[0]).toEqual({
      obj: { storeId, timezone: 'Asia/Tokyo' },
      msg: "rebuilding a store's analytics rollups in its time zone (it changed, or the time zone data did)",
    });
    expect(lines.filter((l) => l.msg.includes(' rows folded (')).at(-1)?.obj).toMatchObject({ done: 7, total: 7 });
  });

  it('says nothing about a fold shorter than the reporting interval', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    await api.click(storeId, 'q1', new Date().toISOString());
    const lines: string[] = [];
    refresher = startRollupRefresher(ctx.database, {
      intervalMs: 5,
      foldEveryMs: 5,
      log: { info: (_obj, msg) => lines.push(msg) },
    });
    await caughtUp();
    await refresher.stop();
    expect(lines).toEqual([]);
  });
});

// docs/operations.md: "analytics rollups could not be refreshed; retrying" once per failure
// streak (its error carries a stack of about 1 KB), and a line when the rollups are refreshed again.
describe('analytics rollups: a failure streak is reported once, and its end', () => {
  let ctx: TestContext;
  let refresher: RollupRefresher | undefined;
  beforeEach(async () => {
    ctx = await createTestContext();
  });
  afterEach(async () => {
    await refresher?.stop();
    refresher = undefined;
    await ctx.close();
  });

  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('a fold failing on every try (the disk is full) warns once, however many ticks pass in between', {
    timeout: 60_000,
  }, async () => {
    let failing = true;
    // The fold fails while everything else works: the ticks between two folds succeed.
    const database = new Proxy(ctx.database, {
      get(target, name, receiver) {
        if (name === 'background' && failing) return () => Promise.reject(new Error('database or disk is full'));
        const value = Reflect.get(target, name, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const errors: unknown[] = [];
    const lines: Line[] = [];
    refresher = startRollupRefresher(database, {
      intervalMs: 5,
      foldEveryMs: 25,
      onError: (error) => errors.push(error),
      log: { info: (obj, msg) => lines.push({ obj: obj as Record<string, unknown>, msg }) },
    });
    await sleep(400); // about 16 failed folds, 80 ticks
    expect(errors).toHaveLength(1);
    expect(String(errors[0])).toContain('disk is full');
    expect(lines).toEqual([]);

    failing = false;
    // The first real fold starts the background worker: seconds on a busy machine.
    const deadline = Date.now() + 25_000;
    while (!lines.some((l) => l.msg.startsWith('analytics rollups are refreshed again'))) {
      if (Date.now() > deadline) throw new Error('no recovery line');
      await sleep(10);
    }
    const recovered = lines.filter((l) => l.msg.startsWith('analytics rollups are refreshed again'));
    expect(recovered).toHaveLength(1);
    expect(recovered[0]?.obj.failedAttempts).toBeGreaterThanOrEqual(5);
    expect(recovered[0]?.msg).toMatch(/^analytics rollups are refreshed again, after \d+ failed attempts over [\d.]+ s$/);

    // A new streak is reported again, once.
    failing = true;
    const again = Date.now() + 10_000;
    while (errors.length < 2) {
      if (Date.now() > again) throw new Error('the new streak was not reported');
      await sleep(10);
    }
    await sleep(300);
    expect(errors).toHaveLength(2);
  });
});
