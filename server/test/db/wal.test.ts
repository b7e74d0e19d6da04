import { existsSync, fdatasync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { threadId } from 'node:worker_threads';
import SqliteDriver from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type Database, isUnavailableError } from '../../src/db/database.js';
import { openSqlite } from '../../src/db/sqlite/database.js';
import { call, conversionBody, createTestContext, makeStore, tempDir } from '../helpers.js';
import { BACKGROUND_NOTE, NOTE, TRACE_SYNCS } from './write-job.fixture.js';

/** Worker threads that run the fixture's jobs too. */
const JOBS_THREAD = new URL('./write-job.worker.ts', import.meta.url);

// Every fdatasync of the log (the database's own, on this thread) is held until the test
// releases it, so a test can see what is answered before and after the disk confirms.
const syncs = { hold: false, fail: false, waiting: [] as Array<() => void>, calls: 0 };
const heldFdatasync = (fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => {
  syncs.calls++;
  const run = syncs.fail
    ? () => callback(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }))
    : () => fdatasync(fd, callback);
  if (syncs.hold) syncs.waiting.push(run);
  else run();
};

/** How long a wait for the database may take: other test files share the two cores meanwhile. */
const WAIT = { timeout: 10_000, interval: 10 };

const release = () => {
  const waiting = syncs.waiting.splice(0);
  for (const run of waiting) run();
  return waiting.length;
};

let dataDir = '';
let database: Database | undefined;

async function open(options: Parameters<typeof openSqlite>[1] = {}) {
  dataDir = tempDir('waytrack-wal-');
  database = openSqlite(dataDir, { threadEntry: JOBS_THREAD, ...options, wal: { fdatasync: heldFdatasync, ...options.wal } });
  await database.migrate();
  await database.write((trx) => trx.schema.createTable('notes').addColumn('n', 'integer').execute());
  return database;
}

afterEach(async () => {
  syncs.hold = false;
  syncs.fail = false;
  release();
  await database?.close();
  database = undefined;
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  dataDir = '';
});

const count = async (db: Database) =>
  Number(
    (
      (await db.read
        .selectFrom('notes' as never)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()) as { n: number }
    ).n,
  );

const insert = (db: Database, n: number) =>
  db.write((trx) =>
    trx
      .insertInto('notes' as never)
      .values({ n } as never)
      .execute(),
  );

describe('group commit on the write-ahead log', () => {
  it('acknowledges a write only after a sync that began after its commit; writes arriving meanwhile commit at once and share the next sync', async () => {
    const db = await open();
    syncs.hold = true;
    const answered: number[] = [];
    const first = insert(db, 1).then(() => answered.push(1));
    await vi.waitFor(() => expect(syncs.waiting.length).toBe(1), WAIT); // committed, its sync pending
    const later = [2, 3, 4].map((n) => insert(db, n).then(() => answered.push(n)));
    // They commit while the disk works (readable by then), unanswered, and start
    // no sync of their own while one is in flight.
    await vi.waitFor(async () => expect(await count(db)).toBe(4), WAIT);
    await new Promise((r) => setTimeout(r, 30));
    expect(answered).toEqual([]);
    expect(syncs.waiting.length).toBe(1);
    release();
    await first;
    expect(answered).toEqual([1]); // that sync began before their commit: it does not count for them
    await vi.waitFor(() => expect(syncs.waiting.length).toBe(1), WAIT); // one more sync, for the three
    await new Promise((r) => setTimeout(r, 30));
    expect(answered).toEqual([1]);
    release();
    await Promise.all(later);
    expect(answered.sort()).toEqual([1, 2, 3, 4]);
  });

  it('runs WriteJobs on the writer thread in the group commit: a failing job rolls back alone, errors keep their code', async () => {
    const db = await open();
    const outcomes = await Promise.allSettled([
      db.runWrite(NOTE, { n: 1 }),
      db.runWrite(NOTE, { n: 2, fail: true }),
      db.write((trx) =>
        trx
          .insertInto('notes' as never)
          .values({ n: 3 } as never)
          .execute(),
      ),
      db.runWrite(NOTE, { n: 4 }),
      db.runWrite(NOTE, { n: 5, table: 'no_such_table' }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'rejected']);
    const [one, two, , four, five] = outcomes;
    // Not this thread: the writer thread's.
    expect(one).toMatchObject({ status: 'fulfilled', value: { threadId: expect.any(Number) } });
    expect((one as PromiseFulfilledResult<{ threadId: number }>).value.threadId).not.toBe(threadId);
    expect((four as PromiseFulfilledResult<{ threadId: number }>).value.threadId).not.toBe(threadId);
    expect((two as PromiseRejectedResult).reason).toMatchObject({ message: 'job 2 failed after its insert' });
    expect((five as PromiseRejectedResult).reason).toMatchObject({ code: 'SQLITE_ERROR' });
    const rows = (await db.read
      .selectFrom('notes' as never)
      .select('n' as never)
      .orderBy('n' as never)
      .execute()) as Array<{ n: number }>;
    expect(rows.map((r) => r.n)).toEqual([1, 3, 4]); // job 2's insert rolled back with it, alone
    expect(syncs.calls).toBeGreaterThanOrEqual(1); // the closure's commit was synced here (the jobs' on the writer thread)
  });

  it("commits the requests' writes before background ones queued earlier, and never starves the background ones", async () => {
    const db = await open();
    // Commit order is rowid order. Background writes first, then the requests' (foreground) in the same turn.
    const background = [101, 102, 103, 104, 105].map((n) => db.runWrite(BACKGROUND_NOTE, { n }));
    const foreground = [1, 2, 3].map((n) => db.runWrite(NOTE, { n }));
    await Promise.all([...background, ...foreground]);
    const order = async () =>
      (
        (await db.read
          .selectFrom('notes' as never)
          .select('n' as never)
          .orderBy(sql`rowid`)
          .execute()) as Array<{ n: number }>
      ).map((r) => r.n);
    const first = await order();
    expect(first.slice(0, 3)).toEqual([1, 2, 3]);
    expect(first.slice(3).sort()).toEqual([101, 102, 103, 104, 105]);
    // A steady stream of the requests' writes, never letting the writer thread idle: a background
    // write still goes once it has waited its turn (BACKGROUND_WAIT_MS), long before the stream ends.
    let streaming = true;
    const stream = (async () => {
      for (let n = 1000; streaming; n++) await Promise.all([db.runWrite(NOTE, { n }), db.runWrite(NOTE, { n: n + 0.5 })]);
    })();
    await new Promise((r) => setTimeout(r, 20));
    const queued = performance.now();
    await db.runWrite(BACKGROUND_NOTE, { n: 200 });
    const waited = performance.now() - queued;
    streaming = false;
    await stream;
    expect(waited).toBeLessThan(2_000);
    expect((await order()).includes(200)).toBe(true);
  });

  it('never acknowledges a write whose sync failed, and goes on with later writes', async () => {
    const db = await open();
    syncs.fail = true;
    const failed = await insert(db, 1).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failed).toMatchObject({ code: 'EIO' });
    expect(isUnavailableError(failed)).toBe(true); // answered 503: nothing was acknowledged, retry is safe
    syncs.fail = false;
    await insert(db, 2);
    expect(syncs.calls).toBeGreaterThanOrEqual(2);
  });

  it('close waits for pending syncs, then leaves nothing but the database file', async () => {
    const db = await open();
    syncs.hold = true;
    const write = insert(db, 7);
    await vi.waitFor(() => expect(syncs.waiting.length).toBe(1), WAIT);
    const closing = db.close();
    database = undefined;
    await new Promise((r) => setTimeout(r, 30));
    release();
    syncs.hold = false;
    await write;
    await closing;
    const file = path.join(dataDir, 'waytrack.db');
    expect(existsSync(`${file}-wal`)).toBe(false);
    const raw = new SqliteDriver(file, { readonly: true });
    expect(raw.prepare('select n from notes').all()).toEqual([{ n: 7 }]);
    raw.close();
  });

  it('checkpoints in a worker, and the log stops growing under concurrent commits', async () => {
    // finishWaitMs 0: the last step does not wait for a gap between these back-to-back writes.
    const db = await open({ wal: { checkpointBytes: 64 * 1024, checkpointIntervalMs: 0, finishWaitMs: 0 } });
    const file = path.join(dataDir, 'waytrack.db');
    const payload = 'x'.repeat(2000);
    await db.write((trx) => trx.schema.createTable('blobs').addColumn('b', 'text').execute());
    // ~2 KB a row: every commit appends at least one 4 KB page to the log, so without
    // checkpoints — or with checkpoints that never complete because a commit always lands
    // during them — it would reach 6 MB. Eight writers keep a commit in progress at all times.
    const WRITERS = 8;
    const WRITES = 1500;
    let largest = 0;
    let n = 0;
    const writer = async () => {
      while (n < WRITES) {
        const i = n++;
        await db.write((trx) =>
          trx
            .insertInto('blobs' as never)
            .values({ b: `${i}${payload}` } as never)
            .execute(),
        );
        largest = Math.max(largest, statSync(`${file}-wal`).size);
      }
    };
    await Promise.all(Array.from({ length: WRITERS }, writer));
    // Without a completed checkpoint the log would hold every commit (≥ 6 MB). Two thirds of that:
    // with the other core busy (CI beside a CPU hog) the checkpoint worker lags, seen at 3.5 MB.
    expect(largest).toBeLessThan((WRITES * 4096 * 2) / 3);
    const count = await db.read
      .selectFrom('blobs' as never)
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number((count as { n: number }).n)).toBe(WRITES);
  });

  it('truncates the log once a burst is over, and writes go on after it', async () => {
    // One checkpoint a minute at most: the burst leaves the log at its peak (a restarted log keeps its size).
    const db = await open({
      wal: { checkpointBytes: 64 * 1024, checkpointIntervalMs: 60_000, idleTruncateMs: 300, idleTruncateBytes: 64 * 1024 },
    });
    const wal = path.join(dataDir, 'waytrack.db-wal');
    const payload = 'y'.repeat(2000);
    await db.write((trx) => trx.schema.createTable('blobs').addColumn('b', 'text').execute());
    let largest = 0;
    for (let batch = 0; batch < 20; batch++) {
      await Promise.all(
        Array.from({ length: 25 }, (_, i) =>
          db.write((trx) =>
            trx
              .insertInto('blobs' as never)
              .values({ b: `${batch}-${i}${payload}` } as never)
              .execute(),
          ),
        ),
      );
      largest = Math.max(largest, statSync(wal).size);
    }
    expect(largest).toBeGreaterThan(500 * 1024);
    // Quiet now: within the idle time (and the checkpoint's own), the file is cut to nothing.
    await vi.waitFor(() => expect(statSync(wal).size).toBe(0), { timeout: 3000, interval: 50 });
    // The log starts again from its beginning: writes work and are readable.
    await insert(db, 42);
    expect(await count(db)).toBe(1);
    expect(statSync(wal).size).toBeGreaterThan(0);
    expect(statSync(wal).size).toBeLessThan(64 * 1024);
  });

  it('answers a duplicate conversion only after a sync of the log, on the writer thread, that began after the request', async () => {
    // The write finds the duplicate itself, on the writer thread; the original's commit may still
    // be waiting for its sync there (a concurrent identical request). The duplicate writes
    // nothing, yet its batch must be answered only after a sync that began after it: that one
    // covers the original's commit (a sync of the log covers every commit before it).
    const ctx = await createTestContext({ threadEntry: JOBS_THREAD }); // TRACE_SYNCS is a test module's job
    try {
      const storeId = await makeStore(ctx.app, ctx.a.live);
      const post = () =>
        call(ctx.app, 'POST', '/v1/track/conversion', { key: ctx.a.live, body: conversionBody(storeId, { orderId: 'sync-1' }) });
      // The key's first use is recorded by a write of its own after the answer (once a minute per
      // key): let it reach the disk first, so that only the duplicate's batch syncs meanwhile.
      const original = await post();
      expect(original.body.data.duplicate).toBe(false);
      await vi.waitFor(async () => {
        const key = await ctx.database.read
          .selectFrom('api_keys')
          .select('last_used_at')
          .where('account_id', '=', ctx.a.accountId)
          .where('last_used_at', 'is not', null)
          .executeTakeFirst();
        expect(key).toBeDefined();
      }, WAIT);
      await new Promise((r) => setTimeout(r, 50));
      const traced = await ctx.database.runWrite(TRACE_SYNCS, { on: true });
      expect(traced.threadId).not.toBe(threadId); // the writer thread's syncs are the ones traced
      const clock = () => performance.timeOrigin + performance.now();
      const sent = clock();
      const second = await post();
      const answered = clock();
      const { syncs: writerSyncs } = await ctx.database.runWrite(TRACE_SYNCS, { on: false });
      expect(second.status).toBe(200);
      expect(second.body.data.duplicate).toBe(true);
      const during = writerSyncs.filter((s) => s.started > sent && s.finished < answered);
      expect(during).toHaveLength(1);
    } finally {
      await ctx.close();
    }
  });
});
