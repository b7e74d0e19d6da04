import { randomBytes } from 'node:crypto';
import type { Registry } from 'prom-client';
import type { Database } from '../db/database.js';
import { claimJobs, dueJobGroups, type JobGroup, nextJobDueAt } from '../db/repositories/destinations.js';
import type { DestinationJobsTable } from '../db/schema.js';
import { OutboxLoop } from '../outbox-loop.js';
import type { SecretBox } from '../secrets.js';
import type { DestinationEnv, Sender } from './adapter.js';
import { type DeliveryContext, deliverBatch, logTurn } from './delivery.js';
import { DeliveryWaiters } from './delivery-waiters.js';
import { checkStale } from './health.js';
import type { Forwarder } from './meta/forwarding.js';
import { dispatcherMetrics } from './metrics.js';
import { senderOf } from './registry.js';

export interface DispatcherTuning {
  /** Requests in flight over every destination and store. */
  maxInFlight: number;
  /** Requests in flight per group: jobs arriving meanwhile wait and leave together (micro-batching). */
  maxInFlightPerGroup: number;
  /** Events per request at most, below each platform's own limit (tests make it small). */
  maxBatch?: number;
  /**
   * How long jobs handed over by this process wait to be sent with later ones, unless a full
   * batch is there first: every group but Meta's conversions while requests wait for those
   * (CAPI_SYNC_WAIT_MS > 0). Without it each conversion cost each platform a request and a
   * recording transaction of its own.
   */
  lingerMs: number;
  /** One request timeout for every platform; unset, each platform's own (Meta 1.5 s, others 5 s). */
  requestTimeoutMs?: number;
  /** Request timeouts per destination kind, over `requestTimeoutMs`. */
  timeouts?: Partial<Record<string, number>>;
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
  /** How often the destinations' oldest pending jobs are looked at (api.md §12); unset: a quarter of the alert delay, 1 s to 60 s. */
  healthCheckMs?: number;
  random: () => number;
}

export const DEFAULT_TUNING: DispatcherTuning = {
  maxInFlight: 8,
  maxInFlightPerGroup: 2,
  lingerMs: 200,
  backoffBaseMs: 1000,
  backoffCapMs: 10 * 60_000,
  leaseMs: 15_000,
  pollMs: 1000,
  random: Math.random,
};

/** The part of pino the dispatcher uses (domain code does not depend on the HTTP framework). */
export interface DispatcherLog {
  debug?(obj: object, msg: string): void;
  info?(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface DispatcherOptions {
  database: Database;
  secrets: SecretBox;
  /** Where the platforms are (config: META_GRAPH_URL, GOOGLE_ADS_API_URL, …). */
  env: DestinationEnv;
  /** CAPI_SYNC_WAIT_MS: how long a request may wait for its Meta event's first attempt. */
  syncWaitMs: number;
  /** DESTINATION_ALERT_AFTER_S in ms: a job pending longer turns its destination failing (api.md §12). */
  alertAfterMs?: number;
  registry?: Registry;
  log?: DispatcherLog;
  tuning?: Partial<DispatcherTuning>;
}

const SILENT: DispatcherLog = { warn() {}, error() {} };
/** Jobs held in memory for sending at most; beyond, new jobs are left to the database path. */
const MAX_READY = 20_000;
const groupKey = (g: JobGroup) => `${g.store_id}\n${g.destination}\n${g.livemode}\n${g.kind}\n${g.route}`;

/**
 * The one outbox dispatcher: delivers `destination_jobs` of every destination through its sender
 * (Meta's, or the platform's adapter). Every job it works on is leased to it in the database, so
 * instances sharing the database never send one at once: jobs this process records are written
 * already leased and handed over in memory (no poll wait); others (retries, other instances',
 * ones whose lease ended) are claimed from the database. Per group (store, destination, mode,
 * kind, route) it sends batches up to the platform's limit, at most `maxInFlightPerGroup` at a
 * time, and records each job's outcome (delivery.ts): an acknowledgement once, whoever holds the
 * lease; a retry with exponential backoff and jitter; a refusal as `failed` with the platform's
 * message. A request for a Meta conversion may wait for its first attempt (sync waiters). The
 * claim loop itself (wake, poll, requests in flight, stop) is the one the webhooks share
 * (outbox-loop.ts).
 */
export class Dispatcher implements Forwarder {
  /** Lease owner id: unique per dispatcher, so a restarted process never mistakes old leases for its own. */
  readonly owner = `dispatcher_${randomBytes(8).toString('hex')}`;
  private readonly tuning: DispatcherTuning;
  private readonly log: DispatcherLog;
  private readonly loop: OutboxLoop;
  /** The last look left due jobs behind for want of a free request slot; a finishing request wakes us. */
  private saturated = false;
  private readonly groupLoad = new Map<string, number>();
  /**
   * Jobs this process is sending or recording. One whose recording waits behind other writes
   * past its lease is claimed again by this process's next look: it is not sent a second time.
   */
  private readonly delivering = new Set<string>();
  /** Jobs this process enqueued (already claimed for us in the database), waiting to be sent. */
  private readonly ready = new Map<string, { group: JobGroup; jobs: DestinationJobsTable[]; since: number }>();
  /** Wakes the loop when the first lingering group's wait ends. */
  private lingerTimer: NodeJS.Timeout | undefined;
  private lingerUntil = Number.POSITIVE_INFINITY;
  private readyCount = 0;
  private readonly waiters = new DeliveryWaiters();
  private readonly context: DeliveryContext;
  private healthTimer: NodeJS.Timeout | undefined;
  private healthCheck: Promise<void> | undefined;

  constructor(private readonly options: DispatcherOptions) {
    this.tuning = { ...DEFAULT_TUNING, ...options.tuning };
    this.log = options.log ?? SILENT;
    const { backoffBaseMs: base, backoffCapMs: cap, random, requestTimeoutMs, timeouts, leaseMs } = this.tuning;
    this.loop = new OutboxLoop(
      {
        nextDueAt: () => nextJobDueAt(options.database.read),
        look: (free) => this.look(free),
        saturated: () => this.saturated,
        pumpStarted: () => {
          this.saturated = false;
        },
      },
      {
        maxInFlight: this.tuning.maxInFlight,
        pollMs: this.tuning.pollMs,
        log: this.log,
        failedLook: 'Dispatcher could not read the outbox',
      },
    );
    this.context = {
      database: options.database,
      secrets: options.secrets,
      env: options.env,
      owner: this.owner,
      metrics: dispatcherMetrics(options.database, options.registry),
      timeoutMs: (sender: Sender) => timeouts?.[sender.kind] ?? requestTimeoutMs ?? sender.timeoutMs ?? 5000,
      leaseMs,
      backoffBaseMs: base,
      // Retry n (1-based) waits between half and all of min(cap, base·2^(n−1)).
      backoff(attempt: number) {
        const ceiling = Math.min(cap, base * 2 ** Math.min(Math.max(attempt - 1, 0), 30));
        return Math.round(ceiling / 2 + random() * (ceiling / 2));
      },
      running: () => this.loop.isRunning,
      settled: (jobs, sent) => {
        const ids = jobs.filter((j) => j.kind === 'conversion').map((j) => j.conversion_id);
        this.waiters.settle(ids, sent);
      },
      log: this.log,
    };
  }

  /** Where the platforms are (a destination check reaches the same hosts as deliveries). */
  get env(): DestinationEnv {
    return this.options.env;
  }

  start(): void {
    this.loop.start();
    this.scheduleHealthCheck();
  }

  /** The stale-job check (health.ts), on a timer of its own beside the outbox loop. */
  private scheduleHealthCheck(): void {
    const alertAfterMs = this.options.alertAfterMs ?? 900_000;
    const every = this.tuning.healthCheckMs ?? Math.min(60_000, Math.max(1000, alertAfterMs / 4));
    this.healthTimer = setTimeout(() => {
      this.healthCheck = checkStale(this.options.database, alertAfterMs)
        .then((turns) => {
          for (const turn of turns) logTurn(this.log, turn);
        })
        .catch((error) => this.log.error({ err: error }, 'Destination health check failed'))
        .finally(() => {
          this.healthCheck = undefined;
          if (this.loop.isRunning) this.scheduleHealthCheck();
        });
    }, every);
    this.healthTimer.unref();
  }

  /**
   * Stops claiming, lets requests in flight finish and be recorded, and gives back what was
   * handed over but not sent (due again at once for the next start, not after the lease).
   * Call before the database closes.
   */
  async stop(): Promise<void> {
    clearTimeout(this.healthTimer);
    clearTimeout(this.lingerTimer);
    await this.loop.stop();
    await this.healthCheck;
    const ready = [...this.ready.values()];
    this.ready.clear();
    this.readyCount = 0;
    for (const { group, jobs } of ready) {
      // deliverBatch with the dispatcher stopped gives the jobs back without a request.
      await deliverBatch(this.context, group, jobs).catch(() => {});
    }
    this.waiters.settleAll(false);
  }

  /**
   * Resolves once the dispatcher is not looking at the outbox (no look scheduled or running).
   * Tests queue a backlog after it, so that the look made at start does not take part of it.
   */
  settled(): Promise<void> {
    return this.loop.settled();
  }

  reserve(jobs: DestinationJobsTable[]): void {
    // Bounded: past it, jobs are left to the database path.
    if (!this.loop.isRunning || this.readyCount >= MAX_READY) return;
    for (const job of jobs) {
      job.claimed_by = this.owner;
      job.next_attempt_at = job.created_at + this.tuning.leaseMs;
    }
  }

  handoff(jobs: DestinationJobsTable[]): Promise<boolean> {
    for (const job of jobs) {
      if (!this.loop.isRunning || job.claimed_by !== this.owner) continue;
      const key = groupKey(job);
      const entry = this.ready.get(key) ?? { group: job, jobs: [], since: Date.now() };
      entry.jobs.push(job);
      this.ready.set(key, entry);
      this.readyCount++;
    }
    const meta = jobs.find((j) => j.destination === 'meta' && j.kind === 'conversion');
    if (meta) return this.awaitDelivery(meta.conversion_id);
    if (!this.saturated) this.wake();
    return Promise.resolve(false);
  }

  /** Something may be due: look at the outbox soon (coalesced, so a burst of commits makes one look). */
  wake(): void {
    this.loop.wake();
  }

  awaitDelivery(conversionId: string): Promise<boolean> {
    // While every request slot the job could use is busy, looking is wasted work (a write
    // transaction per conversion under load): the request that frees a slot looks, and takes
    // everything recorded meanwhile in one batch.
    if (!this.saturated) this.wake();
    const waitMs = this.options.syncWaitMs;
    if (!this.loop.isRunning || waitMs <= 0) return Promise.resolve(false);
    return this.waiters.wait(conversionId, waitMs);
  }

  private batchOf(destination: string): number {
    return Math.min(senderOf(destination)?.maxBatch ?? 100, this.tuning.maxBatch ?? Number.POSITIVE_INFINITY);
  }

  /** One look: the jobs handed over first, then due groups claimed from the database; true when more may be due. */
  private async look(available: number): Promise<boolean> {
    const free = available > 0 ? this.launchReady(available) : available;
    if (free <= 0) {
      this.saturated = true;
      return false;
    }
    const now = Date.now();
    const due = await nextJobDueAt(this.options.database.read);
    if (due === undefined || due > now) return false; // idle: no write transaction at all
    const claimed = await this.options.database.write(async (trx) => {
      const candidates = await dueJobGroups(trx, now, free + this.groupLoad.size);
      const open = candidates.filter((g) => (this.groupLoad.get(groupKey(g)) ?? 0) < this.tuning.maxInFlightPerGroup);
      if (open.length < candidates.length || open.length > free) this.saturated = true;
      const batches: Array<{ group: JobGroup; jobs: DestinationJobsTable[] }> = [];
      for (const group of open.slice(0, free)) {
        const jobs = await claimJobs(trx, group, {
          owner: this.owner,
          now,
          leaseUntil: now + this.tuning.leaseMs,
          limit: this.batchOf(group.destination),
        });
        const fresh = jobs.filter((j) => !this.delivering.has(deliveryKey(group, j)));
        if (fresh.length > 0) batches.push({ group, jobs: fresh });
      }
      return batches;
    });
    let more = claimed.length > 0 && claimed.length === free;
    for (const { group, jobs } of claimed) {
      this.launch(group, jobs);
      if (jobs.length === this.batchOf(group.destination)) more = true; // more of this group may be due
    }
    return more;
  }

  /**
   * Sends jobs handed over by this process's requests; returns the request slots left. A job
   * that waited here for half its lease is dropped: the database path takes it when the lease
   * ends, so it can never be sent by two dispatchers at once.
   */
  private launchReady(free: number): number {
    const now = Date.now();
    const freshUntil = now + this.tuning.leaseMs / 2;
    for (const [key, entry] of this.ready) {
      if (free <= 0) break;
      if ((this.groupLoad.get(key) ?? 0) >= this.tuning.maxInFlightPerGroup) {
        this.saturated = true;
        continue;
      }
      if (this.lingers(entry, now)) continue;
      const fresh = entry.jobs.filter((j) => j.next_attempt_at > freshUntil);
      const batch = fresh.splice(0, this.batchOf(entry.group.destination));
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

  /** Whether a group's handed-over jobs wait for more (lingerMs); if so, the loop is woken when the wait ends. */
  private lingers(entry: { group: JobGroup; jobs: DestinationJobsTable[]; since: number }, now: number): boolean {
    const { group } = entry;
    // A request may be waiting for Meta's answer (CAPI_SYNC_WAIT_MS): its conversions leave at once.
    if (group.destination === 'meta' && group.kind === 'conversion' && this.options.syncWaitMs > 0) return false;
    const until = entry.since + this.tuning.lingerMs;
    if (until <= now || entry.jobs.length >= this.batchOf(group.destination)) return false;
    if (until < this.lingerUntil) {
      clearTimeout(this.lingerTimer);
      this.lingerUntil = until;
      this.lingerTimer = setTimeout(() => {
        this.lingerUntil = Number.POSITIVE_INFINITY;
        this.wake();
      }, until - now);
      this.lingerTimer.unref();
    }
    return true;
  }

  private launch(group: JobGroup, jobs: DestinationJobsTable[]): void {
    const key = groupKey(group);
    this.groupLoad.set(key, (this.groupLoad.get(key) ?? 0) + 1);
    const keys = jobs.map((j) => deliveryKey(group, j));
    for (const k of keys) this.delivering.add(k);
    this.loop.launch(
      async () => {
        try {
          await deliverBatch(this.context, group, jobs);
        } finally {
          for (const k of keys) this.delivering.delete(k);
          const load = (this.groupLoad.get(key) ?? 1) - 1;
          if (load > 0) this.groupLoad.set(key, load);
          else this.groupLoad.delete(key);
          this.saturated = false;
        }
      },
      (error) => {
        // Recording failed (database unreachable): the jobs stay leased and are taken again after the lease.
        this.log.error({ err: error, destination: group.destination, events: jobs.length }, 'Delivery could not be recorded');
      },
    );
  }
}

/** A job of a group, as `delivering` knows it. */
const deliveryKey = (group: JobGroup, job: DestinationJobsTable) => `${group.destination}\n${job.conversion_id}\n${job.job_key}`;
