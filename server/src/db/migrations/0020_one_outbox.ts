import { type Kysely, sql } from 'kysely';

/**
 * One outbox for every destination (issue 24): Meta's jobs move from `capi_outbox` into
 * `destination_jobs` (destination 'meta'), and `capi_outbox` is dropped.
 * - `destination_jobs.route`: what the jobs of one request must share beyond store, destination,
 *   mode and kind. '' for every destination but Meta; Meta's is `<pixelId>:<testEventCode>` (the
 *   pixel and test event code the job was queued for; a pixel id is digits only, so the first
 *   colon separates them; '' after it: no test event code).
 * - Every `capi_outbox` row moves, whatever its state (pending ones are delivered by the shared
 *   dispatcher; sent and failed ones keep their fbtrace_id for reconciliation and a refund's
 *   `forwarding.meta`): a conversion's job keeps its conversion id with job_key ''; a refund's
 *   (keyed by the refund's row id since 0019) becomes its conversion's job with job_key = the
 *   refund's row id and kind 'refund', as the other destinations' refund jobs are. The payload
 *   is the Meta event, `trace_id` the fbtrace_id. A job claimed by a dispatcher of the old code
 *   keeps its lease time and is taken again after it.
 * - Index `destination_jobs_store_due` (store, status, next attempt): a group's claim reads one
 *   store's due jobs (as `capi_outbox_store_due` did for Meta's).
 * Plain tables on both engines (neither is partitioned), so one statement each moves the rows.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table destination_jobs add column route text not null default ''`.execute(db);
  // A group's claim (claimJobs) picks one store's due jobs, as capi_outbox_store_due served Meta's.
  await db.schema
    .createIndex('destination_jobs_store_due')
    .on('destination_jobs')
    .columns(['store_id', 'status', 'next_attempt_at'])
    .execute();
  const common = sql.raw(`o.account_id, o.store_id, o.livemode, o.pixel_id || ':' || coalesce(o.test_event_code, ''),
    o.event, o.status, o.attempts, o.next_attempt_at, o.expires_at, o.claimed_by, o.last_error, o.fbtrace_id,
    o.created_at, o.updated_at, o.sent_at`);
  const columns = sql.raw(`conversion_id, destination, job_key, kind, account_id, store_id, livemode, route, payload,
    status, attempts, next_attempt_at, expires_at, claimed_by, last_error, trace_id, created_at, updated_at, sent_at`);
  await sql`insert into destination_jobs (${columns})
    select o.conversion_id, 'meta', '', 'conversion', ${common} from capi_outbox o
    where not exists (select 1 from refunds r where r.id = o.conversion_id)`.execute(db);
  await sql`insert into destination_jobs (${columns})
    select r.conversion_id, 'meta', r.id, 'refund', ${common} from capi_outbox o join refunds r on r.id = o.conversion_id`.execute(
    db,
  );
  await db.schema.dropTable('capi_outbox').execute();
}
