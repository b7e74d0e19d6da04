import type { Kysely } from 'kysely';

/**
 * Pinterest's, Snapchat's, Reddit's and LinkedIn's click ids (api.md §12 "More platforms"):
 * clicks gain `epik`, `ScCid`, `rdt_cid` and `li_fat_id`, named as the platforms name their URL
 * parameters (the columns are quoted identifiers on PostgreSQL, so `ScCid` keeps its case). Like
 * §8's ids, each is also a row of `click_ids` (the click's dedup key by kind): that table needs
 * nothing new. Conversions gain `scid` and `rdt_uuid`, Snapchat's and Reddit's browser ids (their
 * pixels' `_scid` and `_rdt_uuid` cookies), forwarded to those platforms for matching as `ttp` is to
 * TikTok. On PostgreSQL `alter table` on the partitioned table reaches every partition.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const column of ['epik', 'ScCid', 'rdt_cid', 'li_fat_id']) {
    await db.schema.alterTable('clicks').addColumn(column, 'text').execute();
  }
  for (const column of ['scid', 'rdt_uuid']) {
    await db.schema.alterTable('conversions').addColumn(column, 'text').execute();
  }
}
