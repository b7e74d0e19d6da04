import type { BatchEvent, BatchResult, BatchResultEntry } from './types.js';

export interface EventQueueOptions {
  /** Send once this many events wait (1–500); default 100. */
  maxEvents?: number;
  /** Send this long after the first waiting event at the latest; default 1000 ms. */
  flushIntervalMs?: number;
  /**
   * Called when a batch could not be sent at all (after the client's retries): its events'
   * promises reject with the same error. For fire-and-forget use, where nobody awaits them.
   */
  onError?: (error: unknown, events: BatchEvent[]) => void;
}

/** The server takes at most 1 MiB a request: a batch is sent early before its JSON gets near that. */
const MAX_BATCH_BYTES = 900 * 1024;
const MAX_EVENTS = 500;

interface Waiting {
  event: BatchEvent;
  bytes: number;
  resolve: (entry: BatchResultEntry) => void;
  reject: (error: unknown) => void;
}

/**
 * Events queued in memory and sent in batches (`wt.track.queue()`), as analytics libraries do:
 * `add` returns at once; the event goes out with the next batch, every `maxEvents` events or
 * `flushIntervalMs` after the first waiting one. Batches are sent one at a time, in the order the
 * events were added, so a conversion may name a click added before it. `flush()` sends what
 * waits and resolves when every batch sent so far is answered.
 *
 * The promise `add` returns resolves with the event's result entry (an event the server refused
 * resolves too, with its `error`; one answered 429 `rate_limit_exceeded` was not recorded — add it
 * again later), and rejects only when its batch could not be sent (also reported to `onError`).
 * Nobody has to await it: a rejection nobody awaits is not an unhandled rejection.
 */
export class EventQueue {
  private waiting: Waiting[] = [];
  private bytes = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private sending: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly maxEvents: number;
  private readonly flushIntervalMs: number;

  constructor(
    private readonly send: (events: BatchEvent[]) => Promise<BatchResult>,
    private readonly options: EventQueueOptions = {},
  ) {
    const maxEvents = options.maxEvents ?? 100;
    if (!Number.isInteger(maxEvents) || maxEvents < 1 || maxEvents > MAX_EVENTS) {
      throw new TypeError(`Waytrack: maxEvents must be an integer from 1 to ${MAX_EVENTS}, got ${maxEvents}`);
    }
    const flushIntervalMs = options.flushIntervalMs ?? 1000;
    if (!Number.isFinite(flushIntervalMs) || flushIntervalMs < 0) {
      throw new TypeError(`Waytrack: flushIntervalMs must be a number ≥ 0, got ${flushIntervalMs}`);
    }
    this.maxEvents = maxEvents;
    this.flushIntervalMs = flushIntervalMs;
  }

  /** Events waiting to be sent. */
  get size(): number {
    return this.waiting.length;
  }

  /** Queues an event; see the class comment for what the promise means. */
  add(event: BatchEvent): Promise<BatchResultEntry> {
    if (this.closed) throw new Error('Waytrack: this queue is closed');
    const bytes = JSON.stringify(event).length + 1;
    if (this.waiting.length > 0 && this.bytes + bytes > MAX_BATCH_BYTES) this.sendWaiting();
    const entry = new Promise<BatchResultEntry>((resolve, reject) => {
      this.waiting.push({ event, bytes, resolve, reject });
    });
    entry.catch(() => {}); // handled: the caller may never await it (onError reports it)
    this.bytes += bytes;
    if (this.waiting.length >= this.maxEvents) this.sendWaiting();
    else this.timer ??= this.startTimer();
    return entry;
  }

  /** Sends every waiting event and resolves once every batch sent so far is answered. Never rejects. */
  async flush(): Promise<void> {
    if (this.waiting.length > 0) this.sendWaiting();
    await this.sending;
  }

  /** `flush()`, then refuses further events: for shutdown. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  private startTimer(): ReturnType<typeof setTimeout> {
    const timer = setTimeout(() => {
      this.timer = undefined;
      this.sendWaiting();
    }, this.flushIntervalMs);
    // Node: the timer alone does not keep the process alive (flush on shutdown instead).
    (timer as { unref?: () => void }).unref?.();
    return timer;
  }

  /** Takes the waiting events and sends them after the batches before them. */
  private sendWaiting(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.waiting;
    this.waiting = [];
    this.bytes = 0;
    if (batch.length === 0) return;
    this.sending = this.sending.then(() => this.sendBatch(batch));
  }

  private async sendBatch(batch: Waiting[]): Promise<void> {
    const events = batch.map((w) => w.event);
    try {
      const { results } = await this.send(events);
      batch.forEach((w, i) => {
        const entry = results[i];
        if (entry) w.resolve(entry);
        else w.reject(new Error(`Waytrack: no result for event ${i} of the batch`));
      });
    } catch (error) {
      for (const w of batch) w.reject(error);
      try {
        this.options.onError?.(error, events);
      } catch {
        // a throwing onError must not stop the queue
      }
    }
  }
}
