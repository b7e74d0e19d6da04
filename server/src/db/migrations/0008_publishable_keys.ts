import type { Kysely } from 'kysely';

/**
 * Publishable keys (api.md §6): keys made to sit in a web page, for the browser tag.
 * - `kind`: `secret` (every key so far, the default) or `publishable`. Stored, not only read
 *   from the key's prefix, so that listings can tell them apart without the key itself.
 * - `store_id`: the one store a publishable key records clicks for (null for secret keys).
 * - `origins`: JSON array of extra origins its requests are accepted from, besides the store's
 *   domain and its subdomains (null for secret keys).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('api_keys')
    .addColumn('kind', 'text', (c) => c.notNull().defaultTo('secret'))
    .execute();
  await db.schema
    .alterTable('api_keys')
    .addColumn('store_id', 'text', (c) => c.references('stores.id'))
    .execute();
  await db.schema.alterTable('api_keys').addColumn('origins', 'text').execute();
}
