import { isUnavailableError } from '../database.js';

interface Waiting<A, R> {
  arg: A;
  resolve: (value: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Runs the calls of one write job in batches: while `maxInFlight` batches are at the database,
 * the calls that arrive wait and then go together as the next batch (at most `maxBatch`). An
 * idle instance sends a call at once, as a batch of one; under load a statement and its commit
 * serve many requests (measured on clicks: PostgreSQL's CPU per click and the instance's both
 * fall, see bench/README.md). A batch that fails for a reason other than the database being
 * unavailable runs again call by call, so that one bad call fails alone.
 */
export class Batcher<A, R> {
  private queue: Array<Waiting<A, R>> = [];
  private inFlight = 0;

  constructor(
    private readonly runBatch: (args: A[]) => Promise<R[]>,
    private readonly runOne: (arg: A) => Promise<R>,
    private readonly maxInFlight: number,
    private readonly maxBatch = 200,
  ) {}

  run(arg: A): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ arg, resolve, reject });
      this.next();
    });
  }

  private next(): void {
    if (this.inFlight >= this.maxInFlight || this.queue.length === 0) return;
    const batch = this.queue.splice(0, this.maxBatch);
    this.inFlight++;
    void this.send(batch).finally(() => {
      this.inFlight--;
      this.next();
    });
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
