import type { Kysely } from 'kysely';

/**
 * Consent as data (api.md §10; docs/consent.md):
 * - clicks and conversions gain `consent` (the resolved consent as JSON; null = all granted, as
 *   every event recorded before this migration is read) and `limited_data_use` (`true` or JSON
 *   `{country, state}`; null = not asked for);
 * - stores gain `default_consent` (JSON of the consent fields the store sets for events that
 *   leave them out; null = all granted).
 * Nullable columns without defaults: adding them rewrites nothing, on either engine (on
 * PostgreSQL `alter table` on the partitioned tables reaches every partition).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of ['clicks', 'conversions']) {
    await db.schema.alterTable(table).addColumn('consent', 'text').execute();
    await db.schema.alterTable(table).addColumn('limited_data_use', 'text').execute();
  }
  await db.schema.alterTable('stores').addColumn('default_consent', 'text').execute();
}
