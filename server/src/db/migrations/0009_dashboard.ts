import type { Kysely } from 'kysely';

/**
 * The dashboard (api.md §5):
 * - `dashboard_sessions`: signed-in owners. Sessions live in the database, not in a process,
 *   so that every instance sharing it knows them and a sign-out ends them everywhere. The row
 *   is keyed by the SHA-256 of the cookie's token: reading the table does not let anyone sign in.
 * - `api_keys.last_used_at`: when a key last authenticated a request (updated at most once a
 *   minute per key), for the API keys page.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('dashboard_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
    .execute();
  // Ending every session of an account (a new password) and sweeping idle ones walk these.
  await db.schema.createIndex('dashboard_sessions_account').on('dashboard_sessions').column('account_id').execute();
  await db.schema.createIndex('dashboard_sessions_last_seen').on('dashboard_sessions').column('last_seen_at').execute();

  await db.schema.alterTable('api_keys').addColumn('last_used_at', 'bigint').execute();
}
