/** What an outbox loop asks of its user (the destinations' dispatcher, the webhooks'). */
export interface OutboxWork {
  /** When the next row falls due (a lease end counts), undefined when none is pending. */
  nextDueAt(): Promise<number | undefined>;
  /**
   * One look at the outbox: claims what is due for the `free` request slots and launches it
   * (`OutboxLoop.launch`); true to look again at once (more may be due).
   */
  look(free: number): Promise<boolean>;
  /** Due rows wait for a request slot: the request that frees one wakes the loop, no timed look needed. */
  saturated?(): boolean;
  /** A pump (one or more looks in a row) begins. */
  pumpStarted?(): void;
}

export interface OutboxLoopOptions {
  /** Requests in flight at most. */
  maxInFlight: number;
  /** Longest sleep between looks (rows of other instances, retries falling due). */
  pollMs: number;
  log: { error(obj: object, msg: string): void };
  /** What a failed look logs ("Webhook dispatcher could not read the outbox"). */
  failedLook: string;
}

/**
 * The claim loop an outbox dispatcher runs: looks at the outbox when woken (coalesced, so a
 * burst of commits makes one look), when a request finishes, and otherwise when the next row
 * falls due, at most `pollMs` apart; keeps count of the requests in flight, and on stop lets
 * them finish and be recorded. What is claimed, leased and sent is its user's (`OutboxWork`).
 */
export class OutboxLoop {
  private running = false;
  private pumping = false;
  private again = false;
  private wakeScheduled = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly work: OutboxWork,
    private readonly options: OutboxLoopOptions,
  ) {}

  get isRunning(): boolean {
    return this.running;
  }

  /** Requests in flight now. */
  get active(): number {
    return this.inFlight.size;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.wake();
  }

  /** Stops looking and waits for the requests in flight to finish and be recorded. */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    while (this.pumping) await new Promise((resolve) => setImmediate(resolve));
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Resolves once no look is scheduled or running. */
  async settled(): Promise<void> {
    while (this.pumping || this.wakeScheduled) await new Promise((resolve) => setImmediate(resolve));
  }

  /** Something may be due: look soon (coalesced). */
  wake(): void {
    if (!this.running || this.wakeScheduled) return;
    this.wakeScheduled = true;
    setImmediate(() => {
      this.wakeScheduled = false;
      void this.pump();
    });
  }

  /** Runs one request (sending and recording); when it ends, the loop looks again. */
  launch(request: () => Promise<void>, onError: (error: unknown) => void): void {
    const run: Promise<void> = request()
      .catch(onError)
      .finally(() => {
        this.inFlight.delete(run);
        this.wake();
      });
    this.inFlight.add(run);
  }

  private async pump(): Promise<void> {
    if (!this.running) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    this.work.pumpStarted?.();
    try {
      do {
        this.again = false;
        if (await this.work.look(this.options.maxInFlight - this.inFlight.size)) this.again = true;
      } while (this.again && this.running);
    } catch (error) {
      this.options.log.error({ err: error }, this.options.failedLook);
    } finally {
      this.pumping = false;
      await this.scheduleNextLook();
    }
  }

  /** Sleeps until the next row falls due (retries, leases), at most pollMs. */
  private async scheduleNextLook(): Promise<void> {
    if (!this.running) return;
    let delay = this.options.pollMs;
    if (!this.work.saturated?.() && this.inFlight.size < this.options.maxInFlight) {
      try {
        const next = await this.work.nextDueAt();
        if (next !== undefined) delay = Math.min(delay, Math.max(next - Date.now(), 1));
      } catch {
        // Unreachable database: look again after pollMs.
      }
    }
    if (!this.running) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.wake(), delay);
    this.timer.unref();
  }
}
