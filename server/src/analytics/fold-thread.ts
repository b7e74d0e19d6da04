import { Worker } from 'node:worker_threads';
import type { FoldComputer, PendingFold } from './rollups.js';

/** Messages between the main thread and fold-worker.ts. */
export interface FoldRequest {
  id: number;
  limit: number;
}
export type FoldReply = { id: number; ok: true; pending: PendingFold | null } | { id: number; ok: false; message: string };

interface Waiting {
  resolve: (pending: PendingFold | null) => void;
  reject: (error: Error) => void;
}

/**
 * The background fold's worker thread, seen from the main thread: `compute` asks it for a
 * pending fold (see `catchUpInBackground`). Started on first use; a worker that fails or exits
 * fails the folds it was computing (the refresher retries on its next tick) and is replaced by
 * the next request.
 */
export class FoldThread {
  private worker: Worker | undefined;
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 1;

  constructor(private readonly file: string) {}

  readonly compute: FoldComputer = (limit) =>
    new Promise((resolve, reject) => {
      const id = this.nextId++;
      this.waiting.set(id, { resolve, reject });
      this.thread().postMessage({ id, limit } satisfies FoldRequest);
    });

  /** Stops the worker; folds it was computing fail (nothing was written by it). */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    if (worker) await worker.terminate();
    this.failAll('the fold worker was stopped');
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = startWorker(this.file);
    worker.unref();
    worker.on('message', (reply: FoldReply) => {
      const waiting = this.waiting.get(reply.id);
      this.waiting.delete(reply.id);
      if (reply.ok) waiting?.resolve(reply.pending);
      else waiting?.reject(new Error(`background fold failed: ${reply.message}`));
    });
    const lost = (message: string) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.failAll(message);
    };
    worker.on('error', (error) => lost(`the fold worker failed: ${error.message}`));
    worker.on('exit', (code) => lost(`the fold worker exited with code ${code}`));
    this.worker = worker;
    return worker;
  }

  private failAll(message: string): void {
    for (const waiting of this.waiting.values()) waiting.reject(new Error(message));
    this.waiting.clear();
  }
}

/**
 * fold-worker.js next to this module. Under the test runner the sources are TypeScript, which a
 * worker thread cannot load by itself: it registers tsx (a dev dependency, found from the working
 * directory) first.
 */
function startWorker(file: string): Worker {
  const typescript = import.meta.url.endsWith('.ts');
  const entry = new URL(typescript ? './fold-worker.ts' : './fold-worker.js', import.meta.url);
  if (!typescript) return new Worker(entry, { workerData: { file } });
  const bootstrap = `await import('tsx/esm/api').then((tsx) => tsx.register()); await import(${JSON.stringify(entry.href)});`;
  return new Worker(bootstrap, { eval: true, workerData: { file } });
}
