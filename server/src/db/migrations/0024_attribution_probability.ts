import { type Kysely, sql } from 'kysely';
import { engineOf } from '../engine.js';
import { backfillIpNetworks, rebuildAmbiguityRows } from '../repositories/attribution-keys.js';
import type { DB } from '../schema.js';

/** How far back the counts are rebuilt: the longest attribution window (90 days) and a day. */
const REBUILD_DAYS = 91;

/**
 * Attribution as a probability (api.md §13):
 * - clicks gain `visitor_id` (the tag's `_wt_vid`) and `ip_network` (an IPv6 click's /64);
 *   conversions gain `visitor_id` and `attribution_evidence` (the candidates and their evidence
 *   as scored, for the explanation).
 * - Candidates from the same browser are found by `visitor_id`, `fbp` and `ttp`, an IPv6 one by
 *   its /64: an index each, partial (only clicks that have the value pay for it).
 * - `attribution_keys`: the ambiguity counts' rows (ambiguity-keys.ts), keyed (day, key,
 *   browser): a conversion counts a key's distinct browsers with one seek per day of its window,
 *   never by reading the window's clicks; retention deletes whole days from the front.
 * - The rows of the last 91 days' clicks and the /64 of stored IPv6 clicks are filled in.
 * - PostgreSQL: the evidence lookup becomes a function with these lookups and the counts
 *   (db/postgres/attribution-evidence.ts).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const column of ['visitor_id', 'ip_network']) await db.schema.alterTable('clicks').addColumn(column, 'text').execute();
  for (const column of ['visitor_id', 'attribution_evidence']) {
    await db.schema.alterTable('conversions').addColumn(column, 'text').execute();
  }
  for (const column of ['visitor_id', 'fbp', 'ttp', 'ip_network']) {
    await db.schema
      .createIndex(`clicks_${column}`)
      .on('clicks')
      .columns(['store_id', 'livemode', column, 'click_time'])
      .where(sql.ref(column), 'is not', null)
      .execute();
  }
  await engineOf(db)
    .migrations.clusteredOnKey(
      db.schema
        .createTable('attribution_keys')
        .addColumn('day', 'integer', (c) => c.notNull())
        .addColumn('k', 'bigint', (c) => c.notNull())
        .addColumn('browser', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('attribution_keys_pk', ['day', 'k', 'browser']),
    )
    .execute();
  const typed = db as Kysely<DB>;
  await backfillIpNetworks(typed);
  await rebuildAmbiguityRows(typed, Date.now() - REBUILD_DAYS * 86_400_000);
  await engineOf(db).migrations.attributionEvidenceFunction(db);
}
