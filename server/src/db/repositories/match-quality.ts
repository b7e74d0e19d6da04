import type { Reader } from '../database.js';

/**
 * The stored match quality (JSON, or null) of a store's conversions in one mode with event time in
 * [from, to): the raw computation the match-quality rollups (analytics/report-fold.ts) are checked against.
 */
export async function matchQualityInRange(
  db: Reader,
  storeId: string,
  livemode: number,
  range: { from: number; to: number },
): Promise<(string | null | undefined)[]> {
  const rows = await db
    .selectFrom('conversions')
    .select('match_quality')
    .where('store_id', '=', storeId)
    .where('livemode', '=', livemode)
    .where('event_time', '>=', range.from)
    .where('event_time', '<', range.to)
    .where('match_quality', 'is not', null)
    .execute();
  return rows.map((r) => r.match_quality);
}
