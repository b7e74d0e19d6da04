/**
 * The embedded database's worker thread (started by db/sqlite/worker-thread.ts): it serves
 * checkpoints and the jobs of the one table (jobs.ts). An entry point of the build of its own.
 */
import { serveDatabaseThread } from './db/sqlite/worker.js';
import { JOBS } from './jobs.js';

serveDatabaseThread(JOBS);
