import { mkdirSync } from 'node:fs';
import path from 'node:path';
import SqliteDriver from 'better-sqlite3';
import { Kysely, type SqliteDatabase, SqliteDialect, type SqliteStatement, type Transaction } from 'kysely';
import { migrateToLatest } from './migrations/index.js';
import type { DB } from './schema.js';
import { WalKeeper, type WalOptions } from './wal.js';

export type Executor = Kysely<DB> | Transaction<DB>;

/**
 * The one door to the database. Reads use `db` directly. Every write goes through `write()`,
 * which resolves only after its changes are durably committed. Writes of concurrent requests
 * share one transaction and one fsync (group commit); each runs inside its own savepoint, so one
 * failing write rolls back alone and never takes its neighbours with it. The fsync runs on the
 * thread pool (wal.ts), so the event loop serves requests while the disk works.
 */
export interface Database {
  readonly dialect: 'sqlite';
  /** The database file; a worker thread opens its own connection with `openSqliteWorkerConnection`. */
  readonly file: string;
  readonly db: Kysely<DB>;
  write<T>(work: (trx: Executor) => Promise<T>): Promise<T>;
  /**
   * Resolves once everything committed so far is on disk. A read that found a row another
   * request wrote may be a moment ahead of that row's sync; await this before answering
   * with it as settled fact (a duplicate's original, for instance).
   */
  durable(): Promise<void>;
  /**
   * Resolves at a quiet moment for background work that holds the writer (rollup folds, the
   * log checkpoint's last step): once no write has been queued or committed for a few
   * milliseconds, or after `maxWaitMs` at the latest, so that requests' writes go first.
   */
  quiet(maxWaitMs?: number): Promise<void>;
  /**
   * Runs `work` — a write another connection makes (a worker thread's) — between two group
   * commits, with the writer to itself: no transaction of this connection is open meanwhile,
   * so neither waits on the other. Resolves with its result after the following log sync,
   * like `write`.
   */
  writeAlone<T>(work: () => Promise<T>): Promise<T>;
  migrate(): Promise<string[]>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

const STATEMENT_CACHE_SIZE = 2000;

/**
 * better-sqlite3 compiles a statement per `prepare`; keep the compiled ones. The SQL texts are
 * few (a few hundred, counting the literal LIMITs of row-limit.ts), so the least recently used
 * one is dropped only when an unusual mix of queries exceeds the bound.
 */
function withStatementCache(raw: SqliteDriver.Database): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => raw.close(),
    prepare(sql: string) {
      let stmt = cache.get(sql);
      if (stmt) {
        cache.delete(sql); // Map order is insertion order: re-inserting marks it most recently used
      } else {
        stmt = raw.prepare(sql) as unknown as SqliteStatement;
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
      }
      cache.set(sql, stmt);
      return stmt;
    },
  };
}

interface WriteJob {
  work: (trx: Executor) => Promise<unknown>;
  /** Runs outside this connection's transactions, in a commit of its own (`writeAlone`). */
  alone?: boolean;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

const MAX_BATCH = 256;

/** A gap between writes this long counts as a quiet moment (see `Database.quiet`). */
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

  enqueue<T>(work: (trx: Executor) => Promise<T>, alone = false): Promise<T> {
    this.lastActivity = performance.now();
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, alone, resolve: resolve as (v: unknown) => void, reject });
      this.schedule();
    });
  }

  /** Waits until every queued write has been committed and synced, or rejected. */
  async drain(): Promise<void> {
    while (this.queue.length > 0 || this.flushing || this.scheduled) {
      await new Promise((r) => setImmediate(r));
    }
  }

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
    const jobs = this.takeBatch();
    try {
      let outcomes: Outcome[];
      try {
        outcomes = await this.commit(jobs);
      } catch (error) {
        // The transaction itself failed (disk full, I/O error): nothing of this batch is durable.
        for (const job of jobs) job.reject(error);
        return;
      }
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

  /** The next jobs that share a transaction, or the next job that runs alone. */
  private takeBatch(): WriteJob[] {
    if (this.queue[0]?.alone) return this.queue.splice(0, 1);
    let n = 0;
    while (n < this.queue.length && n < MAX_BATCH && !this.queue[n]?.alone) n++;
    return this.queue.splice(0, n);
  }

  /** Runs each job in its own savepoint of one transaction and commits it (not yet synced). */
  private async commit(jobs: WriteJob[]): Promise<Outcome[]> {
    const outcomes: Outcome[] = [];
    await this.wal.beforeCommit();
    try {
      const [only] = jobs;
      if (only?.alone) {
        // Another connection writes; this one holds no transaction meanwhile.
        outcomes.push(
          await only.work(this.db).then(
            (value) => ({ ok: true, value }) as const,
            (error) => ({ ok: false, error }) as const,
          ),
        );
      } else await this.transaction(jobs, outcomes);
    } finally {
      this.wal.afterCommit();
    }
    return outcomes;
  }

  private async transaction(jobs: WriteJob[], outcomes: Outcome[]): Promise<void> {
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
  }
}

export interface SqliteOptions {
  fileName?: string;
  wal?: WalOptions;
  onError?: (error: unknown) => void;
}

export function openSqlite(dataDir: string, options: SqliteOptions = {}): Database {
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, options.fileName ?? 'waytrack.db');
  const raw = new SqliteDriver(file);
  raw.pragma('journal_mode = WAL');
  // COMMIT writes the log; WalKeeper fsyncs it off the event loop before any write is
  // acknowledged, and checkpoints in a worker thread (see wal.ts): acknowledged means durable.
  raw.pragma('synchronous = NORMAL');
  raw.pragma('wal_autocheckpoint = 0');
  raw.pragma('foreign_keys = ON');
  raw.pragma('busy_timeout = 5000');
  const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: withStatementCache(raw) }) });
  const wal: WalKeeper = new WalKeeper(
    file,
    { ...options.wal, quiet: (maxWaitMs) => committer.quiet(maxWaitMs) },
    options.onError,
  );
  const committer: GroupCommitter = new GroupCommitter(db, wal);
  return {
    dialect: 'sqlite',
    file,
    db,
    write: (work) => committer.enqueue(work),
    durable: () => wal.sync(),
    quiet: (maxWaitMs = 1000) => committer.quiet(maxWaitMs),
    writeAlone: (work) => committer.enqueue(() => work(), true),
    async migrate() {
      const applied = await migrateToLatest(db as unknown as Kysely<unknown>);
      // Keep the planner's statistics current (bounded work), so lookups pick their own index.
      raw.pragma('analysis_limit = 1000');
      raw.pragma('optimize = 0x10002');
      await wal.sync();
      return applied;
    },
    async ping() {
      raw.prepare('select 1').get();
    },
    async close() {
      await committer.drain();
      await wal.close();
      await db.destroy(); // the last connection to close checkpoints the log and removes it
    },
  };
}

/**
 * A connection of its own to a database file that a `Database` has open, for a worker thread.
 * It reads while the main thread's connection writes, and writes only inside that Database's
 * `writeAlone` (so the main thread's log sync makes its commits durable); it never checkpoints.
 */
export function openSqliteWorkerConnection(file: string): Kysely<DB> {
  const raw = new SqliteDriver(file, { fileMustExist: true });
  raw.pragma('synchronous = NORMAL');
  raw.pragma('wal_autocheckpoint = 0');
  raw.pragma('foreign_keys = ON');
  raw.pragma('busy_timeout = 5000');
  return new Kysely<DB>({ dialect: new SqliteDialect({ database: withStatementCache(raw) }) });
}

/** True for errors that mean "the database cannot be reached right now" (→ 503, safe to retry). */
export function isUnavailableError(error: unknown): boolean {
  // A closed handle (better-sqlite3) or destroyed pool (Kysely) throws without a code.
  const message = (error as { message?: unknown } | null)?.message;
  if (message === 'The database connection is not open' || message === 'driver has already been destroyed') return true;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return (
    /^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|FULL|READONLY|NOTADB|CORRUPT)/.test(code) ||
    ['EIO', 'ENOSPC', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', '57P01', '57P03', '08006', '08001'].includes(code)
  );
}
