import { sql } from 'kysely';
import type { Writer } from '../database.js';
import { engineOf } from '../engine.js';
import type { DestinationJobsTable } from '../schema.js';

/** What a conversion shows of its job. */
type JobState = Pick<
  DestinationJobsTable,
  'conversion_id' | 'destination' | 'kind' | 'status' | 'attempts' | 'last_error' | 'sent_at'
>;

/**
 * A conversion job's state shown on its conversion, in the job's own transaction, so the two
 * never disagree: Meta's in the conversion's `capi_*` columns (`capi`, `capiSent`,
 * `forwarding.meta`), every other destination's in its `forwarding` JSON. Refund jobs show on
 * their refund (refunds.ts), not here.
 */
export async function showOnConversions(db: Writer, jobs: JobState[]): Promise<void> {
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
async function showMeta(db: Writer, jobs: JobState[]): Promise<void> {
  const byState = new Map<string, { job: JobState; ids: string[] }>();
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

/**
 * The other destinations' jobs: each conversion's `forwarding.<destination>` entry set in place
 * (json_set / jsonb_set), one statement per destination and distinct entry — a batch's jobs
 * mostly share theirs — instead of a read and a write per conversion. On PostgreSQL the rows are
 * locked first, in id order: two recordings of the same conversions (two destinations) lock them
 * in one order (no deadlock), and each update reads the entry it keeps from the locked row (no
 * lost update).
 */
async function showOthers(db: Writer, jobs: JobState[]): Promise<void> {
  if (jobs.length === 0) return;
  const engine = engineOf(db);
  const ids = [...new Set(jobs.map((j) => j.conversion_id))].sort();
  await engine.locks.lockRows(db.selectFrom('conversions').select('id').where('id', 'in', ids).orderBy('id'));
  const byEntry = new Map<string, { destination: string; entry: string; ids: string[] }>();
  for (const job of jobs) {
    const entry = JSON.stringify({
      status: job.status,
      attempts: job.attempts,
      ...(job.last_error !== null && { lastError: job.last_error }),
      ...(job.sent_at !== null && { sentAt: new Date(Number(job.sent_at)).toISOString() }),
    });
    const key = `${job.destination}\n${entry}`;
    const same = byEntry.get(key) ?? { destination: job.destination, entry, ids: [] };
    same.ids.push(job.conversion_id);
    byEntry.set(key, same);
  }
  for (const { destination, entry, ids } of byEntry.values()) {
    const forwarding = engine.json.set(sql.ref('forwarding'), destination, entry);
    await db.updateTable('conversions').set({ forwarding }).where('id', 'in', ids.sort()).execute();
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
