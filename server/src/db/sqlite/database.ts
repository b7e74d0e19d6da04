import path from 'node:path';
import SqliteDriver from 'better-sqlite3';
import type { Kysely } from 'kysely';
import { crashPoint, testWalOptions } from '../../crash-point.js';
import { makePrivateDir, touchPrivateFile } from '../../data-dir.js';
import type { Database, Writer } from '../database.js';
import { checkSchema, migrateToLatest } from '../migrations/index.js';
import type { DB } from '../schema.js';
import { sqliteKysely } from './connection.js';
import { WalKeeper, type WalOptions } from './wal.js';
import { SqliteWorker } from './worker-thread.js';

/**
 * The embedded engine. SQLite has one writer: writes of concurrent requests share one
 * transaction and one fsync (group commit); each runs inside its own savepoint, so one failing
 * write rolls back alone and never takes its neighbours with it. The fsync runs on the thread
 * pool (wal.ts), so the event loop serves requests while the disk works.
 */
interface WriteJob {
  work: (trx: Writer) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

const MAX_BATCH = 256;

/** A gap between writes this long counts as a quiet moment (see `quiet`). */
const QUIET_MS = 5;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

class GroupCommitter {
  private queue: WriteJob[] = [];
  private scheduled = false;
  private flushing = false;
  private lastActivity = 0;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly wal: WalKeeper,
  ) {}

  enqueue<T>(work: (trx: Writer) => Promise<T>): Promise<T> {
    this.lastActivity = performance.now();
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (v: unknown) => void, reject });
      this.schedule();
    });
  }

  /** Waits until every queued write has been committed and synced, or rejected. */
  async drain(): Promise<void> {
    while (this.queue.length > 0 || this.flushing || this.scheduled) {
      await new Promise((r) => setImmediate(r));
    }
  }

  /**
   * Resolves once no write has been queued or committed for `QUIET_MS`, or after `maxWaitMs`:
   * the log checkpoint's last step holds the writer, and waits for such a moment so that the
   * requests' writes of a busy burst go first.
   */
  async quiet(maxWaitMs: number): Promise<void> {
    const deadline = performance.now() + maxWaitMs;
    for (;;) {
      const now = performance.now();
      const busy = this.flushing || this.scheduled || this.queue.length > 0;
      const idleFor = busy ? 0 : now - this.lastActivity;
      if (idleFor >= QUIET_MS || now >= deadline) return;
      await sleep(Math.min(QUIET_MS - idleFor, deadline - now));
    }
  }

  private schedule(): void {
    if (this.scheduled || this.flushing) return;
    this.scheduled = true;
    // setImmediate lets every request already parsed in this turn of the event loop join the batch.
    setImmediate(() => void this.flush());
  }

  /**
   * Commits one batch, syncs it and answers its writes. The next batch waits for this sync:
   * writes that arrive meanwhile join it, so under load a commit and a sync serve many
   * requests (the disk sets the pace), while an idle server commits at once.
   */
  private async flush(): Promise<void> {
    this.scheduled = false;
    this.flushing = true;
    const jobs = this.queue.splice(0, MAX_BATCH);
    try {
      let outcomes: Outcome[];
      try {
        await this.wal.beforeCommit();
        try {
          outcomes = await this.transaction(jobs);
        } finally {
          this.wal.afterCommit();
        }
      } catch (error) {
        // The transaction itself failed (disk full, I/O error): nothing of this batch is durable.
        for (const job of jobs) job.reject(error);
        return;
      }
      crashPoint('commit'); // test hook (crash-point.ts): committed, not synced nor answered
      try {
        await this.wal.sync(); // on the thread pool: requests are served meanwhile
      } catch (error) {
        // Committed but perhaps not on disk: never acknowledge it as durable.
        for (const job of jobs) job.reject(error);
        return;
      }
      jobs.forEach((job, i) => {
        const outcome = outcomes[i] as Outcome;
        if (outcome.ok) job.resolve(outcome.value);
        else job.reject(outcome.error);
      });
    } finally {
      this.flushing = false;
      this.lastActivity = performance.now();
      if (this.queue.length > 0) this.schedule();
    }
  }

  /** Runs each job in its own savepoint of one transaction and commits it (not yet synced). */
  private async transaction(jobs: WriteJob[]): Promise<Outcome[]> {
    const outcomes: Outcome[] = [];
    const trx = await this.db.startTransaction().execute();
    try {
      for (const job of jobs) {
        const sp = await trx.savepoint('job').execute();
        try {
          const value = await job.work(sp);
          await sp.releaseSavepoint('job').execute();
          outcomes.push({ ok: true, value });
        } catch (error) {
          await sp.rollbackToSavepoint('job').execute();
          await sp.releaseSavepoint('job').execute();
          outcomes.push({ ok: false, error });
        }
      }
      await trx.commit().execute();
    } catch (error) {
      await trx
        .rollback()
        .execute()
        .catch(() => {});
      throw error;
    }
    return outcomes;
  }
}

export interface SqliteOptions {
  fileName?: string;
  wal?: WalOptions;
  onError?: (error: unknown) => void;
}

/**
 * The embedded database in `dataDir` (created if missing). The directory is created 0700 and the
 * file 0600 before SQLite opens it; SQLite gives its -wal and -shm files the database file's
 * permissions (test/unit/data-dir.test.ts checks it).
 */
export function openSqlite(dataDir: string, options: SqliteOptions = {}): Database {
  makePrivateDir(dataDir);
  const file = path.join(dataDir, options.fileName ?? 'waytrack.db');
  touchPrivateFile(file);
  const raw = new SqliteDriver(file);
  raw.pragma('journal_mode = WAL');
  // After a checkpoint has reset the log, SQLite truncates the file to this size: a burst of
  // writes must not leave a log of hundreds of MB on a small disk for good.
  raw.pragma('journal_size_limit = 67108864');
  const db = sqliteKysely(raw);
  const wal: WalKeeper = new WalKeeper(
    file,
    { ...testWalOptions(), ...options.wal, quiet: (maxWaitMs) => committer.quiet(maxWaitMs) },
    options.onError,
  );
  const committer: GroupCommitter = new GroupCommitter(db, wal);
  const background = new SqliteWorker(file, true);
  return {
    read: db,
    write: (work) => committer.enqueue(work),
    runWrite: (job, arg) => committer.enqueue((trx) => job.run(trx, arg)),
    durable: () => wal.sync(),
    background: (job, arg) => background.run({ type: 'job', module: job.module, name: job.name, arg }),
    async migrate() {
      const applied = await migrateToLatest(db as unknown as Kysely<unknown>);
      wal.start(); // the database file exists now: the checkpoint worker can open it
      // Keep the planner's statistics current (bounded work), so lookups pick their own index.
      raw.pragma('analysis_limit = 1000');
      raw.pragma('optimize = 0x10002');
      await wal.sync();
      return applied;
    },
    checkSchema: () => checkSchema(db as unknown as Kysely<unknown>),
    async ping() {
      raw.prepare('select 1').get();
    },
    async close() {
      await committer.drain();
      await background.close();
      await wal.close();
      await db.destroy(); // the last connection to close checkpoints the log and removes it
    },
  };
}
