import { Worker } from 'node:worker_threads';
import type { CatchUpResult } from './rollups.js';

/** Messages between the main thread and fold-worker.ts. */
export type FoldRequest = { id: number; type: 'fold'; limit: number } | { id: number; type: 'write' };
export type FoldReply =
  | { id: number; ok: true; folded: CatchUpResult | null }
  | { id: number; ok: true; written: CatchUpResult & { stale: boolean } }
  | { id: number; ok: false; message: string };

interface Waiting {
  resolve: (reply: FoldReply) => void;
  reject: (error: Error) => void;
}

/**
 * The background fold's worker thread, seen from the main thread (see `catchUpInWorker`):
 * `fold` has it read and fold the rows above the watermarks, `write` has it write that fold. It
 * starts on first use; a worker that fails or exits fails what it was doing (nothing half
 * written: its write is one transaction; the refresher retries on its next tick) and is
 * replaced by the next request.
 */
export class FoldThread {
  private worker: Worker | undefined;
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 1;

  constructor(private readonly file: string) {}

  /** Reads and folds up to `limit` clicks and conversions; null when none is waiting. */
  async fold(limit: number): Promise<CatchUpResult | null> {
    const reply = await this.ask({ id: this.nextId++, type: 'fold', limit });
    return 'folded' in reply ? reply.folded : null;
  }

  /** Writes the last fold on the worker's connection: call it inside `Database.writeAlone`. */
  async write(): Promise<CatchUpResult & { stale: boolean }> {
    const reply = await this.ask({ id: this.nextId++, type: 'write' });
    if (!('written' in reply)) throw new Error('the fold worker answered a write with no result');
    return reply.written;
  }

  /** Stops the worker; what it was doing fails. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    if (worker) await worker.terminate();
    this.failAll('the fold worker was stopped');
  }

  private ask(request: FoldRequest): Promise<FoldReply> {
    return new Promise((resolve, reject) => {
      this.waiting.set(request.id, { resolve, reject });
      this.thread().postMessage(request);
    });
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = startWorker(this.file);
    worker.unref();
    worker.on('message', (reply: FoldReply) => {
      const waiting = this.waiting.get(reply.id);
      this.waiting.delete(reply.id);
      if (reply.ok) waiting?.resolve(reply);
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
  // A fold holds at most BACKGROUND_CHUNK rows of each table: a small heap keeps the thread's
  // memory small (the process's resident memory target is 250 MB under the click benchmark).
  const options = { workerData: { file }, resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 4 } };
  if (!typescript) return new Worker(entry, options);
  const bootstrap = `await import('tsx/esm/api').then((tsx) => tsx.register()); await import(${JSON.stringify(entry.href)});`;
  return new Worker(bootstrap, { ...options, eval: true });
}
