/**
 * The database worker thread's entry (started by db/worker-thread.ts): the engine's side of the
 * thread (db/sqlite/worker.ts or db/postgres/worker.ts) serving the jobs of the one table
 * (jobs.ts). An entry point of the build of its own.
 */
import { workerData } from 'node:worker_threads';
import { servePostgresThread } from './db/postgres/worker.js';
import { serveDatabaseThread } from './db/sqlite/worker.js';
import type { ThreadData } from './db/worker-thread.js';
import { JOBS } from './jobs.js';

if ((workerData as ThreadData).engine === 'postgres') servePostgresThread(JOBS);
else serveDatabaseThread(JOBS);
