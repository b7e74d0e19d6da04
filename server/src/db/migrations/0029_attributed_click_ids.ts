import type { Kysely } from 'kysely';

/**
 * The credited click's ids by kind (api.md §12 "attributedTo names the click's platform"):
 * `conversions.attributed_click_ids`, JSON `{fbclid?, gclid?, gbraid?, wbraid?, ttclid?,
 * msclkid?}`, written with the attribution result (click-channel.ts). Null when not
 * attributed; a row attributed before this migration keeps null and is read from
 * `attributed_fbclid` (its click's dedup key: one id).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('conversions').addColumn('attributed_click_ids', 'text').execute();
}
