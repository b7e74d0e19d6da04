import { randomBytes } from 'node:crypto';
import { Counter, Gauge, type Registry } from 'prom-client';
import { modeOf } from '../capi/dispatcher-metrics.js';
import { crashPoint } from '../crash-point.js';
import type { Database } from '../db/database.js';
import {
  claimJobs,
  countJobs,
  dueJobGroups,
  type JobGroup,
  type JobKey,
  jobsOfConversions,
  markJobs,
  nextJobDueAt,
  postponeJobs,
  showOnConversions,
  skipJob,
  uncountAttempt,
} from '../db/repositories/destinations.js';
import type { DestinationJobsTable } from '../db/schema.js';
import type { SecretBox } from '../secrets.js';
import { SecretError } from '../secrets.js';
import { webhookEvents } from '../webhooks/events.js';
import type { DestinationEnv, Outcome } from './adapter.js';
import { orderRefundJobs } from './refund-order.js';
import { adapterOf } from './registry.js';
import { openDestination } from './settings.js';

export interface DestinationTuning {
  /** Requests in flight over every destination and store. */
  maxInFlight: number;
  requestTimeoutMs: number;
  backoffBaseMs: number;
  backoffCapMs: number;
  /** How long a claimed job stays reserved for this dispatcher (longer than a request and its recording). */
  leaseMs: number;
  /** Longest sleep between looks at the outbox. */
  pollMs: number;
  random: () => number;
}

export const DEFAULT_DESTINATION_TUNING: DestinationTuning = {
  maxInFlight: 8,
  requestTimeoutMs: 5000,
  backoffBaseMs: 1000,
  backoffCapMs: 10 * 60_000,
  leaseMs: 15_000,
  pollMs: 1000,
  random: Math.random,
};

interface Log {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface DestinationDispatcherOptions {
  database: Database;
  secrets: SecretBox;
  env: DestinationEnv;
  registry?: Registry;
  log?: Log;
  tuning?: Partial<DestinationTuning>;
}

const SILENT: Log = { warn() {}, error() {} };
const groupKey = (g: JobGroup) => `${g.store_id}\n${g.destination}\n${g.livemode}\n${g.kind}`;
const keyOf = (j: DestinationJobsTable): JobKey => ({ conversion_id: j.conversion_id, job_key: j.job_key });

/**
 * Delivers `destination_jobs` (every destination but Meta, whose outbox is capi/dispatcher.ts)
 * through each platform's adapter. A job is leased in the database before it is sent, so
 * dispatchers sharing the database never send it at once, and one of a process killed
 * mid-request is taken again after its lease. Per group (store, destination, mode) it sends
 * batches up to the adapter's limit and records each job's outcome: an acknowledgement once
 * (whoever holds the lease), a retry with exponential backoff and jitter (past the job's age
 * limit it fails, keeping the last error), a refusal as `failed` with the platform's message.
 */
export class DestinationDispatcher {
  readonly owner = `destinations_${randomBytes(8).toString('hex')}`;
  private readonly tuning: DestinationTuning;
  private readonly log: Log;
  private running = false;
  private pumping = false;
  private again = false;
  private wakeScheduled = false;
  private timer: NodeJS.Timeout | undefined;
  private active = 0;
  private readonly busy = new Set<string>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly metrics;

  constructor(private readonly options: DestinationDispatcherOptions) {
    this.tuning = { ...DEFAULT_DESTINATION_TUNING, ...options.tuning };
    this.log = options.log ?? SILENT;
    const registers = options.registry ? [options.registry] : [];
    this.metrics = {
      events: new Counter({
        name: 'waytrack_destination_events_total',
        help: 'Conversion deliveries to destinations other than Meta, by destination, mode and outcome (sent, retried, failed)',
        labelNames: ['destination', 'mode', 'outcome'],
        registers,
      }),
      refunds: new Counter({
        name: 'waytrack_destination_refunds_total',
        help: 'Refund deliveries (Google Ads adjustments, opt-in refund events) to destinations other than Meta, by destination, mode and outcome (sent, retried, failed, skipped)',
        labelNames: ['destination', 'mode', 'outcome'],
        registers,
      }),
      requests: new Counter({
        name: 'waytrack_destination_requests_total',
        help: 'Requests to destinations other than Meta, by destination',
        labelNames: ['destination'],
        registers,
      }),
      jobs: new Gauge({
        name: 'waytrack_destination_backlog',
        help: 'Conversions waiting for delivery to a destination other than Meta, by destination and mode',
        labelNames: ['destination', 'mode'],
        registers,
        collect: async function (this: Gauge) {
          try {
            this.reset();
            for (const row of await countJobs(options.database.read)) {
              this.set({ destination: row.destination, mode: modeOf(row.livemode) }, row.count);
            }
          } catch {
            // The database is unreachable: readiness reports that.
          }
        },
      }),
    };
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.wake();
  }

  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    while (this.pumping) await new Promise((resolve) => setImmediate(resolve));
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  async settled(): Promise<void> {
    while (this.pumping || this.wakeScheduled) await new Promise((resolve) => setImmediate(resolve));
  }

  /** Jobs may be due: look soon (coalesced). */
  wake(): void {
    if (!this.running || this.wakeScheduled) return;
    this.wakeScheduled = true;
    setImmediate(() => {
      this.wakeScheduled = false;
      void this.pump();
    });
  }

  private async pump(): Promise<void> {
    if (!this.running) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    try {
      do {
        this.again = false;
        const free = this.tuning.maxInFlight - this.active;
        if (free <= 0) break;
        const now = Date.now();
        const due = await nextJobDueAt(this.options.database.read);
        if (due === undefined || due > now) break;
        const claimed = await this.options.database.write(async (trx) => {
          const groups = (await dueJobGroups(trx, now, free + this.busy.size)).filter((g) => !this.busy.has(groupKey(g)));
          const batches: Array<{ group: JobGroup; jobs: DestinationJobsTable[] }> = [];
          for (const group of groups.slice(0, free)) {
            const adapter = adapterOf(group.destination);
            const jobs = await claimJobs(trx, group, {
              owner: this.owner,
              now,
              leaseUntil: now + this.tuning.leaseMs,
              limit: adapter?.maxBatch ?? 100,
            });
            if (jobs.length > 0) batches.push({ group, jobs });
          }
          return batches;
        });
        for (const { group, jobs } of claimed) {
          this.launch(group, jobs);
          if (jobs.length === (adapterOf(group.destination)?.maxBatch ?? 100)) this.again = true;
        }
      } while (this.again && this.running);
    } catch (error) {
      this.log.error({ err: error }, 'Destination dispatcher could not read the outbox');
    } finally {
      this.pumping = false;
      await this.scheduleNextLook();
    }
  }

  private async scheduleNextLook(): Promise<void> {
    if (!this.running) return;
    let delay = this.tuning.pollMs;
    try {
      const next = await nextJobDueAt(this.options.database.read);
      if (next !== undefined) delay = Math.min(delay, Math.max(next - Date.now(), 1));
    } catch {
      // Unreachable database: look again after pollMs.
    }
    if (!this.running) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.wake(), delay);
    this.timer.unref();
  }

  private launch(group: JobGroup, jobs: DestinationJobsTable[]): void {
    const key = groupKey(group);
    this.active++;
    this.busy.add(key);
    const run: Promise<void> = this.deliver(group, jobs)
      .catch((error: unknown) => {
        // Recording failed (database unreachable): the jobs stay leased and are taken again after the lease.
        this.log.error({ err: error, destination: group.destination, events: jobs.length }, 'Destination delivery not recorded');
      })
      .finally(() => {
        this.active--;
        this.busy.delete(key);
        this.inFlight.delete(run);
        this.wake();
      });
    this.inFlight.add(run);
  }

  private async deliver(group: JobGroup, jobs: DestinationJobsTable[]): Promise<void> {
    const adapter = adapterOf(group.destination);
    const label = adapter?.label ?? group.destination;
    const now = Date.now();
    const expired = jobs.filter((j) => Number(j.expires_at) <= now);
    for (const job of expired) {
      const error =
        job.last_error !== null
          ? `Not delivered to ${label} within its age limit; last error: ${job.last_error}`
          : `Not delivered to ${label} within its age limit; ${label} no longer accepts it`;
      await this.record(group, [job], { outcome: 'failed', error }, undefined, false);
    }
    let live = jobs.filter((j) => Number(j.expires_at) > now);
    if (live.length === 0) return;
    if (!adapter) {
      return this.record(group, live, { outcome: 'failed', error: `Unknown destination ${group.destination}` }, undefined, false);
    }
    let destination: Awaited<ReturnType<typeof openDestination>>;
    try {
      destination = await openDestination(this.options.database.read, group.store_id, group.destination, this.options.secrets);
    } catch (error) {
      if (!(error instanceof SecretError)) throw error;
      // Kept pending: the operator can restore SECRETS_KEY, or the merchant set the destination again.
      const message = `The ${label} destination's secrets cannot be decrypted: SECRETS_KEY changed. Restore it or PUT the destination again`;
      this.log.error({ storeId: group.store_id, destination: group.destination }, message);
      return this.record(group, live, { outcome: 'retry', error: message }, undefined, false);
    }
    if (!destination) {
      const error = `The store's ${label} destination was removed before the conversion could be sent`;
      return this.record(group, live, { outcome: 'failed', error }, undefined, false);
    }
    if (group.kind === 'refund') {
      live = await this.orderRefunds(group, live, label);
      if (live.length === 0) return;
    }
    crashPoint('forward'); // test hook: jobs leased, the request not sent yet
    const result = await adapter.send({
      settings: destination.settings,
      secrets: destination.secrets,
      live: group.livemode === 1,
      kind: group.kind,
      payloads: live.map((j) => JSON.parse(j.payload) as unknown),
      env: this.options.env,
      timeoutMs: this.tuning.requestTimeoutMs,
    });
    this.metrics.requests.inc({ destination: group.destination });
    // Jobs with the same outcome are recorded together.
    const byOutcome = new Map<string, { outcome: Outcome; jobs: DestinationJobsTable[] }>();
    live.forEach((job, i) => {
      const outcome = result.outcomes[i] ?? { outcome: 'retry', error: `${label} gave no answer for this event` };
      const key = JSON.stringify(outcome);
      const entry = byOutcome.get(key) ?? { outcome, jobs: [] };
      entry.jobs.push(job);
      byOutcome.set(key, entry);
    });
    for (const { outcome, jobs: same } of byOutcome.values()) {
      if (outcome.outcome === 'failed') {
        this.log.warn({ destination: group.destination, events: same.length, error: outcome.error }, `${label} refused events`);
      }
      await this.record(group, same, outcome, result.traceId, true);
    }
  }

  /** Refund jobs that may go now (refund-order.ts); the others are postponed or skipped here. */
  private async orderRefunds(group: JobGroup, jobs: DestinationJobsTable[], label: string): Promise<DestinationJobsTable[]> {
    const { destination } = group;
    const now = Date.now();
    const ids = [...new Set(jobs.map((j) => j.conversion_id))];
    const siblings = await jobsOfConversions(this.options.database.read, destination, ids);
    const order = orderRefundJobs(jobs, siblings, label, now, this.tuning.backoffBaseMs);
    await this.recording(() =>
      this.options.database.write(async (trx) => {
        for (const p of order.postpone) await postponeJobs(trx, destination, [keyOf(p.job)], this.owner, p.until, now);
        for (const k of order.skip) await skipJob(trx, destination, keyOf(k.job), this.owner, k.message, now);
      }),
    );
    if (order.skip.length > 0) {
      this.metrics.refunds.inc({ destination, mode: modeOf(group.livemode), outcome: 'skipped' }, order.skip.length);
    }
    return order.send;
  }

  private backoff(attempt: number): number {
    const { backoffBaseMs: base, backoffCapMs: cap, random } = this.tuning;
    const ceiling = Math.min(cap, base * 2 ** Math.min(Math.max(attempt - 1, 0), 30));
    return Math.round(ceiling / 2 + random() * (ceiling / 2));
  }

  /**
   * Runs a recording, again after a moment when it fails (a deadlock victim, a dropped
   * connection): an acknowledgement not recorded would be sent again after the lease.
   */
  private async recording<T>(write: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await write();
      } catch (error) {
        if (attempt >= 3) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
      }
    }
  }

  /** Records one outcome for jobs; `tried`: a request was made for them (else attempts stay). */
  private async record(
    group: JobGroup,
    jobs: DestinationJobsTable[],
    outcome: Outcome,
    traceId: string | undefined,
    tried: boolean,
  ): Promise<void> {
    const now = Date.now();
    const mode = modeOf(group.livemode);
    const destination = group.destination;
    const keys = jobs.map(keyOf);
    const changed = await this.recording(() =>
      this.options.database.write(async (trx) => {
        let rows: DestinationJobsTable[];
        if (outcome.outcome === 'sent') {
          rows = await markJobs(trx, destination, keys, this.owner, 'sent', { now, traceId: traceId ?? null });
        } else if (outcome.outcome === 'failed') {
          rows = await markJobs(trx, destination, keys, this.owner, 'failed', {
            now,
            error: outcome.error,
            ...(traceId !== undefined && { traceId }),
          });
        } else {
          const attempts = Math.max(...jobs.map((j) => j.attempts)) + 1;
          const next = now + Math.max(this.backoff(attempts), outcome.retryAfterMs ?? 0);
          const retry = jobs.filter((j) => next <= Number(j.expires_at)).map(keyOf);
          const giveUp = jobs.filter((j) => next > Number(j.expires_at)).map(keyOf);
          rows = [
            ...(await markJobs(trx, destination, retry, this.owner, 'pending', {
              now,
              nextAttemptAt: next,
              error: outcome.error,
            })),
            ...(await markJobs(trx, destination, giveUp, this.owner, 'failed', {
              now,
              error: `Not delivered within the platform's age limit; last error: ${outcome.error}`,
            })),
          ];
        }
        if (!tried && rows.length > 0) {
          // No request was made: the attempt count stays what it was.
          for (const row of rows) row.attempts -= 1;
          await uncountAttempt(trx, destination, rows.map(keyOf));
        }
        await showOnConversions(trx, rows);
        await webhookEvents.jobsFailed(trx, destination, rows); // conversion.forwarding_failed for the rows now failed
        return rows;
      }),
    );
    for (const row of changed) {
      const label = row.status === 'pending' ? 'retried' : row.status;
      (row.kind === 'refund' ? this.metrics.refunds : this.metrics.events).inc({ destination, mode, outcome: label });
    }
  }
}
