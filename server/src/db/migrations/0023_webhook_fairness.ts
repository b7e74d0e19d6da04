import { type Kysely, sql } from 'kysely';

/**
 * Fair webhook delivery (issue 37, docs/operations.md "Webhooks out"):
 * - `webhook_messages_endpoint_due` (endpoint, next attempt) over pending messages only: the
 *   claim asks, endpoint by endpoint, whether one has a due message and takes its oldest, at a
 *   cost that does not grow with the messages already delivered (they are left out).
 * - `webhook_messages_leased` (endpoint, next attempt) over leased messages only (`claimed_by`
 *   set: in flight, or a dead process's lease): an endpoint's requests in flight, counted
 *   against its limit, from a handful of rows.
 * - `webhook_timeouts`: an endpoint whose recent attempts timed out, as many in a row and for
 *   which URL (a new URL starts afresh); `probe_at`, when an attempt at the full timeout is due
 *   again. A row exists only while the endpoint keeps timing out: a 2xx deletes it, and so does
 *   deleting the endpoint (the foreign key).
 * Both partial indexes state their condition as a literal, as the queries that use them do
 * (a bound parameter would not prove the condition to SQLite's planner).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('webhook_messages_endpoint_due')
    .on('webhook_messages')
    .columns(['webhook_id', 'next_attempt_at'])
    .where(sql.ref('status'), '=', sql.lit('pending'))
    .execute();
  await db.schema
    .createIndex('webhook_messages_leased')
    .on('webhook_messages')
    .columns(['webhook_id', 'next_attempt_at'])
    .where(sql.ref('claimed_by'), 'is not', null)
    .execute();
  await db.schema
    .createTable('webhook_timeouts')
    .addColumn('webhook_id', 'text', (c) => c.primaryKey().references('webhooks.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('timeouts_in_row', 'integer', (c) => c.notNull())
    .addColumn('probe_at', 'bigint')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
}
