import { type Kysely, sql } from 'kysely';

/**
 * The outbox's indexes hold pending jobs only (partial indexes `where status = 'pending'`):
 * - `destination_jobs_due` (next attempt): the dispatcher's next due time and due groups;
 * - `destination_jobs_store_due` (store, next attempt): a group's claim;
 * - `destination_jobs_store_pending` (store, destination, created): a destination's oldest
 *   pending job (health's stale check) and tracking health's backlog.
 * Every query they serve asks for pending jobs, and a job is pending a moment in its life but
 * kept for good once sent (its trace id, the reconciliation): with `status` in the key, each of
 * the eight jobs of a conversion left three index entries behind and each recording moved them
 * (a delete and an insert in each index). Now a recording only deletes them, the indexes stay
 * the size of the backlog, and the sent history costs them nothing.
 */
const PENDING = [
  ['destination_jobs_due', 'next_attempt_at'],
  ['destination_jobs_store_due', 'store_id, next_attempt_at'],
  ['destination_jobs_store_pending', 'store_id, destination, created_at'],
] as const;

const EVERY = [
  ['destination_jobs_due', 'status, next_attempt_at'],
  ['destination_jobs_store_due', 'store_id, status, next_attempt_at'],
  ['destination_jobs_store_pending', 'store_id, destination, status, created_at'],
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [name, columns] of PENDING) {
    await sql`drop index if exists ${sql.ref(name)}`.execute(db);
    await sql`create index ${sql.ref(name)} on destination_jobs (${sql.raw(columns)}) where status = 'pending'`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const [name, columns] of EVERY) {
    await sql`drop index if exists ${sql.ref(name)}`.execute(db);
    await sql`create index ${sql.ref(name)} on destination_jobs (${sql.raw(columns)})`.execute(db);
  }
}
