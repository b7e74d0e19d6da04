import type { CustomerData } from '../capi/pii.js';
import type { Reader } from '../db/database.js';
import { findClick } from '../db/repositories/clicks.js';
import type { ConversionsTable } from '../db/schema.js';
import { type MatchDestination, type MatchOptions, matchQualityOf } from './match-quality.js';

/**
 * Sets the `match_quality` column of a conversion about to be recorded: one entry per
 * destination that receives it (Meta when it has an entry in `capi`, the others when they have
 * one in `forwarding`), from the raw customer data of the request (never stored). Left unset
 * when no destination receives it.
 */
export async function setMatchQuality(
  db: Reader,
  row: ConversionsTable,
  destinations: { meta: boolean; others: string[] },
  customerData: CustomerData | undefined,
  options: MatchOptions = {},
): Promise<void> {
  const kinds: MatchDestination[] = [
    ...(destinations.meta ? (['meta'] as const) : []),
    ...destinations.others.filter((k): k is MatchDestination => k === 'google_ads' || k === 'tiktok'),
  ];
  if (kinds.length === 0) return;
  const click = row.attributed_click_id ? await findClick(db, row.account_id, row.livemode, row.attributed_click_id) : undefined;
  row.match_quality = JSON.stringify(matchQualityOf(kinds, row, click, customerData, options));
}
