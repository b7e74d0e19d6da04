import { existsSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import SqliteDriver from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type Database, isUnavailableError, openSqlite } from '../../src/db/database.js';
import { call, conversionBody, createTestContext, makeStore, tempDir } from '../helpers.js';

// Every fdatasync of the log is held until the test releases it, so a test can see what is
// answered before and after the disk confirms.
const syncs = vi.hoisted(() => ({ hold: false, fail: false, waiting: [] as Array<() => void>, calls: 0 }));
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const fdatasync = (fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => {
    syncs.calls++;
    const run = syncs.fail
      ? () => callback(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }))
      : () => fs.fdatasync(fd, callback);
    if (syncs.hold) syncs.waiting.push(run);
    else run();
  };
  return { ...fs, default: { ...fs, fdatasync }, fdatasync };
});

const release = () => {
  const waiting = syncs.waiting.splice(0);
  for (const run of waiting) run();
  return waiting.length;
};

let dataDir = '';
let database: Database | undefined;

async function open(options: Parameters<typeof openSqlite>[1] = {}) {
  dataDir = tempDir('waytrack-wal-');
  database = openSqlite(dataDir, options);
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
      (await db.db
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
  it('acknowledges a write only after the log is synced; writes arriving meanwhile share the next commit', async () => {
    const db = await open();
    syncs.hold = true;
    const answered: number[] = [];
    const first = insert(db, 1).then(() => answered.push(1));
    await vi.waitFor(() => expect(syncs.waiting.length).toBe(1)); // committed, its sync pending
    const later = [2, 3, 4].map((n) => insert(db, n).then(() => answered.push(n)));
    await new Promise((r) => setTimeout(r, 30));
    expect(answered).toEqual([]);
    expect(syncs.waiting.length).toBe(1); // the later writes wait for the disk, not in a commit of their own
    // Committed rows are readable before they are acknowledged (see Database.durable).
    expect(await count(db)).toBe(1);
    release();
    await first;
    expect(answered).toEqual([1]);
    await vi.waitFor(() => expect(syncs.waiting.length).toBe(1)); // one commit, one sync for the three
    expect(await count(db)).toBe(4);
    expect(answered).toEqual([1]);
    release();
    await Promise.all(later);
    expect(answered.sort()).toEqual([1, 2, 3, 4]);
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
    await vi.waitFor(() => expect(syncs.waiting.length).toBe(1));
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
    expect(largest).toBeLessThan((WRITES * 4096) / 3);
    const count = await db.db
      .selectFrom('blobs' as never)
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number((count as { n: number }).n)).toBe(WRITES);
  });

  it('quiet() waits for a gap between writes (background work goes after the requests), at most maxWaitMs', async () => {
    const db = await open();
    let started = performance.now();
    await db.quiet(1000);
    expect(performance.now() - started).toBeLessThan(500); // idle: at once (after a few ms of quiet)

    // Back-to-back writes for ~300 ms: quiet() resolves only after they end.
    let writing = true;
    let lastWriteAt = 0;
    const stream = (async () => {
      const until = performance.now() + 300;
      while (performance.now() < until) {
        await insert(db, 1);
        lastWriteAt = performance.now();
      }
      writing = false;
    })();
    await new Promise((r) => setTimeout(r, 20));
    await db.quiet(5000);
    expect(writing).toBe(false);
    expect(performance.now()).toBeGreaterThanOrEqual(lastWriteAt);
    await stream;

    // Writes that never stop: it gives up after maxWaitMs.
    let stop = false;
    const endless = (async () => {
      while (!stop) await insert(db, 2);
    })();
    await new Promise((r) => setTimeout(r, 20));
    started = performance.now();
    await db.quiet(150);
    const waited = performance.now() - started;
    stop = true;
    await endless;
    expect(waited).toBeGreaterThanOrEqual(140);
    expect(waited).toBeLessThan(1000);
  });

  it('writeAlone: another connection writes between two commits, acknowledged after the next sync', async () => {
    const db = await open();
    const other = new SqliteDriver(path.join(dataDir, 'waytrack.db'));
    other.pragma('busy_timeout = 0'); // a transaction of ours left open would make it fail at once
    try {
      syncs.hold = true;
      const before = insert(db, 1);
      await vi.waitFor(() => expect(syncs.waiting.length).toBe(1));
      let answered = false;
      const alone = db
        .writeAlone(async () => {
          other.prepare('insert into notes (n) values (2)').run();
          return 'written';
        })
        .then((value) => {
          answered = true;
          return value;
        });
      const after = insert(db, 3); // queued behind it: a commit of its own, after it
      release(); // the first commit's sync
      await vi.waitFor(() => expect(syncs.waiting.length).toBe(1)); // the alone write's sync
      expect(await count(db)).toBe(2);
      expect(answered).toBe(false);
      syncs.hold = false;
      release();
      expect(await alone).toBe('written');
      await Promise.all([before, after]);
      expect(await count(db)).toBe(3);
    } finally {
      other.close();
    }
  });

  it('answers a duplicate conversion only once the original is on disk', async () => {
    const ctx = await createTestContext();
    try {
      const storeId = await makeStore(ctx.app, ctx.a.live);
      const post = () =>
        call(ctx.app, 'POST', '/v1/track/conversion', { key: ctx.a.live, body: conversionBody(storeId, { orderId: 'sync-1' }) });
      syncs.hold = true;
      const original = post();
      await vi.waitFor(() => expect(syncs.waiting.length).toBe(1)); // committed and readable, not yet on disk
      let answered = false;
      const duplicate = post().then((res) => {
        answered = true;
        return res;
      });
      await vi.waitFor(() => expect(syncs.waiting.length).toBe(2)); // the duplicate found it and waits for a sync
      await new Promise((r) => setTimeout(r, 30));
      expect(answered).toBe(false);
      syncs.hold = false;
      release();
      expect((await original).body.data.duplicate).toBe(false);
      const second = await duplicate;
      expect(second.status).toBe(200);
      expect(second.body.data.duplicate).toBe(true);
    } finally {
      syncs.hold = false;
      release();
      await ctx.close();
    }
  });
});
