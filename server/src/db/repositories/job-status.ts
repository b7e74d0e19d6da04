import type { Writer } from '../database.js';
import { engineOf } from '../engine.js';
import type { DestinationJobsTable } from '../schema.js';

/**
 * A conversion job's state shown on its conversion, in the job's own transaction, so the two
 * never disagree: Meta's in the conversion's `capi_*` columns (`capi`, `capiSent`,
 * `forwarding.meta`), every other destination's in its `forwarding` JSON. Refund jobs show on
 * their refund (refunds.ts), not here.
 */
export async function showOnConversions(db: Writer, jobs: DestinationJobsTable[]): Promise<void> {
  const conversions = jobs.filter((j) => j.kind === 'conversion');
  await showMeta(
    db,
    conversions.filter((j) => j.destination === 'meta'),
  );
  await showOthers(
    db,
    conversions.filter((j) => j.destination !== 'meta'),
  );
}

/** Meta's jobs: one update per distinct state (a batch's jobs mostly share theirs). */
async function showMeta(db: Writer, jobs: DestinationJobsTable[]): Promise<void> {
  const byState = new Map<string, { job: DestinationJobsTable; ids: string[] }>();
  for (const job of jobs) {
    const key = JSON.stringify([job.status, job.attempts, job.last_error, job.sent_at]);
    const entry = byState.get(key) ?? { job, ids: [] };
    entry.ids.push(job.conversion_id);
    byState.set(key, entry);
  }
  for (const { job, ids } of byState.values()) {
    if (job.status === 'skipped') continue; // a Meta conversion job is never skipped once queued
    await db
      .updateTable('conversions')
      .set({
        capi_status: job.status,
        capi_attempts: job.attempts,
        ...(job.last_error !== null && { capi_last_error: job.last_error }),
        ...(job.sent_at !== null && { capi_sent_at: Number(job.sent_at) }),
      })
      .where('id', 'in', ids.sort())
      .execute();
  }
}

async function showOthers(db: Writer, jobs: DestinationJobsTable[]): Promise<void> {
  // In id order: two transactions showing jobs of the same conversions lock their rows in one order (no deadlock).
  const ordered = jobs.sort((a, b) => (a.conversion_id < b.conversion_id ? -1 : a.conversion_id > b.conversion_id ? 1 : 0));
  for (const job of ordered) {
    // Locked while read on PostgreSQL: two destinations' recordings of one conversion must not
    // each write back the entry the other had not yet changed (a lost update).
    const row = await db
      .selectFrom('conversions')
      .select('forwarding')
      .where('id', '=', job.conversion_id)
      .$call(engineOf(db).locks.forUpdate)
      .executeTakeFirst();
    const forwarding = row?.forwarding ? (JSON.parse(row.forwarding) as Record<string, unknown>) : {};
    forwarding[job.destination] = {
      status: job.status,
      attempts: job.attempts,
      ...(job.last_error !== null && { lastError: job.last_error }),
      ...(job.sent_at !== null && { sentAt: new Date(Number(job.sent_at)).toISOString() }),
    };
    await db
      .updateTable('conversions')
      .set({ forwarding: JSON.stringify(forwarding) })
      .where('id', '=', job.conversion_id)
      .execute();
  }
}

/**
 * Puts a conversion back in Meta's queue (resend). An existing job keeps its attempt count and
 * last error — the history of what was tried stays visible.
 */
export async function requeueMetaJob(db: Writer, job: DestinationJobsTable): Promise<void> {
  await db
    .insertInto('destination_jobs')
    .values(job)
    .onConflict((oc) =>
      oc.columns(['conversion_id', 'destination', 'job_key']).doUpdateSet({
        route: job.route,
        payload: job.payload,
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
