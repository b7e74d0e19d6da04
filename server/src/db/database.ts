import { mkdirSync } from 'node:fs';
import path from 'node:path';
import SqliteDriver from 'better-sqlite3';
import { Kysely, type SqliteDatabase, SqliteDialect, type SqliteStatement, type Transaction } from 'kysely';
import { migrateToLatest } from './migrations/index.js';
import type { DB } from './schema.js';

export type Executor = Kysely<DB> | Transaction<DB>;

/**
 * The one door to the database. Reads use `db` directly. Every write goes through `write()`,
 * which resolves only after its changes are durably committed. Writes of concurrent requests
 * share one fsynced transaction (group commit); each runs inside its own savepoint, so one
 * failing write rolls back alone and never takes its neighbours with it.
 */
export interface Database {
  readonly dialect: 'sqlite';
  readonly db: Kysely<DB>;
  write<T>(work: (trx: Executor) => Promise<T>): Promise<T>;
  migrate(): Promise<string[]>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** better-sqlite3 compiles a statement per `prepare`; keep the compiled ones (queries are few and fixed). */
function withStatementCache(raw: SqliteDriver.Database): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => raw.close(),
    prepare(sql: string) {
      let stmt = cache.get(sql);
      if (!stmt) {
        if (cache.size >= 1000) cache.clear();
        stmt = raw.prepare(sql) as unknown as SqliteStatement;
        cache.set(sql, stmt);
      }
      return stmt;
    },
  };
}

interface WriteJob {
  work: (trx: Executor) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

const MAX_BATCH = 256;

class GroupCommitter {
  private queue: WriteJob[] = [];
  private scheduled = false;
  private flushing = false;

  constructor(private readonly db: Kysely<DB>) {}

  enqueue<T>(work: (trx: Executor) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (v: unknown) => void, reject });
      this.schedule();
    });
  }

  /** Waits until every queued write has been committed or rejected. */
  async drain(): Promise<void> {
    while (this.queue.length > 0 || this.flushing || this.scheduled) {
      await new Promise((r) => setImmediate(r));
    }
  }

  private schedule(): void {
    if (this.scheduled || this.flushing) return;
    this.scheduled = true;
    // setImmediate lets every request already parsed in this turn of the event loop join the batch.
    setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    this.flushing = true;
    const jobs = this.queue.splice(0, MAX_BATCH);
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    try {
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
      jobs.forEach((job, i) => {
        const outcome = outcomes[i] as (typeof outcomes)[number];
        if (outcome.ok) job.resolve(outcome.value);
        else job.reject(outcome.error);
      });
    } catch (error) {
      // The transaction itself failed (disk full, I/O error): nothing of this batch is durable.
      for (const job of jobs) job.reject(error);
    } finally {
      this.flushing = false;
      if (this.queue.length > 0) this.schedule();
    }
  }
}

export function openSqlite(dataDir: string, fileName = 'waytrack.db'): Database {
  mkdirSync(dataDir, { recursive: true });
  const raw = new SqliteDriver(path.join(dataDir, fileName));
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = FULL'); // fsync on every commit: acknowledged means durable
  raw.pragma('foreign_keys = ON');
  raw.pragma('busy_timeout = 5000');
  const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: withStatementCache(raw) }) });
  const committer = new GroupCommitter(db);
  return {
    dialect: 'sqlite',
    db,
    write: (work) => committer.enqueue(work),
    async migrate() {
      const applied = await migrateToLatest(db as unknown as Kysely<unknown>);
      // Keep the planner's statistics current (bounded work), so lookups pick their own index.
      raw.pragma('analysis_limit = 1000');
      raw.pragma('optimize = 0x10002');
      return applied;
    },
    async ping() {
      raw.prepare('select 1').get();
    },
    async close() {
      await committer.drain();
      await db.destroy();
    },
  };
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
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', '57P01', '57P03', '08006', '08001'].includes(code)
  );
}
