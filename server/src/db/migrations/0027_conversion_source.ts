import type { Kysely } from 'kysely';

/**
 * Where a conversion's money came from (api.md §13 "Shopify checkout"; docs/api.md "Shopify
 * checkout pixel"): `conversions.source` is `pixel` while the conversion holds what the buyer's
 * browser reported (the Shopify checkout pixel's event arrived before the order webhook), and
 * `pixel_confirmed` once the shop's order webhook replaced it with the shop's own figures. Null
 * for every other conversion: the API's callers and the webhooks are the shop's own word.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('conversions').addColumn('source', 'text').execute();
}
