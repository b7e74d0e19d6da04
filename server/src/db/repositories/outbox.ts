import type { Reader, Writer } from '../database.js';
import { engineOf } from '../engine.js';
import { rowLimit } from '../row-limit.js';
import type { CapiOutboxTable } from '../schema.js';

/**
 * The Conversions API outbox. Every change of a job's state also updates the conversion's
 * `capi_*` columns (what the API shows) in the same statement batch, so the two never disagree.
 */

/**
 * An id list for `in (…)`, padded to a power of two by repeating its last id (which `in`
 * ignores). Batches come in every size up to 1000; padded, their statements are a dozen distinct
 * SQL texts, so they stay in the prepared-statement cache instead of flushing it.
 */
function padded(ids: string[]): string[] {
  const size = 2 ** Math.ceil(Math.log2(Math.max(ids.length, 1)));
  return size === ids.length ? ids : ids.concat(new Array<string>(size - ids.length).fill(ids[ids.length - 1] as string));
}

/** Jobs forwarded together share one request: same store (token), pixel, mode and test_event_code. */
export interface OutboxGroup {
  store_id: string;
  pixel_id: string;
  livemode: number;
  test_event_code: string | null;
}

export async function insertOutboxJob(db: Writer, job: CapiOutboxTable): Promise<void> {
  await db.insertInto('capi_outbox').values(job).execute();
}

/**
 * Puts a conversion back in the queue (resend). An existing job keeps its attempt count and
 * last error — the history of what was tried stays visible.
 */
export async function requeueOutboxJob(db: Writer, job: CapiOutboxTable): Promise<void> {
  await db
    .insertInto('capi_outbox')
    .values(job)
    .onConflict((oc) =>
      oc.column('conversion_id').doUpdateSet({
        pixel_id: job.pixel_id,
        test_event_code: job.test_event_code,
        event: job.event,
        status: 'pending',
        next_attempt_at: job.next_attempt_at,
        expires_at: job.expires_at,
        claimed_by: null,
        updated_at: job.updated_at,
      }),
    )
    .execute();
  // A skipped conversion's capi_last_error is its skip reason, not a Meta error: it no longer applies.
  await db
    .updateTable('conversions')
    .set({ capi_last_error: null })
    .where('id', '=', job.conversion_id)
    .where('capi_status', '=', 'skipped')
    .execute();
  await db.updateTable('conversions').set({ capi_status: 'pending' }).where('id', '=', job.conversion_id).execute();
}

/** Groups that have due jobs, the longest-waiting first. */
export async function dueGroups(db: Reader, now: number, limit: number): Promise<OutboxGroup[]> {
  return db
    .selectFrom('capi_outbox')
    .select(['store_id', 'pixel_id', 'livemode', 'test_event_code'])
    .select((eb) => eb.fn.min('next_attempt_at').as('due'))
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .groupBy(['store_id', 'pixel_id', 'livemode', 'test_event_code'])
    .orderBy('due')
    .limit(rowLimit(limit))
    .execute();
}

/**
 * Claims up to `limit` due jobs of one group for `owner`: their next attempt moves to the lease
 * end, so no other dispatcher takes them meanwhile, and a dispatcher that dies holding them
 * only delays them. One statement: the choice and the claim cannot be separated.
 */
export async function claimGroup(
  db: Writer,
  group: OutboxGroup,
  claim: { owner: string; now: number; leaseUntil: number; limit: number },
): Promise<CapiOutboxTable[]> {
  const rows = await db
    .updateTable('capi_outbox')
    .set({ claimed_by: claim.owner, next_attempt_at: claim.leaseUntil })
    .where('conversion_id', 'in', (eb) =>
      eb
        .selectFrom('capi_outbox')
        .select('conversion_id')
        .where('store_id', '=', group.store_id)
        .where('status', '=', 'pending')
        .where('next_attempt_at', '<=', claim.now)
        .where('pixel_id', '=', group.pixel_id)
        .where('livemode', '=', group.livemode)
        .where((w) =>
          group.test_event_code === null ? w('test_event_code', 'is', null) : w('test_event_code', '=', group.test_event_code),
        )
        .orderBy('next_attempt_at')
        .limit(rowLimit(claim.limit))
        // Several instances claim at once: each takes rows no other claim holds, and never waits.
        .$call(engineOf(db).locks.claim),
    )
    .returningAll()
    .execute();
  return rows.sort((a, b) => (a.conversion_id < b.conversion_id ? -1 : 1));
}

interface Outcome {
  now: number;
  /** Requests this attempt made that included these jobs (more than one when a batch was split). */
  attempts: number;
  error?: string | null;
  fbtraceId?: string | null;
}

/** Meta acknowledged these events. Recorded whoever holds the lease: an acknowledgement is the truth. */
export async function markSent(db: Writer, ids: string[], outcome: Outcome): Promise<string[]> {
  if (ids.length === 0) return [];
  const changed = await db
    .updateTable('capi_outbox')
    .set((eb) => ({
      status: 'sent',
      attempts: eb('attempts', '+', outcome.attempts),
      claimed_by: null,
      fbtrace_id: outcome.fbtraceId ?? null,
      sent_at: outcome.now,
      updated_at: outcome.now,
    }))
    .where('conversion_id', 'in', padded(ids))
    .where('status', '!=', 'sent')
    .returning('conversion_id')
    .execute();
  const changedIds = changed.map((r) => r.conversion_id);
  if (changedIds.length > 0) {
    await db
      .updateTable('conversions')
      .set((eb) => ({
        capi_status: 'sent',
        capi_attempts: eb('capi_attempts', '+', outcome.attempts),
        capi_sent_at: outcome.now,
      }))
      .where('id', 'in', padded(changedIds))
      .execute();
  }
  return changedIds;
}

/** A failed attempt to try again at `nextAttemptAt` (only jobs `owner` still holds). */
export async function markRetry(
  db: Writer,
  ids: string[],
  owner: string,
  outcome: Outcome & { nextAttemptAt: number },
): Promise<string[]> {
  return markUnsent(db, ids, owner, 'pending', outcome);
}

/** Delivery given up: Meta refused the event, or it could not be delivered within 7 days. */
export async function markFailed(db: Writer, ids: string[], owner: string, outcome: Outcome): Promise<string[]> {
  return markUnsent(db, ids, owner, 'failed', { ...outcome, nextAttemptAt: outcome.now });
}

async function markUnsent(
  db: Writer,
  ids: string[],
  owner: string,
  status: 'pending' | 'failed',
  outcome: Outcome & { nextAttemptAt: number },
): Promise<string[]> {
  if (ids.length === 0) return [];
  const changed = await db
    .updateTable('capi_outbox')
    .set((eb) => ({
      status,
      attempts: eb('attempts', '+', outcome.attempts),
      next_attempt_at: outcome.nextAttemptAt,
      claimed_by: null,
      updated_at: outcome.now,
      // A batch rejection traced to other events leaves no error on the innocent ones.
      ...(outcome.error !== undefined && { last_error: outcome.error }),
      ...(outcome.fbtraceId !== undefined && { fbtrace_id: outcome.fbtraceId }),
    }))
    .where('conversion_id', 'in', padded(ids))
    .where('status', '=', 'pending')
    .where('claimed_by', '=', owner)
    .returning('conversion_id')
    .execute();
  const changedIds = changed.map((r) => r.conversion_id);
  if (changedIds.length > 0) {
    await db
      .updateTable('conversions')
      .set((eb) => ({
        capi_status: status,
        capi_attempts: eb('capi_attempts', '+', outcome.attempts),
        ...(outcome.error !== undefined && { capi_last_error: outcome.error }),
      }))
      .where('id', 'in', padded(changedIds))
      .execute();
  }
  return changedIds;
}

/** Extends the lease on jobs `owner` still holds (a split batch makes several requests in a row). */
export async function renewLease(db: Writer, ids: string[], owner: string, until: number): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('capi_outbox')
    .set({ next_attempt_at: until })
    .where('conversion_id', 'in', padded(ids))
    .where('status', '=', 'pending')
    .where('claimed_by', '=', owner)
    .execute();
}

/** When the next pending job falls due (a lease end counts: the job is retried then). */
export async function nextDueAt(db: Reader): Promise<number | undefined> {
  const row = await db
    .selectFrom('capi_outbox')
    .select((eb) => eb.fn.min('next_attempt_at').as('next'))
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return row?.next === null || row?.next === undefined ? undefined : Number(row.next);
}

/** Jobs not yet acknowledged nor given up, per mode. */
export async function countBacklog(db: Reader): Promise<Array<{ livemode: number; count: number }>> {
  const rows = await db
    .selectFrom('capi_outbox')
    .select('livemode')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('status', '=', 'pending')
    .groupBy('livemode')
    .execute();
  return rows.map((r) => ({ livemode: r.livemode, count: Number(r.count) }));
}
