/**
 * The embedded database's worker thread's side (its entry, server/src/worker.ts, started by
 * db/worker-thread.ts, hands it the table of jobs): a connection of its own to the database
 * file, for work that must not take time from the event loop serving requests — log
 * checkpoints (wal.ts), read-only background jobs (`Database.background`) and, on the writer
 * thread, batches of write jobs (`Database.runWrite`), which the group committer hands over one
 * at a time (database.ts), so this connection never waits for the write lock.
 */
import { fdatasync, openSync } from 'node:fs';
import { workerData } from 'node:worker_threads';
import SqliteDriver from 'better-sqlite3';
import { crashPoint } from '../../crash-point.js';
import type { JobTable, Reader, Writer } from '../database.js';
import { jobRunner, lowerThisThreadsPriority, serveRequests, threaded, type WorkerRequest } from '../worker-thread.js';
import { commitBatch } from './batch.js';
import { sqliteKysely } from './connection.js';
import { SyncSequence } from './sync-sequence.js';

/** Serves the requests of a `DatabaseThread` (db/worker-thread.ts) on this thread, running the jobs of `jobs`. */
export function serveDatabaseThread(jobs: JobTable): void {
  const { file, lowPriority } = workerData as { file: string; lowPriority: boolean };
  if (lowPriority) lowerThisThreadsPriority();
  const raw = new SqliteDriver(file, { fileMustExist: true });
  const db = sqliteKysely(raw);
  const reader: Reader = db;
  const syncs = new SyncSequence(
    () => new Promise<void>((resolve, reject) => fdatasync(logFd(file), (error) => (error ? reject(error) : resolve()))),
  );

  const jobOf = jobRunner(jobs);

  async function handle(request: WorkerRequest): Promise<unknown> {
    if (request.type === 'ping') return null;
    if (request.type === 'checkpoint') {
      // PASSIVE: copies what it can without waiting for, or blocking, readers and the writer.
      raw.pragma('wal_checkpoint(PASSIVE)');
      crashPoint('checkpoint'); // test hook (crash-point.ts): copied, the log not restarted yet
      return null;
    }
    if (request.type === 'truncate') {
      // The writer is idle and commits are paused (wal.ts): copy what is left and cut the log to
      // zero bytes. Readers still in the log are waited for 100 ms at most (then `busy`: later).
      raw.pragma('busy_timeout = 100');
      try {
        const [result] = raw.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>;
        return { busy: result?.busy ?? 0 };
      } finally {
        raw.pragma('busy_timeout = 5000');
      }
    }
    if (request.type === 'write') {
      const works = request.jobs.map(({ name, arg }) => {
        const job = jobOf(name);
        return (writer: Writer) => job(writer as Reader & Writer, arg);
      });
      const outcomes = await commitBatch(db, works);
      crashPoint('commit'); // test hook (crash-point.ts): committed, not synced nor answered
      // Synced here, before the answer: the event loop then answers at once (its own sync would
      // wait for the event loop to hear of it, a turn of the loop later). The next batch commits
      // while this sync runs on the thread pool.
      await syncs.afterNow();
      return outcomes.map((o) => (o.ok ? o : { ok: false, error: threaded(o.error) }));
    }
    return jobOf(request.name)(reader as Reader & Writer, request.arg);
  }

  serveRequests(handle);
}

let walFd: number | undefined;

/** The log file (it exists once a commit has happened; SQLite keeps it while connections are open). */
function logFd(file: string): number {
  walFd ??= openSync(`${file}-wal`, 'r');
  return walFd;
}
