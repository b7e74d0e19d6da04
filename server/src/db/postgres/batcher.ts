import { isUnavailableError } from '../database.js';

interface Waiting<A, R> {
  arg: A;
  resolve: (value: R) => void;
  reject: (error: unknown) => void;
}

/** How a job's calls are batched (`Batcher`). */
export interface BatchPolicy {
  /** Batches at the database at once. */
  maxInFlight: number;
  /** Calls in one batch. */
  maxBatch: number;
  /**
   * With a batch already at the database, the next one goes beside it only once this many calls
   * wait, or once the first of them has waited `besideAfterMs` (a slow batch does not hold the
   * others); otherwise they wait for it and go together.
   */
  besideQueued: number;
  besideAfterMs: number;
}

/**
 * Measured on clicks (bench/README.md): two batches at once ~4,500 clicks/s, 4 and 8
 * ~2,800–3,000 (smaller batches, more commits), unbatched ~1,400–1,600; the second one only
 * beside 16 waiting calls or a batch out for 2 ms: see `Batcher`.
 */
const DEFAULT_POLICY: BatchPolicy = { maxInFlight: 2, maxBatch: 200, besideQueued: 16, besideAfterMs: 2 };

/**
 * Runs the calls of one write job in batches: the calls that arrive while a batch is at the
 * database wait and then go together as the next batch (at most `maxBatch`). An idle instance
 * sends a call at once, as a batch of one (or the calls made together, such as a batch
 * request's clicks, as one batch); under load a statement and its commit serve many
 * requests (measured on clicks: PostgreSQL's CPU per click and the instance's both fall, see
 * bench/README.md). A second batch goes beside the first only when many calls wait or the first
 * is slow (`BatchPolicy`): two small batches at once cost both sides more than one larger one
 * (clicks at 2,000/s: ~10 % less CPU on each side, a lower p50 and p99). A batch that fails for a
 * reason other than the database being unavailable runs again call by call, so that one bad
 * call fails alone.
 */
export class Batcher<A, R> {
  private queue: Array<Waiting<A, R>> = [];
  private inFlight = 0;
  private besideTimer: NodeJS.Timeout | undefined;
  /** `next` is due once the synchronous code that queued calls has run. */
  private nextSoon = false;
  private readonly policy: BatchPolicy;

  constructor(
    private readonly runBatch: (args: A[]) => Promise<R[]>,
    private readonly runOne: (arg: A) => Promise<R>,
    policy: Partial<BatchPolicy> = {},
  ) {
    this.policy = { ...DEFAULT_POLICY, ...policy };
  }

  /**
   * Queues a call. The calls made in one synchronous stretch (a batch request's clicks) are sent
   * after it, together: an idle batcher sends them as one batch, not the first one alone.
   */
  run(arg: A): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ arg, resolve, reject });
      if (this.nextSoon) return;
      this.nextSoon = true;
      queueMicrotask(() => {
        this.nextSoon = false;
        this.next();
      });
    });
  }

  /** Sends what the policy allows now; with `waited`, a batch beside others even if few calls wait. */
  private next(waited = false): void {
    const { maxInFlight, maxBatch, besideQueued, besideAfterMs } = this.policy;
    while (this.inFlight < maxInFlight && this.queue.length > 0) {
      if (this.inFlight > 0 && !waited && this.queue.length < besideQueued) {
        this.besideTimer ??= setTimeout(() => {
          this.besideTimer = undefined;
          this.next(true);
        }, besideAfterMs);
        return;
      }
      clearTimeout(this.besideTimer);
      this.besideTimer = undefined;
      const batch = this.queue.splice(0, maxBatch);
      this.inFlight++;
      void this.send(batch).finally(() => {
        this.inFlight--;
        this.next();
      });
    }
  }

  private async send(batch: Array<Waiting<A, R>>): Promise<void> {
    if (batch.length === 1) return this.sendAlone(batch[0] as Waiting<A, R>);
    let results: R[];
    try {
      results = await this.runBatch(batch.map((call) => call.arg));
    } catch (error) {
      if (isUnavailableError(error)) {
        for (const call of batch) call.reject(error);
        return;
      }
      await Promise.all(batch.map((call) => this.sendAlone(call)));
      return;
    }
    for (const [i, call] of batch.entries()) call.resolve(results[i] as R);
  }

  private async sendAlone(call: Waiting<A, R>): Promise<void> {
    try {
      call.resolve(await this.runOne(call.arg));
    } catch (error) {
      call.reject(error);
    }
  }
}
