import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, Worker } from 'node:worker_threads';
import { BUILT_CODE_ROOT, CODE_EXTENSION, CODE_ROOT } from '../paths.js';
import type { JobTable, Reader, Writer } from './database.js';

/**
 * A database worker thread: a connection of its own to the database, for work that must not take
 * time from the event loop serving requests. The main thread's side is `DatabaseThread`; the
 * thread's side is the engine's (db/sqlite/worker.ts: checkpoints, write batches and background
 * jobs on the embedded database; db/postgres/worker.ts: background jobs), started by the code's
 * worker.ts with the table of jobs (jobs.ts).
 *
 * Messages to a thread: a ping, a log checkpoint, a read-only job named in the table of jobs, or
 * a batch of write jobs to run in one transaction (answered with an outcome per job, errors as
 * `ThreadedError`). A PostgreSQL thread serves pings and jobs.
 */
export type WorkerRequest =
  | { type: 'ping' }
  | { type: 'checkpoint' }
  | { type: 'truncate' }
  | { type: 'job'; name: string; arg: unknown }
  | { type: 'write'; jobs: Array<{ name: string; arg: unknown }> };

/** An error thrown on the worker, as it crosses back: its message and code (SQLite's or PostgreSQL's). */
export interface ThreadedError {
  message: string;
  code?: string;
}
/** A `ThreadedError` as an Error again, with its code (so that a full disk still reads as unavailable). */
export function rebuiltError(error: ThreadedError): Error {
  return Object.assign(new Error(error.message), error.code === undefined ? {} : { code: error.code });
}

type Reply = { id: number; ok: true; value: unknown } | ({ id: number; ok: false } & ThreadedError);

interface Waiting {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

/** Which engine's side the thread runs (worker.ts), and what it connects to. */
export type ThreadData =
  | { engine: 'sqlite'; file: string }
  | { engine: 'postgres'; url: string; timeoutMs: number; preparedStatements: boolean };

export interface WorkerOptions {
  /** Run at a lower priority than the event loop (background work on a machine with few cores). */
  lowPriority?: boolean;
  /**
   * Load the built code (server/dist) even when this code runs from the TypeScript sources: the
   * test suite's databases do, as a thread then starts without loading the TypeScript runtime
   * (measured: ~1 s of CPU per thread, most of a test database's cost). The jobs such a thread
   * runs come from server/dist too.
   */
  built?: boolean;
  /**
   * The thread's entry module, instead of the service's (worker.ts at the code's root, serving
   * the jobs of jobs.ts): a test's, serving jobs of its own as well. TypeScript is loaded through tsx.
   */
  entry?: URL;
  /**
   * The writer thread's: a larger young generation. Every batch of clicks it takes allocates
   * short-lived objects per click (the rows as received, parameters, results); with the 4 MB
   * the other threads have, scavenges took a third of its busy time under the batch benchmark.
   */
  busyAllocator?: boolean;
}

/**
 * A database worker thread seen from the main thread: `run` sends it a request and resolves with
 * its answer. It starts on first use; a worker that fails or exits fails what it was doing and is
 * replaced by the next request.
 */
export class DatabaseThread {
  private worker: Worker | undefined;
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 1;

  constructor(
    private readonly data: ThreadData,
    private readonly options: WorkerOptions = {},
  ) {}

  run<R>(request: WorkerRequest): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const id = this.nextId++;
      this.waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.thread().postMessage({ id, ...request });
    });
  }

  /** Stops the worker; what it was doing fails. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    if (worker) await worker.terminate();
    this.failAll('the database worker was stopped');
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = startWorker(this.data, this.options);
    worker.unref();
    worker.on('message', (reply: Reply) => {
      const waiting = this.waiting.get(reply.id);
      this.waiting.delete(reply.id);
      if (reply.ok) waiting?.resolve(reply.value);
      else waiting?.reject(rebuiltError(reply));
    });
    const lost = (message: string) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.failAll(message);
    };
    worker.on('error', (error) => lost(`the database worker failed: ${error.message}`));
    worker.on('exit', (code) => lost(`the database worker exited with code ${code}`));
    this.worker = worker;
    return worker;
  }

  private failAll(message: string): void {
    for (const waiting of this.waiting.values()) waiting.reject(new Error(message));
    this.waiting.clear();
  }
}

/**
 * The young generation of the writer thread (`busyAllocator`), in MB. Measured under the batch
 * benchmark (profiles of the writer thread): garbage collection was 34 % of its busy time with
 * 4 MB, 17 % with 8, 9 % with 16; peak resident memory of the server +15–20 MB.
 */
const YOUNG_MB_BUSY = 16;

/**
 * worker.ts at the code's root (or the built code's, `WorkerOptions.built`), or `entry`. Under
 * the test runner the sources are TypeScript, which a worker thread cannot load by itself: it
 * registers tsx (a dev dependency) first.
 */
function startWorker(
  data: ThreadData,
  { lowPriority = false, built = false, entry: given, busyAllocator = false }: WorkerOptions,
): Worker {
  const entry = given ?? (built ? new URL('worker.js', BUILT_CODE_ROOT) : new URL(`worker${CODE_EXTENSION}`, CODE_ROOT));
  const typescript = entry.pathname.endsWith('.ts');
  // A job reads and folds a bounded number of rows: a small heap keeps the thread's memory
  // small (the process's resident memory target is 250 MB under the click benchmark).
  const options = {
    workerData: { ...data, lowPriority },
    resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: busyAllocator ? YOUNG_MB_BUSY : 4 },
  };
  if (!typescript) return new Worker(entry, options);
  const bootstrap = `await import('tsx/esm/api').then((tsx) => tsx.register()); await import(${JSON.stringify(entry.href)});`;
  return new Worker(bootstrap, { ...options, eval: true });
}

/**
 * The thread's side: answers each request of `DatabaseThread.run` with what `handle` resolves
 * to, or with the error it throws (as a `ThreadedError`).
 */
export function serveRequests(handle: (request: WorkerRequest) => Promise<unknown>): void {
  const port = parentPort;
  if (!port) throw new Error('a database thread runs on a worker thread');
  port.on('message', ({ id, ...request }: WorkerRequest & { id: number }) => {
    handle(request).then(
      (value) => port.postMessage({ id, ok: true, value }),
      (error: unknown) => port.postMessage({ id, ok: false, ...threaded(error) }),
    );
  });
}

/** The job of the table named `name`, as the thread runs it (on its own connection). */
export function jobRunner(jobs: JobTable): (name: string) => (db: Reader & Writer, arg: unknown) => Promise<unknown> {
  return (name) => {
    const job = Object.hasOwn(jobs, name) ? jobs[name] : undefined;
    if (!job) throw new Error(`no job named ${name} in the worker thread's table (server/src/jobs.ts)`);
    return job.run as (db: Reader & Writer, arg: unknown) => Promise<unknown>;
  };
}

/**
 * On a machine with few cores, a busy worker competes with the event loop for a core (measured:
 * the main thread descheduled for up to 18 ms while a fold ran). Background work can wait;
 * requests cannot: such a thread runs at nice 10 (Linux sets priorities per thread; elsewhere, or
 * when not allowed, it keeps the process's priority).
 */
export function lowerThisThreadsPriority(): void {
  try {
    const tid = /task\/(\d+)$/.exec(readlinkSync('/proc/thread-self'))?.[1];
    if (tid) setPriority(Number(tid), 10);
  } catch {
    // not Linux, or not permitted: same priority as the rest of the process
  }
}

export function threaded(error: unknown): ThreadedError {
  const code = (error as { code?: unknown } | null)?.code;
  return {
    message: error instanceof Error ? error.message : String(error),
    ...(typeof code === 'string' && { code }),
  };
}
