import { crashPoint } from '../crash-point.js';
import type { Database } from '../db/database.js';
import {
  type JobGroup,
  type JobKey,
  jobsOfConversions,
  postponeJobs,
  renewLeases,
  skipJob,
} from '../db/repositories/destinations.js';
import type { DestinationJobsTable } from '../db/schema.js';
import { type SecretBox, SecretError } from '../secrets.js';
import type { DestinationEnv, Outcome, Sender } from './adapter.js';
import type { AttemptHealth, HealthTurn } from './health.js';
import type { DispatcherMetrics } from './metrics.js';
import { type JobMark, RECORD_OUTCOME, type RecordedJob } from './record-outcome.js';
import { orderRefundJobs } from './refund-order.js';
import { senderOf } from './registry.js';
import { openDestination } from './settings.js';

/** What delivering one claimed batch needs of its dispatcher. */
export interface DeliveryContext {
  database: Database;
  secrets: SecretBox;
  env: DestinationEnv;
  owner: string;
  metrics: DispatcherMetrics;
  /** Requests time out after this (the tuning's, else the sender's own). */
  timeoutMs(sender: Sender): number;
  leaseMs: number;
  backoffBaseMs: number;
  backoff(attempt: number): number;
  /** false once the dispatcher stops: a split batch gives the rest back instead of sending on. */
  running(): boolean;
  /** The outcome of a Meta conversion job was recorded (sync waiters: sent or not). */
  settled(jobs: DestinationJobsTable[], sent: boolean): void;
  log: {
    debug?(obj: object, msg: string): void;
    info?(obj: object, msg: string): void;
    warn(obj: object, msg: string): void;
    error(obj: object, msg: string): void;
  };
}

/** The one log line of a destination's turn (api.md §12): a warning when it fails, a note when it recovers. */
export function logTurn(log: DeliveryContext['log'], turn: HealthTurn): void {
  const fields = { storeId: turn.storeId, destination: turn.destination, consecutiveFailures: turn.consecutiveFailures };
  if (turn.turned === 'failing')
    log.warn(fields, `Destination ${turn.destination} of store ${turn.storeId} is failing: ${turn.message}`);
  else
    (log.info ?? log.warn).call(
      log,
      fields,
      `Destination ${turn.destination} of store ${turn.storeId} recovered: ${turn.message}`,
    );
}

/** What a recording does: an outcome, or giving jobs back untried (due again at once). */
type Recorded = Outcome | { outcome: 'give-back' };

const keyOf = (j: DestinationJobsTable): JobKey => ({ conversion_id: j.conversion_id, job_key: j.job_key });

/**
 * Delivers one claimed batch of one group: jobs past their age limit fail, the destination's
 * current settings and secrets are opened (a job of a removed destination fails, one whose
 * secrets cannot be opened is kept pending), refund jobs wait for their conversion's, and the
 * rest go in one request whose outcome is recorded per job.
 */
export async function deliverBatch(ctx: DeliveryContext, group: JobGroup, jobs: DestinationJobsTable[]): Promise<void> {
  const sender = senderOf(group.destination);
  const label = sender?.label ?? group.destination;
  const now = Date.now();
  for (const job of jobs.filter((j) => Number(j.expires_at) <= now)) {
    const within = sender?.ageLimit ?? `to ${label} within its age limit`;
    const error =
      job.last_error !== null
        ? `Not delivered ${within}; last error: ${job.last_error}`
        : `Not delivered ${within}; ${label} no longer accepts it`;
    await record(ctx, group, [job], { outcome: 'failed', error }, undefined, 0);
  }
  let live = jobs.filter((j) => Number(j.expires_at) > now);
  if (live.length === 0) return;
  if (!sender) {
    return record(ctx, group, live, { outcome: 'failed', error: `Unknown destination ${group.destination}` }, undefined, 0);
  }
  let destination: Awaited<ReturnType<typeof openDestination>>;
  try {
    const account = { accountId: (live[0] as DestinationJobsTable).account_id, storeId: group.store_id };
    destination = await openDestination(ctx.database.read, account, group.destination, ctx.secrets);
  } catch (error) {
    if (!(error instanceof SecretError)) throw error;
    // Kept pending: the operator can restore SECRETS_KEY, or the merchant set the destination again.
    const message =
      sender.messages?.secretsLost ??
      `The ${label} destination's secrets cannot be decrypted: SECRETS_KEY changed. Restore it or PUT the destination again`;
    ctx.log.error({ storeId: group.store_id, destination: group.destination }, message);
    return record(ctx, group, live, { outcome: 'retry', error: message }, undefined, 0, { ok: false, error: message });
  }
  if (!destination) {
    const error = sender.messages?.removed ?? `The store's ${label} destination was removed before the conversion could be sent`;
    return record(ctx, group, live, { outcome: 'failed', error }, undefined, 0);
  }
  if (group.kind === 'refund' && sender.ordersRefunds !== false) {
    live = await orderRefunds(ctx, group, live, label);
    if (live.length === 0) return;
  }
  await send(ctx, sender, group, live, destination);
}

/**
 * Sends `jobs` in one request; when the platform refuses the whole batch for some event in it
 * (`split`), halves it until the bad ones stand alone, one request at a time.
 */
async function send(
  ctx: DeliveryContext,
  sender: Sender,
  group: JobGroup,
  jobs: DestinationJobsTable[],
  destination: { settings: Record<string, unknown>; secrets: Record<string, unknown> },
): Promise<void> {
  // The parts still to send, the next first; `prior` counts the requests that already included them.
  const parts: Array<{ jobs: DestinationJobsTable[]; prior: number }> = [{ jobs, prior: 0 }];
  for (let part = parts.shift(); part; part = parts.shift()) {
    if (!ctx.running()) {
      // Shutting down mid-split: give the rest back for the next start, counting the requests made.
      for (const rest of [part, ...parts]) await record(ctx, group, rest.jobs, { outcome: 'give-back' }, undefined, rest.prior);
      return;
    }
    if (part.prior > 0) {
      // Every job still waiting in this split is renewed, not only this part's: the other halves
      // wait for all the requests before theirs, which can outlast the claim's lease, and a job
      // whose lease ended would be claimed and sent again meanwhile (by any dispatcher). One
      // whose lease was lost all the same is its new holder's to send, not this one's.
      const waiting = [part, ...parts];
      const until = Date.now() + ctx.leaseMs;
      const keys = waiting.flatMap((p) => p.jobs.map(keyOf));
      const held = await ctx.database.write((trx) => renewLeases(trx, group.destination, keys, ctx.owner, until));
      if (held.length < keys.length) {
        const mine = new Set(held.map((k) => `${k.conversion_id}\n${k.job_key}`));
        for (const p of waiting) p.jobs = p.jobs.filter((j) => mine.has(`${j.conversion_id}\n${j.job_key}`));
        ctx.log.warn(
          { destination: group.destination, events: keys.length - held.length },
          'Events of a split batch left to the dispatcher now holding them',
        );
        if (part.jobs.length === 0) continue;
      }
    }
    const attempts = await sendPart(ctx, sender, group, part.jobs, destination, part.prior);
    if (attempts !== undefined) {
      // Refused for some event in it: the two halves go next, each in a request of its own.
      const half = Math.ceil(part.jobs.length / 2);
      parts.unshift({ jobs: part.jobs.slice(0, half), prior: attempts }, { jobs: part.jobs.slice(half), prior: attempts });
    }
  }
}

/**
 * One request for `jobs` and the recording of its outcomes; `prior` counts the earlier requests
 * of this attempt that included them. Returns the requests made so far when the batch is to be
 * halved instead (nothing recorded).
 */
async function sendPart(
  ctx: DeliveryContext,
  sender: Sender,
  group: JobGroup,
  jobs: DestinationJobsTable[],
  destination: { settings: Record<string, unknown>; secrets: Record<string, unknown> },
  prior: number,
): Promise<number | undefined> {
  crashPoint('forward'); // test hook (crash-point.ts): jobs leased, the request not sent yet
  const result = await sender.send({
    ...destination,
    live: group.livemode === 1,
    kind: group.kind,
    route: group.route,
    payloads: jobs.map((j) => (sender.rawPayloads ? j.payload : (JSON.parse(j.payload) as unknown))),
    env: ctx.env,
    timeoutMs: ctx.timeoutMs(sender),
  });
  ctx.metrics.request(group.destination, result.requestOutcome);
  const attempts = prior + 1;
  if (sender.bisect && result.split && jobs.length > 1) return attempts;
  // The attempt as the destination's health counts it: the platform acknowledged something, or not.
  const sent = result.outcomes.some((o) => o.outcome === 'sent');
  const firstError = result.outcomes.find((o) => o.outcome !== 'sent') as { error?: string } | undefined;
  let health: AttemptHealth | undefined = sent
    ? { ok: true }
    : { ok: false, error: firstError?.error ?? `${sender.label} gave no answer` };
  // Jobs with the same outcome are recorded together.
  const byOutcome = new Map<string, { outcome: Outcome; jobs: DestinationJobsTable[] }>();
  jobs.forEach((job, i) => {
    const outcome = result.outcomes[i] ?? { outcome: 'retry', error: `${sender.label} gave no answer for this event` };
    const key = JSON.stringify(outcome);
    const entry = byOutcome.get(key) ?? { outcome, jobs: [] };
    entry.jobs.push(job);
    byOutcome.set(key, entry);
  });
  for (const { outcome, jobs: same } of byOutcome.values()) {
    if (outcome.outcome === 'failed') {
      const fields = { destination: group.destination, ...sender.logFields?.(group.route), events: same.length };
      ctx.log.warn(
        { ...fields, traceId: result.traceId, error: outcome.error },
        sender.messages?.refused ?? `${sender.label} refused events`,
      );
    }
    await record(ctx, group, same, outcome, result.traceId, attempts, health);
    health = undefined; // counted once per request, with the first of its recordings
  }
  return undefined;
}

/** Refund jobs that may go now (refund-order.ts); the others are postponed or skipped here. */
async function orderRefunds(
  ctx: DeliveryContext,
  group: JobGroup,
  jobs: DestinationJobsTable[],
  label: string,
): Promise<DestinationJobsTable[]> {
  const { destination } = group;
  const now = Date.now();
  const ids = [...new Set(jobs.map((j) => j.conversion_id))];
  const siblings = await jobsOfConversions(ctx.database.read, destination, ids);
  const order = orderRefundJobs(jobs, siblings, label, now, ctx.backoffBaseMs);
  await recording(() =>
    ctx.database.write(async (trx) => {
      for (const p of order.postpone) await postponeJobs(trx, destination, [keyOf(p.job)], ctx.owner, p.until, now);
      for (const k of order.skip) await skipJob(trx, destination, keyOf(k.job), ctx.owner, k.message, now);
    }),
  );
  if (order.skip.length > 0) ctx.metrics.skipped(destination, group.livemode, order.skip.length);
  return order.send;
}

/**
 * Runs a recording, again after a moment when it fails (a deadlock victim, a dropped
 * connection): an acknowledgement not recorded would be sent again after the lease.
 */
async function recording<T>(write: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (attempt >= 3) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }
}

/**
 * Jobs recorded a transaction. A recording runs on the embedded database's writer thread, where
 * the conversions' own writes wait behind it: a batch of 100 outcomes (each moving its
 * conversion's `forwarding` and the report rollups) in one piece held them longest, with eight
 * destinations batching together (bench/forwarding.js).
 */
const RECORD_CHUNK = 25;

/**
 * Records one outcome for jobs, `attempts` the requests made that included them (0: none), in
 * transactions of up to RECORD_CHUNK jobs, letting requests' writes in between. A retry whose next
 * attempt would fall after a job's age limit fails it now, keeping the error.
 */
async function record(
  ctx: DeliveryContext,
  group: JobGroup,
  jobs: DestinationJobsTable[],
  outcome: Recorded,
  traceId: string | undefined,
  attempts: number,
  health?: AttemptHealth,
): Promise<void> {
  const { destination } = group;
  const changed: RecordedJob[] = [];
  const parts: DestinationJobsTable[][] = [];
  for (let i = 0; i < jobs.length; i += RECORD_CHUNK) parts.push(jobs.slice(i, i + RECORD_CHUNK));
  // The parts queue together (each its own transaction: the writer thread takes them between
  // the requests' writes); the destination's health is counted once per request, with the first.
  const recordings = await Promise.all(
    parts.map((part, i) => recordPart(ctx, group, part, outcome, traceId, attempts, i === 0 ? health : undefined)),
  );
  for (const recorded of recordings) {
    if (recorded.turn) logTurn(ctx.log, recorded.turn);
    ctx.metrics.recorded(destination, recorded.rows, outcome.outcome === 'retry');
    changed.push(...recorded.rows);
  }
  if (outcome.outcome === 'sent') {
    const sender = senderOf(destination);
    ctx.log.debug?.(
      {
        storeId: group.store_id,
        destination,
        ...sender?.logFields?.(group.route),
        mode: group.livemode === 1 ? 'live' : 'test',
        events: jobs.length,
        recorded: changed.length,
        attempts,
        traceId,
      },
      sender?.messages?.delivered ?? `${sender?.label ?? destination} batch delivered`,
    );
  }
  if (destination === 'meta') ctx.settled(jobs, outcome.outcome === 'sent');
}

/** One transaction of `record` (record-outcome.ts): the jobs' outcome, their conversions, the rollups, the destination's health. */
async function recordPart(
  ctx: DeliveryContext,
  group: JobGroup,
  jobs: DestinationJobsTable[],
  outcome: Recorded,
  traceId: string | undefined,
  attempts: number,
  health?: AttemptHealth,
): Promise<{ rows: RecordedJob[]; turn: HealthTurn | undefined }> {
  const now = Date.now();
  const { destination } = group;
  const keys = jobs.map(keyOf);
  const within = senderOf(destination)?.ageLimit ?? "within the platform's age limit";
  let marks: JobMark[];
  if (outcome.outcome === 'sent') {
    marks = [{ keys, status: 'sent', outcome: { now, attempts, traceId: traceId ?? null } }];
  } else if (outcome.outcome === 'failed') {
    const failed = { now, attempts, error: outcome.error, ...(traceId !== undefined && { traceId }) };
    marks = [{ keys, status: 'failed', outcome: failed }];
  } else {
    const error = outcome.outcome === 'retry' ? outcome.error : undefined;
    const total = Math.max(...jobs.map((j) => j.attempts)) + Math.max(attempts, 1);
    const next = outcome.outcome === 'retry' ? now + Math.max(ctx.backoff(total), outcome.retryAfterMs ?? 0) : now;
    const retried = {
      now,
      attempts,
      nextAttemptAt: next,
      ...(error !== undefined && { error }),
      ...(traceId !== undefined && { traceId }),
    };
    const givenUp = { now, attempts, error: `Not delivered ${within}; last error: ${error ?? 'none'}` };
    marks = [
      { keys: jobs.filter((j) => next <= Number(j.expires_at)).map(keyOf), status: 'pending', outcome: retried },
      { keys: jobs.filter((j) => next > Number(j.expires_at)).map(keyOf), status: 'failed', outcome: givenUp },
    ];
  }
  return recording(() =>
    ctx.database.runWrite(RECORD_OUTCOME, {
      destination,
      storeId: group.store_id,
      accountId: (jobs[0] as DestinationJobsTable).account_id,
      owner: ctx.owner,
      now,
      // A conversion job's outcome shows on its conversion: the reconciliation's counts move with it.
      conversionIds: group.kind === 'conversion' ? jobs.map((j) => j.conversion_id) : [],
      marks,
      ...(health && { health }),
    }),
  );
}
