import { randomBytes } from 'node:crypto';
import type { Registry } from 'prom-client';
import { crashPoint } from '../crash-point.js';
import type { Database } from '../db/database.js';
import {
  claimGroup,
  dueGroups,
  markFailed,
  markRetry,
  markSent,
  nextDueAt,
  type OutboxGroup,
  renewLease,
} from '../db/repositories/outbox.js';
import { findStore } from '../db/repositories/stores.js';
import type { CapiOutboxTable } from '../db/schema.js';
import { type SecretBox, SecretError } from '../secrets.js';
import { webhookEvents } from '../webhooks/events.js';
import { DeliveryWaiters } from './delivery-waiters.js';
import { type DispatcherMetrics, dispatcherMetrics, modeOf } from './dispatcher-metrics.js';
import type { Forwarder } from './forwarding.js';
import { GRAPH_TIMEOUT_MS, type GraphRequest, postEvents } from './graph.js';

export interface DispatcherTuning {
  /** Events per Graph API request: Meta's limit is 1000. */
  maxBatch: number;
  /** Graph API requests in flight, over all pixels. */
  maxInFlight: number;
  /** Requests in flight per pixel: events arriving meanwhile wait and leave together (micro-batching). */
  maxInFlightPerGroup: number;
  requestTimeoutMs: number;
  /** Retry n waits about min(cap, base·2^(n−1)), the upper half of it drawn at random. */
  backoffBaseMs: number;
  backoffCapMs: number;
  /**
   * How long a claimed job stays reserved for this dispatcher: longer than one request plus its
   * recording (renewed before each request of a split), short enough that the jobs of a process
   * killed mid-request are retried soon after it restarts.
   */
  leaseMs: number;
  /** Longest sleep between looks at the outbox (jobs of other instances, retries falling due). */
  pollMs: number;
  random: () => number;
}

export const DEFAULT_TUNING: DispatcherTuning = {
  maxBatch: 1000,
  maxInFlight: 8,
  maxInFlightPerGroup: 2,
  requestTimeoutMs: GRAPH_TIMEOUT_MS,
  backoffBaseMs: 1000,
  backoffCapMs: 10 * 60_000,
  leaseMs: 10_000,
  pollMs: 1000,
  random: Math.random,
};

/** The part of pino the dispatcher uses (domain code does not depend on the HTTP framework). */
export interface DispatcherLog {
  debug?(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface DispatcherOptions {
  database: Database;
  secrets: SecretBox;
  graphUrl: string;
  graphVersion: string;
  /** CAPI_SYNC_WAIT_MS: how long a request may wait for its event's first attempt. */
  syncWaitMs: number;
  registry?: Registry;
  log?: DispatcherLog;
  tuning?: Partial<DispatcherTuning>;
}

type Target = Omit<GraphRequest, 'events'>;

const SILENT: DispatcherLog = { info() {}, warn() {}, error() {} };
/** Jobs held in memory for sending at most; beyond, new jobs are left to the database path. */
const MAX_READY = 20_000;
const groupKey = (g: OutboxGroup) => `${g.store_id}\n${g.pixel_id}\n${g.livemode}\n${g.test_event_code ?? ''}`;

/**
 * Delivers the outbox to Meta's Conversions API. Every job it works on is leased to it in the
 * database, so instances sharing the database never send one at once: jobs this process records
 * are written already leased and handed over in memory; others (retries, other instances', ones
 * whose lease ended) are claimed from the database. It sends them per pixel in batches of up to
 * 1000 and records every attempt. Retryable failures back off exponentially with
 * jitter; a refused batch is halved until the refused events stand alone, so the rest are
 * delivered. A recorded acknowledgement ends a job for good.
 */
export class Dispatcher implements Forwarder {
  /** Lease owner id: unique per dispatcher, so a restarted process never mistakes old leases for its own. */
  readonly owner = `dispatcher_${randomBytes(8).toString('hex')}`;
  private readonly tuning: DispatcherTuning;
  private readonly log: DispatcherLog;
  private running = false;
  private pumping = false;
  private again = false;
  private wakeScheduled = false;
  /** The last look left due jobs behind for want of a free request slot; a finishing request wakes us. */
  private saturated = false;
  private timer: NodeJS.Timeout | undefined;
  private active = 0;
  private readonly groupLoad = new Map<string, number>();
  /** Jobs this process enqueued (already claimed for us in the database), waiting to be sent. */
  private readonly ready = new Map<string, { group: OutboxGroup; jobs: CapiOutboxTable[] }>();
  private readyCount = 0;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly waiters = new DeliveryWaiters();
  private readonly metrics: DispatcherMetrics;
  /** Set by the app: wakes the other destinations' dispatcher when a conversion queued jobs for it. */
  destinationsQueued: (() => void) | undefined;

  constructor(private readonly options: DispatcherOptions) {
    this.tuning = { ...DEFAULT_TUNING, ...options.tuning };
    this.log = options.log ?? SILENT;
    this.metrics = dispatcherMetrics(options.database, options.registry);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.wake();
  }

  /**
   * Stops claiming, lets requests in flight finish and be recorded, and gives back what was
   * claimed but not sent. Call before the database closes.
   */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    while (this.pumping) await new Promise((resolve) => setImmediate(resolve));
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
    // Handed over but not sent: due again at once for the next start, instead of after the lease.
    for (const { group, jobs } of this.ready.values()) {
      await this.recordRetry(group, jobs, 0, undefined, undefined, 0).catch(() => {});
    }
    this.ready.clear();
    this.readyCount = 0;
    this.waiters.settleAll(false);
  }

  /**
   * Resolves once the dispatcher is not looking at the outbox (no look scheduled or running).
   * Tests queue a backlog after it, so that the look made at start does not take part of it.
   */
  async settled(): Promise<void> {
    while (this.pumping || this.wakeScheduled) await new Promise((resolve) => setImmediate(resolve));
  }

  reserve(job: CapiOutboxTable): void {
    // Bounded: past it, jobs are left to the database path.
    if (!this.running || this.readyCount >= MAX_READY) return;
    job.claimed_by = this.owner;
    job.next_attempt_at = job.created_at + this.tuning.leaseMs;
  }

  handoff(job: CapiOutboxTable): Promise<boolean> {
    if (this.running && job.claimed_by === this.owner) {
      const key = groupKey(job);
      const entry = this.ready.get(key) ?? { group: job, jobs: [] };
      entry.jobs.push(job);
      this.ready.set(key, entry);
      this.readyCount++;
    }
    return this.awaitDelivery(job.conversion_id);
  }

  /** Something may be due: look at the outbox soon (coalesced, so a burst of commits makes one look). */
  wake(): void {
    if (!this.running || this.wakeScheduled) return;
    this.wakeScheduled = true;
    setImmediate(() => {
      this.wakeScheduled = false;
      void this.pump();
    });
  }

  awaitDelivery(conversionId: string): Promise<boolean> {
    // While every request slot the job could use is busy, looking is wasted work (a write
    // transaction per conversion under load): the request that frees a slot looks, and takes
    // everything recorded meanwhile in one batch.
    if (!this.saturated) this.wake();
    const waitMs = this.options.syncWaitMs;
    if (!this.running || waitMs <= 0) return Promise.resolve(false);
    return this.waiters.wait(conversionId, waitMs);
  }

  private async pump(): Promise<void> {
    if (!this.running) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    this.saturated = false;
    try {
      do {
        this.again = false;
        let free = this.tuning.maxInFlight - this.active;
        if (free <= 0) {
          this.saturated = true;
          break;
        }
        free = this.launchReady(free);
        if (free <= 0) {
          this.saturated = true;
          break;
        }
        const now = Date.now();
        const due = await nextDueAt(this.options.database.read);
        if (due === undefined || due > now) break; // idle: no write transaction at all
        const claimed = await this.options.database.write(async (trx) => {
          const candidates = await dueGroups(trx, now, free + this.groupLoad.size);
          const open = candidates.filter((g) => (this.groupLoad.get(groupKey(g)) ?? 0) < this.tuning.maxInFlightPerGroup);
          if (open.length < candidates.length || open.length > free) this.saturated = true;
          const batches: Array<{ group: OutboxGroup; jobs: CapiOutboxTable[] }> = [];
          for (const group of open.slice(0, free)) {
            const jobs = await claimGroup(trx, group, {
              owner: this.owner,
              now,
              leaseUntil: now + this.tuning.leaseMs,
              limit: this.tuning.maxBatch,
            });
            if (jobs.length > 0) batches.push({ group, jobs });
          }
          return batches;
        });
        for (const { group, jobs } of claimed) {
          this.launch(group, jobs);
          if (jobs.length === this.tuning.maxBatch) this.again = true; // more of this group may be due
        }
        if (claimed.length > 0 && claimed.length === free) this.again = true;
      } while (this.again && this.running);
    } catch (error) {
      this.log.error({ err: error }, 'Conversions API dispatcher could not read the outbox');
    } finally {
      this.pumping = false;
      await this.scheduleNextLook();
    }
  }

  /**
   * Sends jobs handed over by this process's requests; returns the request slots left. A job
   * that waited here for half its lease is dropped: the database path takes it when the lease
   * ends, so it can never be sent by two dispatchers at once.
   */
  private launchReady(free: number): number {
    const freshUntil = Date.now() + this.tuning.leaseMs / 2;
    for (const [key, entry] of this.ready) {
      if (free <= 0) break;
      if ((this.groupLoad.get(key) ?? 0) >= this.tuning.maxInFlightPerGroup) {
        this.saturated = true;
        continue;
      }
      const fresh = entry.jobs.filter((j) => j.next_attempt_at > freshUntil);
      const batch = fresh.splice(0, this.tuning.maxBatch);
      this.readyCount -= entry.jobs.length - fresh.length;
      entry.jobs = fresh;
      if (fresh.length === 0) this.ready.delete(key);
      if (batch.length > 0) {
        this.launch(entry.group, batch);
        free--;
      }
    }
    return free;
  }

  /** Sleeps until the next job falls due (retries, leases), at most pollMs. */
  private async scheduleNextLook(): Promise<void> {
    if (!this.running) return;
    let delay = this.tuning.pollMs;
    // Due jobs wait for a request slot: the request that frees it wakes us, no need to spin.
    if (this.saturated) {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.wake(), delay);
      this.timer.unref();
      return;
    }
    try {
      const next = await nextDueAt(this.options.database.read);
      if (next !== undefined) delay = Math.min(delay, Math.max(next - Date.now(), 1));
    } catch {
      // Unreachable database: look again after pollMs.
    }
    if (!this.running) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.wake(), delay);
    this.timer.unref();
  }

  private launch(group: OutboxGroup, jobs: CapiOutboxTable[]): void {
    const key = groupKey(group);
    this.active++;
    this.groupLoad.set(key, (this.groupLoad.get(key) ?? 0) + 1);
    const run: Promise<void> = this.deliverBatch(group, jobs)
      .catch((error: unknown) => {
        // Recording failed (database unreachable): the jobs stay leased and are retried after the lease.
        this.log.error({ err: error, events: jobs.length }, 'Conversions API delivery could not be recorded');
      })
      .finally(() => {
        this.active--;
        const load = (this.groupLoad.get(key) ?? 1) - 1;
        if (load > 0) this.groupLoad.set(key, load);
        else this.groupLoad.delete(key);
        this.inFlight.delete(run);
        this.saturated = false;
        this.wake();
      });
    this.inFlight.add(run);
  }

  private async deliverBatch(group: OutboxGroup, jobs: CapiOutboxTable[]): Promise<void> {
    const first = jobs[0] as CapiOutboxTable;
    const now = Date.now();
    // A job tried before keeps its last error: its retry was due by its limit and ran late.
    const expiredBy = new Map<string, CapiOutboxTable[]>();
    for (const job of jobs.filter((j) => j.expires_at <= now)) {
      const error =
        job.attempts > 0 && job.last_error !== null
          ? `Not delivered within 7 days of the event; last error: ${job.last_error}`
          : 'Not delivered within 7 days of the event; Meta no longer accepts it';
      expiredBy.set(error, [...(expiredBy.get(error) ?? []), job]);
    }
    for (const [error, expired] of expiredBy) await this.recordFailed(group, expired, 0, error, undefined);
    const live = jobs.filter((j) => j.expires_at > now);
    if (live.length === 0) return;
    // The store's current token: a rotated token applies to jobs already queued.
    const store = await findStore(this.options.database.read, first.account_id, group.store_id);
    if (!store?.capi_access_token) {
      const error = 'Forwarding was switched off for this store (no capiAccessToken) before the event could be sent';
      return this.recordFailed(group, live, 0, error, null);
    }
    let accessToken: string;
    try {
      accessToken = this.options.secrets.open(store.capi_access_token, store.id);
    } catch (error) {
      if (!(error instanceof SecretError)) throw error;
      // Kept pending: the operator can restore the key (or set the token again) without losing events.
      const message =
        "The store's access token cannot be decrypted: SECRETS_KEY changed. Restore it or set capiAccessToken again";
      this.log.error({ storeId: store.id }, message);
      return this.recordRetry(group, live, 0, message, null, undefined);
    }
    const target: Target = {
      baseUrl: this.options.graphUrl,
      version: this.options.graphVersion,
      pixelId: group.pixel_id,
      accessToken,
      testEventCode: group.test_event_code,
    };
    await this.deliver(group, live, target, 0);
  }

  /** One request for `jobs`; `prior` counts the earlier requests of this attempt that included them (splits). */
  private async deliver(group: OutboxGroup, jobs: CapiOutboxTable[], target: Target, prior: number): Promise<void> {
    if (!this.running) {
      // Shutting down mid-split: give the rest back for the next start, counting the requests made.
      return this.recordRetry(group, jobs, prior, undefined, undefined, 0);
    }
    if (prior > 0) {
      const until = Date.now() + this.tuning.leaseMs;
      const ids = jobs.map((j) => j.conversion_id);
      await this.options.database.write((trx) => renewLease(trx, ids, this.owner, until));
    }
    crashPoint('forward'); // test hook (crash-point.ts): jobs leased, the request not sent yet
    const result = await postEvents({ ...target, events: jobs.map((j) => j.event) }, this.tuning.requestTimeoutMs);
    this.metrics.requests.inc({ outcome: result.outcome });
    const attempts = prior + 1;
    if (result.outcome === 'accepted') return this.recordSent(group, jobs, attempts, result.fbtraceId);
    if (result.outcome === 'retry') {
      return this.recordRetry(group, jobs, attempts, result.error, result.fbtraceId, result.retryAfterMs);
    }
    if (result.eventLevel && jobs.length > 1) {
      // Meta refuses a whole batch for one bad event: halve it until the bad ones stand alone.
      const half = Math.ceil(jobs.length / 2);
      await this.deliver(group, jobs.slice(0, half), target, attempts);
      await this.deliver(group, jobs.slice(half), target, attempts);
      return;
    }
    this.log.warn(
      { pixelId: group.pixel_id, events: jobs.length, fbtraceId: result.fbtraceId, error: result.error },
      'Meta refused Conversions API events',
    );
    return this.recordFailed(group, jobs, attempts, result.error, result.fbtraceId);
  }

  /** Retry n (1-based) waits between half and all of min(cap, base·2^(n−1)). */
  private backoff(attempt: number): number {
    const { backoffBaseMs: base, backoffCapMs: cap, random } = this.tuning;
    const ceiling = Math.min(cap, base * 2 ** Math.min(Math.max(attempt - 1, 0), 30));
    return Math.round(ceiling / 2 + random() * (ceiling / 2));
  }

  private async recordSent(group: OutboxGroup, jobs: CapiOutboxTable[], attempts: number, fbtraceId: string | null) {
    const ids = jobs.map((j) => j.conversion_id);
    const now = Date.now();
    const changed = await this.options.database.write((trx) => markSent(trx, ids, { now, attempts, fbtraceId }));
    this.metrics.sent.inc({ mode: modeOf(group.livemode) }, changed.length);
    this.log.debug?.(
      {
        storeId: group.store_id,
        pixelId: group.pixel_id,
        mode: modeOf(group.livemode),
        events: jobs.length,
        recorded: changed.length,
        attempts,
        fbtraceId,
      },
      'Conversions API batch delivered',
    );
    this.waiters.settle(ids, true);
  }

  private async recordFailed(
    group: OutboxGroup,
    jobs: CapiOutboxTable[],
    attempts: number,
    error: string,
    /** undefined: the jobs keep the fbtrace_id they have. */
    fbtraceId: string | null | undefined,
  ) {
    const ids = jobs.map((j) => j.conversion_id);
    const now = Date.now();
    const text = fbtraceId ? `${error} (fbtrace_id ${fbtraceId})` : error;
    const changed = await this.options.database.write(async (trx) => {
      const failed = await markFailed(trx, ids, this.owner, { now, attempts, error: text, fbtraceId });
      await webhookEvents.forwardingFailed(trx, 'meta', failed, text);
      return failed;
    });
    this.metrics.failed.inc({ mode: modeOf(group.livemode) }, changed.length);
    this.waiters.settle(ids, false);
  }

  /**
   * Schedules the next attempt (`error` undefined: the jobs were not tried, nothing to record
   * but the requests made). A job whose next attempt would fall after its 7-day limit fails now.
   */
  private async recordRetry(
    group: OutboxGroup,
    jobs: CapiOutboxTable[],
    attempts: number,
    error: string | undefined,
    fbtraceId: string | null | undefined,
    retryAfterMs: number | undefined,
  ) {
    const now = Date.now();
    const total = Math.max(...jobs.map((j) => j.attempts)) + attempts;
    const next = error === undefined ? now : now + Math.max(this.backoff(total), retryAfterMs ?? 0);
    const giveUp = jobs.filter((j) => next > j.expires_at).map((j) => j.conversion_id);
    const retry = jobs.filter((j) => next <= j.expires_at).map((j) => j.conversion_id);
    const text = error !== undefined && fbtraceId ? `${error} (fbtrace_id ${fbtraceId})` : error;
    const expiredError = `Not delivered within 7 days of the event; last error: ${text ?? 'none'}`;
    const [retried, failed] = await this.options.database.write(async (trx) => {
      const marked: [string[], string[]] = [
        await markRetry(trx, retry, this.owner, { now, attempts, nextAttemptAt: next, error: text, fbtraceId }),
        await markFailed(trx, giveUp, this.owner, { now, attempts, error: expiredError, fbtraceId }),
      ];
      await webhookEvents.forwardingFailed(trx, 'meta', marked[1], expiredError);
      return marked;
    });
    if (error !== undefined) this.metrics.retried.inc({ mode: modeOf(group.livemode) }, retried.length);
    this.metrics.failed.inc({ mode: modeOf(group.livemode) }, failed.length);
    this.waiters.settle([...retry, ...giveUp], false);
  }
}
