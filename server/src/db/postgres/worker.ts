/**
 * PostgreSQL's worker thread's side (its entry, server/src/worker.ts, started by
 * db/worker-thread.ts, hands it the table of jobs): background jobs (`Database.background`, the
 * rollup fold's reads and folding) on a connection of its own, off the event loop serving
 * requests. Measured (bench/README.md): on the event loop, a fold step's rows outlived young
 * collections and were promoted, and the full collections they brought were the p99 of clicks at
 * 2,000/s.
 */
import { workerData } from 'node:worker_threads';
import type { JobTable, Reader, Writer } from '../database.js';
import { jobRunner, lowerThisThreadsPriority, serveRequests, type ThreadData } from '../worker-thread.js';
import { postgresKysely } from './database.js';

/** What `pg_stat_activity` calls the background thread's connection. */
export const BACKGROUND_APPLICATION_NAME = 'waytrack background';

/** Serves the requests of a `DatabaseThread` (db/worker-thread.ts) on this thread, running the jobs of `jobs`. */
export function servePostgresThread(jobs: JobTable): void {
  const { url, timeoutMs, preparedStatements, lowPriority } = workerData as Extract<ThreadData, { engine: 'postgres' }> & {
    lowPriority: boolean;
  };
  if (lowPriority) lowerThisThreadsPriority();
  const db = postgresKysely(url, { poolSize: 1, timeoutMs, preparedStatements, applicationName: BACKGROUND_APPLICATION_NAME });
  const jobOf = jobRunner(jobs);
  serveRequests(async (request) => {
    if (request.type === 'ping') return null;
    if (request.type === 'job') return jobOf(request.name)(db as Reader & Writer, request.arg);
    throw new Error(`a PostgreSQL thread runs background jobs, not "${request.type}"`);
  });
}
