import path from 'node:path';
import SqliteDriver from 'better-sqlite3';
import type { Kysely } from 'kysely';
import { crashPoint, testWalOptions } from '../../crash-point.js';
import { makePrivateDir, touchPrivateFile } from '../../data-dir.js';
import type { BackgroundErrorHandler, Database, WriteJob, Writer } from '../database.js';
import { checkSchema, migrateToLatest } from '../migrations/index.js';
import type { DB } from '../schema.js';
import { DatabaseThread, rebuiltError, type ThreadedError } from '../worker-thread.js';
import { commitBatch, type Outcome } from './batch.js';
import { sqliteKysely } from './connection.js';
import { SyncSequence } from './sync-sequence.js';
import { WalKeeper, type WalOptions } from './wal.js';

/**
 * The embedded engine. SQLite has one writer: writes of concurrent requests share one
 * transaction and one fsync (group commit), and one failing write rolls back alone and never
 * takes its neighbours with it (batch.ts). The fsync runs on the thread pool (wal.ts), so the
 * event loop serves requests while the disk works. A batch's `WriteJob`s (`runWrite`) run on
 * the writer thread, on a connection of its own, and its closures (`write`) on the event loop;
 * the two never hold the write lock at once (the writer thread commits first, then the event
 * loop), so neither waits on SQLite's lock.
 */
interface QueuedWrite {
  /** A closure, run on this thread… */
  work?: (trx: Writer) => Promise<unknown>;
  /** …or a job of the table of jobs, run on the writer thread. */
  job?: { name: string; arg: unknown };
  /** A background job (`WriteJob.background`) and when it was queued. */
  background?: number;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type ThreadedJob = NonNullable<QueuedWrite['job']>;
type ThreadedOutcome = { ok: true; value: unknown } | { ok: false; error: ThreadedError };

const MAX_BATCH = 256;

/** A gap between writes this long counts as a quiet moment (see `quiet`). */
const QUIET_MS = 5;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Batches of `WriteJob`s handed to the writer thread and not yet answered (committed and synced) by it. */
const MAX_THREADED_IN_FLIGHT = 3;

/**
 * Background writes (`WriteJob.background`: a delivery's outcome, up to 25 jobs each) go to the
 * writer thread this many at a time, alone, when it has nothing else to do — or with the
 * requests' writes once the oldest has waited `BACKGROUND_WAIT_MS`, so they are never starved.
 */
const BACKGROUND_BATCH = 2;
const BACKGROUND_WAIT_MS = 100;
/**
 * With no request's write for this long the requests have stopped (a backlog delivered after a
 * restart, a quiet night): background jobs go in full batches (MAX_BATCH), one commit and sync
 * for many, instead of BACKGROUND_BATCH at a time.
 */
const REQUESTS_IDLE_MS = 50;

class GroupCommitter {
  private queue: QueuedWrite[] = [];
  private scheduled = false;
  /** A batch of closures is committing on this thread. */
  private committingHere = false;
  /** Batches of jobs sent to the writer thread, not yet answered. */
  private threadedInFlight = 0;
  private lastActivity = 0;
  /** When a write other than a background one was last queued. */
  private lastRequestWrite = 0;
  /** Batches committed and not yet answered (waiting for their sync). */
  private unsynced = 0;
  private readonly syncs: SyncSequence;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly wal: WalKeeper,
    private readonly writer: DatabaseThread,
  ) {
    this.syncs = new SyncSequence(() => wal.sync());
  }

  enqueue<T>(work: (trx: Writer) => Promise<T>): Promise<T> {
    return this.push({ work });
  }

  enqueueJob<A, R>(job: WriteJob<A, R>, arg: A): Promise<R> {
    return this.push({ job: { name: job.name, arg }, ...(job.background && { background: performance.now() }) });
  }

  private push<T>(write: Pick<QueuedWrite, 'work' | 'job' | 'background'>): Promise<T> {
    this.lastActivity = performance.now();
    if (write.background === undefined) this.lastRequestWrite = this.lastActivity;
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ ...write, resolve: resolve as (v: unknown) => void, reject });
      this.schedule();
    });
  }

  private get busy(): boolean {
    return this.scheduled || this.committingHere || this.threadedInFlight > 0 || this.queue.length > 0;
  }

  /** Waits until every queued write has been committed and synced, or rejected. */
  async drain(): Promise<void> {
    while (this.busy || this.unsynced > 0) {
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
      const idleFor = this.busy ? 0 : now - this.lastActivity;
      if (idleFor >= QUIET_MS || now >= deadline) return;
      await sleep(Math.min(QUIET_MS - idleFor, deadline - now));
    }
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // setImmediate lets every request already parsed in this turn of the event loop join the batch.
    setImmediate(() => this.flush());
  }

  /**
   * Starts what can be committed now. The writer thread takes batches of jobs back to back
   * (up to `MAX_THREADED_IN_FLIGHT` queued there, so it never idles while the event loop parses
   * the next requests); a batch of closures commits here once the writer thread has finished
   * what it was given, and no jobs are handed over meanwhile. Closures waiting hold back the
   * jobs queued after them, so neither kind starves.
   */
  private flush(): void {
    this.scheduled = false;
    if (this.committingHere || this.queue.length === 0) return;
    const closureWaiting = this.queue.some((write) => write.work);
    if (closureWaiting) {
      if (this.threadedInFlight > 0) return; // flushed again when the writer thread is done
      const batch = this.takeBatch((write) => write.work !== undefined);
      this.committingHere = true;
      const works = batch.map((write) => write.work as (trx: Writer) => Promise<unknown>);
      void this.commit(
        batch,
        async () => ({ outcomes: await commitBatch(this.db, works), synced: false }),
        () => {
          this.committingHere = false;
          this.schedule();
        },
      );
      return;
    }
    if (this.threadedInFlight >= MAX_THREADED_IN_FLIGHT) return;
    const batch = this.takeJobs();
    if (batch.length === 0) {
      // Only background writes wait, and the writer thread is busy: they go when it is done, or once overdue.
      const oldest = Math.min(...this.queue.map((write) => write.background ?? Number.POSITIVE_INFINITY));
      if (Number.isFinite(oldest)) this.recheckAt(oldest + BACKGROUND_WAIT_MS);
      return;
    }
    this.threadedInFlight++;
    const jobs = batch.map((write) => write.job as ThreadedJob);
    void this.commit(
      batch,
      () => this.commitThreaded(jobs),
      () => {
        this.threadedInFlight--;
        if (this.queue.length > 0) this.schedule();
      },
    );
  }

  /**
   * The next batch for the writer thread: the requests' jobs, in order, with at most
   * BACKGROUND_BATCH background jobs that have waited BACKGROUND_WAIT_MS; or, when no request's
   * job waits and the writer thread is idle, up to BACKGROUND_BATCH background jobs alone (full
   * batches, as requests' go, once the requests have stopped: REQUESTS_IDLE_MS). A request's write thus waits
   * behind at most that much background work. Empty: nothing to hand over now.
   */
  private takeJobs(): QueuedWrite[] {
    const now = performance.now();
    const overdue = now - BACKGROUND_WAIT_MS;
    const requests = this.queue.some((write) => write.job !== undefined && write.background === undefined);
    const stopped = now - this.lastRequestWrite >= REQUESTS_IDLE_MS;
    if (!requests && !stopped && this.threadedInFlight > 0) return [];
    const most = stopped ? MAX_BATCH : BACKGROUND_BATCH;
    let background = 0;
    return this.takeBatch((write) => {
      if (write.job === undefined) return false;
      if (write.background === undefined) return true;
      if (background >= most || (requests && write.background > overdue)) return false;
      background++;
      return true;
    });
  }

  private recheckTimer: NodeJS.Timeout | undefined;

  /** Flushes again at `at` (performance.now() time): a background write falls due then. */
  private recheckAt(at: number): void {
    if (this.recheckTimer) return;
    this.recheckTimer = setTimeout(
      () => {
        this.recheckTimer = undefined;
        this.schedule();
      },
      Math.max(0, at - performance.now()),
    );
  }

  /** Up to MAX_BATCH queued writes of one kind, in order, taken off the queue. */
  private takeBatch(ofKind: (write: QueuedWrite) => boolean): QueuedWrite[] {
    const batch: QueuedWrite[] = [];
    const rest: QueuedWrite[] = [];
    for (const write of this.queue) {
      if (batch.length < MAX_BATCH && ofKind(write)) batch.push(write);
      else rest.push(write);
    }
    this.queue = rest;
    return batch;
  }

  /**
   * Commits one batch and answers its writes once a sync that began after the commit has
   * finished. The next batch does not wait for that sync: it commits while the disk works, and
   * its sync starts when the one in flight ends (syncs never overlap; one covers every commit
   * made before it began). Under load a sync serves many requests and the event loop never
   * idles waiting for the disk; an idle server commits and syncs at once.
   */
  private async commit(
    batch: QueuedWrite[],
    transaction: () => Promise<{ outcomes: Outcome[]; synced: boolean }>,
    committed: () => void,
  ): Promise<void> {
    let outcomes: Outcome[];
    let synced: boolean;
    await this.wal.beforeCommit();
    try {
      ({ outcomes, synced } = await transaction());
    } catch (error) {
      // The transaction itself failed (disk full, I/O error): nothing of this batch is durable.
      for (const write of batch) write.reject(error);
      return;
    } finally {
      this.wal.afterCommit();
      this.lastActivity = performance.now();
      committed();
    }
    if (!synced) {
      crashPoint('commit'); // test hook (crash-point.ts): committed, not synced nor answered
      this.unsynced++;
      try {
        await this.syncs.afterNow(); // on the thread pool: requests are served meanwhile
      } catch (error) {
        // Committed but perhaps not on disk: never acknowledge it as durable.
        for (const write of batch) write.reject(error);
        return;
      } finally {
        this.unsynced--;
      }
    }
    batch.forEach((write, i) => {
      const outcome = outcomes[i] as Outcome;
      if (outcome.ok) write.resolve(outcome.value);
      else write.reject(outcome.error);
    });
  }

  /**
   * The batch's `WriteJob`s, committed and synced on the writer thread (worker.ts); errors come
   * back with their message and code.
   */
  private async commitThreaded(jobs: ThreadedJob[]): Promise<{ outcomes: Outcome[]; synced: true }> {
    const outcomes = await this.writer.run<ThreadedOutcome[]>({ type: 'write', jobs });
    return { outcomes: outcomes.map((o) => (o.ok ? o : { ok: false, error: rebuiltError(o.error) })), synced: true };
  }
}

export interface SqliteOptions {
  fileName?: string;
  wal?: WalOptions;
  onError?: BackgroundErrorHandler;
  /** The worker threads load the built code (`WorkerOptions.built`): the test suite's databases. */
  builtThreads?: boolean;
  /** The worker threads' entry module (`WorkerOptions.entry`): a test's. */
  threadEntry?: URL;
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
  const thread = { built: options.builtThreads ?? false, entry: options.threadEntry };
  const wal: WalKeeper = new WalKeeper(
    file,
    { ...testWalOptions(), ...options.wal, quiet: (maxWaitMs) => committer.quiet(maxWaitMs), thread },
    (error) => options.onError?.(error, 'database log checkpoint failed; retrying'),
  );
  const writer = new DatabaseThread({ engine: 'sqlite', file }, { ...thread, busyAllocator: true });
  const committer: GroupCommitter = new GroupCommitter(db, wal, writer);
  const background = new DatabaseThread({ engine: 'sqlite', file }, { ...thread, lowPriority: true });
  return {
    read: db,
    write: (work) => committer.enqueue(work),
    runWrite: (job, arg) => committer.enqueueJob(job, arg),
    background: (job, arg) => background.run({ type: 'job', name: job.name, arg }),
    async migrate() {
      // The worker threads start loading while the migrations run (~0.15 s here): the checkpoint
      // worker (it must be up before writes come in, or the log would grow meanwhile under load)
      // and the writer thread, with the jobs loaded.
      const threads = Promise.all([wal.start(), writer.run({ type: 'ping' })]);
      threads.catch(() => {}); // awaited below, after the migrations (which may throw first)
      const applied = await migrateToLatest(db as unknown as Kysely<unknown>);
      await threads;
      // Keep the planner's statistics current (bounded work), so lookups pick their own index.
      raw.pragma('analysis_limit = 1000');
      raw.pragma('optimize = 0x10002');
      // The reports' smaller tables get exact statistics: sampled ones (their first 1,000 rows,
      // all of one store) hid that a year's range is the whole store, and the planner skipped
      // their covering indexes (a 2M-click year: spend 49 → 21 ms, new customers 27 → 14 ms;
      // both analyzed in ~75 ms).
      raw.pragma('analysis_limit = 0');
      raw.exec('analyze customers; analyze ad_spend');
      raw.pragma('analysis_limit = 1000');
      await wal.sync();
      return applied;
    },
    checkSchema: () => checkSchema(db as unknown as Kysely<unknown>),
    async ping() {
      raw.prepare('select 1').get();
    },
    async close() {
      await committer.drain();
      await writer.close();
      await background.close();
      await wal.close();
      await db.destroy(); // the last connection to close checkpoints the log and removes it
    },
  };
}
