import { sql } from 'kysely';
import type { Reader, Writer } from '../database.js';
import { engineOf } from '../engine.js';
import { rowLimit } from '../row-limit.js';
import type { ConversionsTable, DestinationJobsTable, RefundsTable, StoreDestinationsTable } from '../schema.js';

/** A store's destinations other than Meta (whose settings stay in `stores`). */
export async function storeDestinations(db: Reader, storeId: string): Promise<StoreDestinationsTable[]> {
  return db.selectFrom('store_destinations').selectAll().where('store_id', '=', storeId).orderBy('kind').execute();
}

export async function findStoreDestination(
  db: Reader,
  storeId: string,
  kind: string,
): Promise<StoreDestinationsTable | undefined> {
  return db
    .selectFrom('store_destinations')
    .selectAll()
    .where('store_id', '=', storeId)
    .where('kind', '=', kind)
    .executeTakeFirst();
}

export async function putStoreDestination(db: Writer, row: StoreDestinationsTable): Promise<void> {
  await db
    .insertInto('store_destinations')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['store_id', 'kind']).doUpdateSet({ config: row.config, secrets: row.secrets, updated_at: row.updated_at }),
    )
    .execute();
}

export async function deleteStoreDestination(db: Writer, storeId: string, kind: string): Promise<boolean> {
  const result = await db
    .deleteFrom('store_destinations')
    .where('store_id', '=', storeId)
    .where('kind', '=', kind)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/**
 * Jobs forwarded together: same store (settings), destination, mode, kind (conversions, refunds)
 * and route (Meta: the pixel and test event code; '' for the others).
 */
export interface JobGroup {
  store_id: string;
  destination: string;
  livemode: number;
  kind: DestinationJobsTable['kind'];
  route: string;
}

export async function dueJobGroups(db: Reader, now: number, limit: number): Promise<JobGroup[]> {
  return db
    .selectFrom('destination_jobs')
    .select(['store_id', 'destination', 'livemode', 'kind', 'route'])
    .select((eb) => eb.fn.min('next_attempt_at').as('due'))
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .groupBy(['store_id', 'destination', 'livemode', 'kind', 'route'])
    .orderBy('due')
    .limit(rowLimit(limit))
    .execute();
}

/**
 * Claims up to `limit` due jobs of one group for `owner` (their next attempt moves to the lease
 * end), inside the caller's write transaction: the group's due jobs are read (on PostgreSQL
 * locked, rows another claim holds skipped, never waited for), then updated by their keys. Two
 * statements, not one `update … where conversion_id in (select …)`: with a backlog of other
 * destinations' jobs SQLite ran that update over every pending job of the due index (~0.2 s a
 * claim of 1,000 behind 27,000 pending) instead of the 1,000 primary keys; the read already
 * checked status and due time, and the transaction (SQLite's one writer, PostgreSQL's row locks)
 * keeps them true until the update.
 */
export async function claimJobs(
  db: Writer,
  group: JobGroup,
  claim: { owner: string; now: number; leaseUntil: number; limit: number },
): Promise<DestinationJobsTable[]> {
  const due = await db
    .selectFrom('destination_jobs')
    .select(['conversion_id', 'job_key'])
    .where('store_id', '=', group.store_id)
    .where('destination', '=', group.destination)
    .where('livemode', '=', group.livemode)
    .where('kind', '=', group.kind)
    .where('route', '=', group.route)
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', claim.now)
    .orderBy('next_attempt_at')
    .limit(rowLimit(claim.limit))
    .$call(engineOf(db).locks.claim)
    .execute();
  const rows = await leaseJobs(db, group.destination, due, claim.owner, claim.leaseUntil);
  return rows.sort((a, b) =>
    a.conversion_id < b.conversion_id ? -1 : a.conversion_id > b.conversion_id ? 1 : a.job_key < b.job_key ? -1 : 1,
  );
}

/**
 * Leases the jobs of these keys to `owner` until `until` and returns them (claimJobs' second
 * statement: the keys were just read as due in the same transaction). By primary key only.
 */
export async function leaseJobs(
  db: Writer,
  destination: string,
  keys: JobKey[],
  owner: string,
  until: number,
): Promise<DestinationJobsTable[]> {
  if (keys.length === 0) return [];
  const { ids, jobKeys } = keyFilter(keys);
  return db
    .updateTable('destination_jobs')
    .set({ claimed_by: owner, next_attempt_at: until })
    .where('destination', '=', destination)
    .where('conversion_id', 'in', ids)
    .where('job_key', 'in', jobKeys)
    .returningAll()
    .execute();
}

/**
 * A job's status where its keys select it: an expression, so that SQLite finds the jobs by their
 * primary key and checks the status on each, instead of walking the due index (status first)
 * over every pending job of the outbox — which its planner picks for `status = 'pending'` and
 * which made recording a batch's outcome cost as much as the backlog was long.
 */
const STATUS_BY_KEY = sql<string>`${sql.ref('status')} || ''`;

/** A job's key: its conversion and `job_key` ('' for the conversion itself, else its refund's row id). */
export type JobKey = Pick<DestinationJobsTable, 'conversion_id' | 'job_key'>;

/**
 * The jobs of these keys, exactly: a group holds either conversion jobs (job_key '') or refund
 * jobs (job_key unique: a refund's row id), so conversion ids and job keys filter each on its own.
 */
function keyFilter(keys: JobKey[]): { ids: string[]; jobKeys: string[] } {
  return { ids: [...new Set(keys.map((k) => k.conversion_id))], jobKeys: [...new Set(keys.map((k) => k.job_key))] };
}

/** The jobs of one destination for these conversions (a refund job's ordering: what it waits for). */
export async function jobsOfConversions(
  db: Reader,
  destination: string,
  conversionIds: string[],
): Promise<DestinationJobsTable[]> {
  if (conversionIds.length === 0) return [];
  return db
    .selectFrom('destination_jobs')
    .selectAll()
    .where('destination', '=', destination)
    .where('conversion_id', 'in', conversionIds)
    .execute();
}

/** Moves jobs still held by `owner` to a later attempt without counting one (a refund job waiting for an earlier job). */
export async function postponeJobs(db: Writer, destination: string, keys: JobKey[], owner: string, until: number, now: number) {
  if (keys.length === 0) return;
  const { ids, jobKeys } = keyFilter(keys);
  await db
    .updateTable('destination_jobs')
    .set({ claimed_by: null, next_attempt_at: until, updated_at: now })
    .where('destination', '=', destination)
    .where('conversion_id', 'in', ids)
    .where('job_key', 'in', jobKeys)
    .where(STATUS_BY_KEY, '=', 'pending')
    .where('claimed_by', '=', owner)
    .execute();
}

/** A job `owner` holds, never sent (no attempt counted): `skipped` with the reason. */
export async function skipJob(db: Writer, destination: string, key: JobKey, owner: string, reason: string, now: number) {
  await db
    .updateTable('destination_jobs')
    .set({ status: 'skipped', claimed_by: null, last_error: reason, updated_at: now, next_attempt_at: now })
    .where('destination', '=', destination)
    .where('conversion_id', '=', key.conversion_id)
    .where('job_key', '=', key.job_key)
    .where(STATUS_BY_KEY, '=', 'pending')
    .where('claimed_by', '=', owner)
    .execute();
}

/**
 * Extends the lease on jobs `owner` still holds (a split batch makes several requests in a row);
 * returns the keys it extended: a job missing from them is no longer this owner's to send.
 */
export async function renewLeases(
  db: Writer,
  destination: string,
  keys: JobKey[],
  owner: string,
  until: number,
): Promise<JobKey[]> {
  if (keys.length === 0) return [];
  const { ids, jobKeys } = keyFilter(keys);
  return db
    .updateTable('destination_jobs')
    .set({ next_attempt_at: until })
    .where('destination', '=', destination)
    .where('conversion_id', 'in', ids)
    .where('job_key', 'in', jobKeys)
    .where(STATUS_BY_KEY, '=', 'pending')
    .where('claimed_by', '=', owner)
    .returning(['conversion_id', 'job_key'])
    .execute();
}

/** Queues jobs (a refund's), in the caller's transaction. */
export async function insertJobs(db: Writer, jobs: DestinationJobsTable[]): Promise<void> {
  if (jobs.length > 0) await db.insertInto('destination_jobs').values(jobs).execute();
}

/** The jobs of one refund (job_key = its row id), by destination. */
export async function jobsOfRefund(db: Reader, conversionId: string, refundRowId: string): Promise<DestinationJobsTable[]> {
  return db
    .selectFrom('destination_jobs')
    .selectAll()
    .where('conversion_id', '=', conversionId)
    .where('job_key', '=', refundRowId)
    .orderBy('destination')
    .execute();
}

export interface JobOutcome {
  now: number;
  /** Requests made that included these jobs (more than one when a batch was split; 0: none). Default 1. */
  attempts?: number;
  error?: string;
  traceId?: string | null;
  nextAttemptAt?: number;
}

/**
 * Moves jobs of one destination to `status` and returns them as they are now. `sent` is
 * recorded whoever holds the lease (an acknowledgement is the truth) but never twice; `pending`
 * and `failed` only while `owner` still holds the job.
 */
export async function markJobs(
  db: Writer,
  destination: string,
  keys: JobKey[],
  owner: string,
  status: 'sent' | 'pending' | 'failed' | 'skipped',
  outcome: JobOutcome,
): Promise<MarkedJob[]> {
  if (keys.length === 0) return [];
  const { ids, jobKeys } = keyFilter(keys);
  let query = db
    .updateTable('destination_jobs')
    .set((eb) => ({
      status,
      attempts: eb('attempts', '+', outcome.attempts ?? 1),
      claimed_by: null,
      updated_at: outcome.now,
      next_attempt_at: outcome.nextAttemptAt ?? outcome.now,
      ...(status === 'sent' && { sent_at: outcome.now }),
      ...(outcome.error !== undefined && { last_error: outcome.error }),
      ...(outcome.traceId !== undefined && { trace_id: outcome.traceId }),
    }))
    .where('destination', '=', destination)
    .where('conversion_id', 'in', ids)
    .where('job_key', 'in', jobKeys);
  query =
    status === 'sent'
      ? query.where('status', '!=', 'sent')
      : query.where(STATUS_BY_KEY, '=', 'pending').where('claimed_by', '=', owner);
  return query.returning(MARKED_COLUMNS).execute();
}

/** A job as `markJobs` returns it: every column but its payload (the recording needs only its state). */
export type MarkedJob = Omit<DestinationJobsTable, 'payload'>;
const MARKED_COLUMNS = [
  'conversion_id',
  'destination',
  'job_key',
  'kind',
  'account_id',
  'store_id',
  'livemode',
  'route',
  'status',
  'attempts',
  'next_attempt_at',
  'expires_at',
  'claimed_by',
  'last_error',
  'trace_id',
  'created_at',
  'updated_at',
  'sent_at',
] as const satisfies ReadonlyArray<keyof MarkedJob>;

export async function nextJobDueAt(db: Reader): Promise<number | undefined> {
  const row = await db
    .selectFrom('destination_jobs')
    .select((eb) => eb.fn.min('next_attempt_at').as('next'))
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return row?.next === null || row?.next === undefined ? undefined : Number(row.next);
}

/** Pending jobs per destination and mode (the backlog, for /metrics; walks the due index only). */
export async function countJobs(db: Reader): Promise<Array<{ destination: string; livemode: number; count: number }>> {
  const rows = await db
    .selectFrom('destination_jobs')
    .select(['destination', 'livemode'])
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('status', '=', 'pending')
    .groupBy(['destination', 'livemode'])
    .execute();
  return rows.map((r) => ({ ...r, count: Number(r.count) }));
}

/** A conversion by id and time (its partition on PostgreSQL). */
export async function conversionAt(db: Reader, id: string, eventTime: number): Promise<ConversionsTable | undefined> {
  return db.selectFrom('conversions').selectAll().where('id', '=', id).where('event_time', '=', eventTime).executeTakeFirst();
}

/** A refund by its API key (store, mode, refundId). */
export async function refundByKey(
  db: Reader,
  storeId: string,
  livemode: number,
  refundId: string,
): Promise<RefundsTable | undefined> {
  return db
    .selectFrom('refunds')
    .selectAll()
    .where('store_id', '=', storeId)
    .where('livemode', '=', livemode)
    .where('refund_id', '=', refundId)
    .executeTakeFirst();
}
