import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from './schema.js';

/**
 * Reads: a query builder that can only build SELECTs. Writes go through `Database.write`, whose
 * work receives a `Writer`; nothing else can insert, update or delete.
 */
export type Reader = Pick<Kysely<DB>, 'selectFrom'>;

/** The transaction a write job runs in (a savepoint of a shared one on SQLite). */
export type Writer = Kysely<DB> | Transaction<DB>;

/**
 * A read-only job run off the request path (`Database.background`), by a name unique among the
 * jobs, under which the one table of jobs (server/src/jobs.ts) lists it for the worker threads.
 */
export interface BackgroundJob<A, R> {
  name: string;
  /** The job itself (an engine may run it in this thread; a worker thread finds it by name). */
  run: (reader: Reader, arg: A) => Promise<R>;
}

export function backgroundJob<A, R>(name: string, run: (reader: Reader, arg: A) => Promise<R>): BackgroundJob<A, R> {
  return { name, run };
}

/**
 * A write whose argument and result are plain data, so that `Database.runWrite` can run it where
 * it costs requests least: on SQLite a writer thread with a connection of its own (the event loop
 * only hands over the argument and gets the result), on PostgreSQL the pool, as `write` does. It
 * is named as a `BackgroundJob` is, and listed in the same table. For the hot writes (a click, a
 * conversion); `write(work)` stays the way for everything else. A job reports what happened as
 * its result: an error it throws crosses the thread as a plain Error with its message and `code`
 * (an ApiError would lose its class and be answered 500).
 */
export interface WriteJob<A, R> {
  name: string;
  run: (writer: Writer, arg: A) => Promise<R>;
  /**
   * On PostgreSQL the job writes with one statement (and may read after it): atomic by itself,
   * it runs without a transaction around it, one round trip instead of three. (SQLite runs every
   * job in its batch's transaction.)
   */
  oneStatement?: boolean;
  /**
   * On PostgreSQL, calls that arrive together may run as one batch (db/postgres/batcher.ts): one
   * statement writes them all and answers each, in order, what `run` would have answered had
   * they run one after another in that order. A batch is atomic like a `oneStatement` call; if
   * it fails, its calls run again one by one. (SQLite's group commit batches every write.)
   */
  runBatch?: (writer: Writer, args: A[]) => Promise<R[]>;
  /**
   * No request waits for it (a delivery's outcome): on SQLite the writer thread takes the
   * requests' writes first and this one in a small batch of its own when none waits (or once it
   * has waited `BACKGROUND_WAIT_MS`), so a burst of such writes never sits in front of a
   * request's commit. (PostgreSQL's pool runs writes side by side: nothing to order.)
   */
  background?: boolean;
}

export function writeJob<A, R>(
  name: string,
  run: (writer: Writer, arg: A) => Promise<R>,
  options: Pick<WriteJob<A, R>, 'oneStatement' | 'runBatch' | 'background'> = {},
): WriteJob<A, R> {
  return { name, run, ...options };
}

/** Jobs by name, as a worker thread runs them (`jobTable`). */
// biome-ignore lint/suspicious/noExplicitAny: a table of jobs of every argument and result type
export type JobTable = Readonly<Record<string, BackgroundJob<any, unknown> | WriteJob<any, unknown>>>;

/** The table of `jobs` by name; two jobs of one name are a mistake, refused here. */
// biome-ignore lint/suspicious/noExplicitAny: jobs of every argument and result type
export function jobTable(...jobs: Array<BackgroundJob<any, unknown> | WriteJob<any, unknown>>): JobTable {
  const table: Record<string, BackgroundJob<unknown, unknown> | WriteJob<unknown, unknown>> = {};
  for (const job of jobs) {
    if (Object.hasOwn(table, job.name)) throw new Error(`two jobs are named ${job.name}`);
    table[job.name] = job;
  }
  return table;
}

/**
 * The one door to the database, whichever engine is behind it (db/sqlite, db/postgres).
 *
 * - `read` answers with what is committed.
 * - `write(work)` runs `work` in a transaction and resolves only once its changes are durable;
 *   a failing job rolls back alone. Concurrent writes may share a commit (SQLite's group
 *   commit) or run side by side (PostgreSQL): a job must hold its own invariants through
 *   unique constraints and the rows it reads inside the transaction.
 * - `runWrite(job, arg)` is `write` for a `WriteJob`: the same guarantees (transaction,
 *   durable before it resolves, a failing job rolls back alone), and on SQLite the job's
 *   statements run on the writer thread instead of the event loop.
 * - `background(job, arg)` runs a read-only job where it costs requests least: a worker thread
 *   with a connection of its own on SQLite, the connection pool on PostgreSQL.
 */
export interface Database {
  readonly read: Reader;
  write<T>(work: (trx: Writer) => Promise<T>): Promise<T>;
  runWrite<A, R>(job: WriteJob<A, R>, arg: A): Promise<R>;
  background<A, R>(job: BackgroundJob<A, R>, arg: A): Promise<R>;
  /** Applies pending migrations; refuses a database migrated by newer code. */
  migrate(): Promise<string[]>;
  /** Refuses (SchemaError) a database with migrations this code does not know; applies none. */
  checkSchema(): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Where an engine reports a failure of its background work (no request waits for it): the
 * error, and a stable message that says what failed and what happens next (docs/operations.md,
 * "Other entries worth knowing").
 */
export type BackgroundErrorHandler = (error: unknown, message: string) => void;

/** True for errors that mean "the database cannot be reached right now" (→ 503, safe to retry). */
export function isUnavailableError(error: unknown): boolean {
  // A closed handle (better-sqlite3) or destroyed pool (Kysely) throws without a code.
  const message = (error as { message?: unknown } | null)?.message;
  if (
    message === 'The database connection is not open' ||
    message === 'driver has already been destroyed' ||
    message === 'timeout exceeded when trying to connect' ||
    message === 'Query read timeout' ||
    message === 'Connection terminated unexpectedly' ||
    (typeof message === 'string' && message.startsWith('Connection terminated'))
  ) {
    return true;
  }
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return (
    /^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|FULL|READONLY|NOTADB|CORRUPT)/.test(code) ||
    // PostgreSQL: connection exceptions (08…), operator intervention (57P…), insufficient resources (53…)
    /^(08|57P|53)/.test(code) ||
    code === '57014' || // statement timeout / canceled
    ['EIO', 'ENOSPC', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND'].includes(code)
  );
}

/**
 * True for errors that mean "the disk the database writes to is full": SQLite's SQLITE_FULL (a
 * full file system, or the file's size limit), ENOSPC from our own syncs, PostgreSQL's 53100
 * disk_full. A full disk reads as unavailable too (503, safe to retry) — but says what it is.
 */
export function isDiskFullError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_FULL') || code === 'ENOSPC' || code === '53100');
}

/**
 * A write that failed because the database's disk is full, and where: the database file on
 * SQLite, the server (and the file PostgreSQL names, if it does) on PostgreSQL. It keeps the
 * engine's `code`, so it is still an unavailable error.
 */
export class DiskFullError extends Error {
  readonly code: string;
  constructor(
    /** Where the disk is full: `/var/lib/waytrack/waytrack.db`, `PostgreSQL db.internal:5432/waytrack (base/16384/2619)`. */
    readonly location: string,
    cause: unknown,
  ) {
    super(`disk full: ${location}`, { cause });
    this.code = String((cause as { code?: unknown }).code);
  }
}

/** A backup or restore that was refused or cannot be done here; the message says what to do. */
export class BackupError extends Error {}

export interface BackupResult {
  /** The backup file written (absolute). */
  file: string;
  bytes: number;
  /** The migrations the backed-up database had: the schema version it needs. */
  migrations: string[];
}

export interface RestoreResult {
  /** The database file now in place (absolute). */
  file: string;
  bytes: number;
  migrations: string[];
}

/**
 * Appended to a select (`.modifyEnd(PLANNED_PER_VALUES)`) whose best plan depends on its values:
 * PostgreSQL then plans it for each run's values instead of reusing a generic plan (a named
 * statement gets one after five runs: for `currency in ($3)` over the monthly partitions it read
 * the range's every conversion, ~100 ms against ~10 ms for a rare currency's). A comment, so
 * SQLite runs it as it is.
 */
export const PLANNED_PER_VALUES = sql`/* planned per values */`;
