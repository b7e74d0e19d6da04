/**
 * Worker thread entry (started by worker-thread.ts): a connection of its own to the database
 * file, for work that must not take time from the event loop serving requests — log
 * checkpoints (wal.ts) and read-only background jobs (`Database.background`). It never writes
 * rows: a job's result goes back to the main thread, which writes it through `Database.write`.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import SqliteDriver from 'better-sqlite3';
import { crashPoint } from '../../crash-point.js';
import type { Reader } from '../database.js';
import { sqliteKysely } from './connection.js';
import type { WorkerRequest } from './worker-thread.js';

const port = parentPort;
if (!port) throw new Error('worker.js runs as a worker thread');
const { file, lowPriority } = workerData as { file: string; lowPriority: boolean };
if (lowPriority) lowerThisThreadsPriority();
const raw = new SqliteDriver(file, { fileMustExist: true });
const reader: Reader = sqliteKysely(raw);
const jobs = new Map<string, (reader: Reader, arg: unknown) => Promise<unknown>>();

/**
 * On a machine with few cores, a busy worker competes with the event loop for a core (measured:
 * the main thread descheduled for up to 18 ms while a fold ran). Background work can wait;
 * requests cannot: this thread runs at nice 10 (Linux sets priorities per thread; elsewhere, or
 * when not allowed, it keeps the process's priority).
 */
function lowerThisThreadsPriority(): void {
  try {
    const tid = /task\/(\d+)$/.exec(readlinkSync('/proc/thread-self'))?.[1];
    if (tid) setPriority(Number(tid), 10);
  } catch {
    // not Linux, or not permitted: same priority as the rest of the process
  }
}

/**
 * This module is server/src/db/sqlite/worker.ts, or its bundle at the same place in server/dist
 * (a job's module is an entry point of the build too): the code's root is two levels up.
 */
const CODE_ROOT = new URL('../../', import.meta.url);
const EXTENSION = import.meta.url.endsWith('.ts') ? '.ts' : '.js';

async function jobOf(module: string, name: string) {
  const key = `${module}#${name}`;
  let job = jobs.get(key);
  if (!job) {
    const exported = ((await import(new URL(module + EXTENSION, CODE_ROOT).href)) as Record<string, unknown>)[name];
    if (typeof exported !== 'function') throw new Error(`${module} exports no function ${name}`);
    job = exported as (reader: Reader, arg: unknown) => Promise<unknown>;
    jobs.set(key, job);
  }
  return job;
}

async function handle(request: WorkerRequest): Promise<unknown> {
  if (request.type === 'ping') return null;
  if (request.type === 'checkpoint') {
    // PASSIVE: copies what it can without waiting for, or blocking, readers and the writer.
    raw.pragma('wal_checkpoint(PASSIVE)');
    crashPoint('checkpoint'); // test hook (crash-point.ts): copied, the log not restarted yet
    return null;
  }
  return (await jobOf(request.module, request.name))(reader, request.arg);
}

port.on('message', ({ id, ...request }: WorkerRequest & { id: number }) => {
  handle(request).then(
    (value) => port.postMessage({ id, ok: true, value }),
    (error: unknown) => port.postMessage({ id, ok: false, message: error instanceof Error ? error.message : String(error) }),
  );
});
