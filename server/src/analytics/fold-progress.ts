import type { Database } from '../db/database.js';
import { QUEUE_SIZE } from '../db/repositories/rollup-queue.js';

/** The part of pino the refresher uses. */
export interface RollupLog {
  info(obj: object, msg: string): void;
}

/**
 * Progress of a long fold — the first build of the rollups over the events of an earlier
 * version, a rebuild after a store's time zone changed — logged every `everyMs` once a fold has
 * run that long: rows folded so far of the total (folded + still queued). Short folds, the usual
 * case, log nothing and count nothing.
 *
 * Counting the queue reads every queued row (~6.5 s for the 22M of a 20M-click year's first
 * fold on SQLite): it is counted off the event loop, at the first report and again only once
 * the fold has passed that total (events recorded meanwhile grow it). Counted at every report,
 * on the event loop, it held requests for seconds at a time and left the fold under half of the
 * time it had.
 */
export class FoldProgress {
  private readonly started = performance.now();
  private lastReport = this.started;
  private done = 0;
  /** Folded + queued when the queue was last counted. */
  private total: number | undefined;
  private reported = false;

  constructor(
    private readonly database: Database,
    private readonly log: RollupLog,
    private readonly everyMs: number,
  ) {}

  async folded(rows: number): Promise<void> {
    this.done += rows;
    const now = performance.now();
    if (now - this.lastReport < this.everyMs) return;
    this.lastReport = now;
    if (this.total === undefined || this.done >= this.total) {
      const queued = await this.database.background(QUEUE_SIZE, undefined);
      this.total = this.done + queued.click + queued.conversion + queued.refund;
    }
    const total = this.total;
    const percent = total === 0 ? 100 : Math.floor((this.done / total) * 100);
    this.log.info(
      { done: this.done, total, seconds: Math.round((now - this.started) / 1000) },
      `analytics rollups: ${this.done} of ${total} rows folded (${percent}%)`,
    );
    this.reported = true;
  }

  finished(): void {
    if (!this.reported) return;
    const seconds = Math.round((performance.now() - this.started) / 100) / 10;
    this.log.info({ done: this.done, seconds }, `analytics rollups are up to date: ${this.done} rows folded in ${seconds} s`);
  }
}
