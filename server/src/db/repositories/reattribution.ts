import type { Reader, Writer } from '../database.js';
import type { ConversionsTable, DestinationJobsTable } from '../schema.js';

/**
 * The writes of a re-attribution (tracking/reattribution.ts) beyond the attribution columns and
 * touchpoints (conversions.ts `replaceAttribution`): a conversion's destination jobs, and the
 * columns that follow its attributed click (match quality, `forwarding`, the clues it came with).
 */

/** The conversion's own jobs (not its refunds'), one per destination. */
export async function conversionJobsOf(db: Reader, conversionId: string): Promise<DestinationJobsTable[]> {
  return db
    .selectFrom('destination_jobs')
    .selectAll()
    .where('conversion_id', '=', conversionId)
    .where('kind', '=', 'conversion')
    .where('job_key', '=', '')
    .execute();
}

/**
 * A job still pending gets the payload planned with the new attribution. Only while pending: a
 * job a dispatcher marked sent (or failed) meanwhile keeps what it sent. Returns whether it was.
 */
export async function replanPendingJob(
  db: Writer,
  job: Pick<DestinationJobsTable, 'conversion_id' | 'destination'>,
  plan: { payload: string; expiresAt: number },
  now: number,
): Promise<boolean> {
  const rows = await db
    .updateTable('destination_jobs')
    .set({ payload: plan.payload, expires_at: plan.expiresAt, updated_at: now })
    .where('conversion_id', '=', job.conversion_id)
    .where('destination', '=', job.destination)
    .where('job_key', '=', '')
    .where('status', '=', 'pending')
    .returning('conversion_id')
    .execute();
  return rows.length > 0;
}

/**
 * A job still pending that the new attribution no longer sends (a Google job whose gclid was the
 * old click's): skipped with the reason, never sent. Returns the job as it now is, if it was pending.
 */
export async function skipPendingJob(
  db: Writer,
  job: Pick<DestinationJobsTable, 'conversion_id' | 'destination'>,
  message: string,
  now: number,
): Promise<DestinationJobsTable | undefined> {
  return db
    .updateTable('destination_jobs')
    .set({ status: 'skipped', claimed_by: null, last_error: message, updated_at: now, next_attempt_at: now })
    .where('conversion_id', '=', job.conversion_id)
    .where('destination', '=', job.destination)
    .where('job_key', '=', '')
    .where('status', '=', 'pending')
    .returningAll()
    .executeTakeFirst();
}

/**
 * A destination the conversion now goes to: its job, new, or one skipped before put back as
 * pending with the new payload. A job sent, failed or pending is left alone. Returns whether written.
 */
export async function enqueueReattributedJob(db: Writer, job: DestinationJobsTable): Promise<boolean> {
  const rows = await db
    .insertInto('destination_jobs')
    .values(job)
    .onConflict((oc) =>
      oc
        .columns(['conversion_id', 'destination', 'job_key'])
        .doUpdateSet({
          payload: job.payload,
          status: 'pending',
          next_attempt_at: job.next_attempt_at,
          expires_at: job.expires_at,
          claimed_by: null,
          last_error: null,
          updated_at: job.updated_at,
        })
        .where('destination_jobs.status', '=', 'skipped'),
    )
    .returning('conversion_id')
    .execute();
  return rows.length > 0;
}

/** The columns a re-attribution changes besides the attribution's own. */
export type ReattributedColumns = Partial<
  Pick<
    ConversionsTable,
    | 'match_quality'
    | 'forwarding'
    | 'ref_click_id'
    | 'ref_fbclid'
    | 'ref_fbc'
    | 'ref_ids'
    | 'fbp'
    | 'ttp'
    | 'visitor_id'
    | 'ip_address'
    | 'user_agent'
    | 'fingerprint'
  >
>;

export async function updateReattributedColumns(db: Writer, conversionId: string, columns: ReattributedColumns): Promise<void> {
  if (Object.keys(columns).length === 0) return;
  await db.updateTable('conversions').set(columns).where('id', '=', conversionId).execute();
}

/**
 * One batch of a store's conversions from `since` (event time), in (event time, id) order after
 * `after` (the last of the previous batch): `waytrack attribution recompute` walks them so.
 */
export async function conversionsSince(
  db: Reader,
  query: { storeId: string; since: number; livemode?: number; after?: { eventTime: number; id: string }; limit: number },
): Promise<ConversionsTable[]> {
  let select = db
    .selectFrom('conversions')
    .selectAll()
    .where('store_id', '=', query.storeId)
    .where('event_time', '>=', query.since);
  if (query.livemode !== undefined) select = select.where('livemode', '=', query.livemode);
  const after = query.after;
  if (after) {
    select = select.where((eb) =>
      eb.or([eb('event_time', '>', after.eventTime), eb.and([eb('event_time', '=', after.eventTime), eb('id', '>', after.id)])]),
    );
  }
  return select.orderBy('event_time').orderBy('id').limit(query.limit).execute();
}
