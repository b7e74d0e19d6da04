import { consentView } from '../consent/consent.js';
import type { CustomerData } from '../customer-data.js';
import type { Reader } from '../db/database.js';
import { type AttributedClick, attributedClickOf } from '../db/repositories/clicks.js';
import type { ConversionsTable } from '../db/schema.js';
import { MATCH_WEIGHTS, type MatchDestination, type MatchKey, type MatchOptions, matchQualityOf } from './match-quality.js';

const USER_DATA_KEYS: ReadonlySet<MatchKey> = new Set(['email', 'phone', 'ipUserAgent', 'fbp', 'ttp', 'scid', 'address']);

/**
 * Sets the `match_quality` column of a conversion about to be recorded: one entry per
 * destination that receives it (Meta when it has an entry in `capi`, the others when they have
 * one in `forwarding`), from the raw customer data of the request (never stored). Left unset
 * when no destination receives it.
 *
 * The score is of what will be sent (api.md §10): the conversion and its click as the consent
 * rules leave them (consent/consent.ts `consentView`, the very view every destination's payload
 * is built from). A key the request had but its consent withholds is named in a warning
 * (`user_data_denied`, `ad_storage_denied`) in place of advice to send it.
 */
export async function setMatchQuality(
  db: Reader,
  row: ConversionsTable,
  destinations: { meta: boolean; others: string[] },
  customerData: CustomerData | undefined,
  options: MatchOptions = {},
  attributedClick: AttributedClick = attributedClickOf(db, row),
): Promise<void> {
  const kinds: MatchDestination[] = [
    ...(destinations.meta ? (['meta'] as const) : []),
    ...destinations.others.filter((k): k is MatchDestination => k !== 'meta' && k in MATCH_WEIGHTS),
  ];
  if (kinds.length === 0) return;
  const click = await attributedClick();
  const view = consentView(row, click, customerData);
  const sent = matchQualityOf(kinds, view.conversion, view.click, view.customerData, options);
  // Nothing withheld: what the request had is what is sent, and no key needs a consent warning.
  if (view.complete) {
    row.match_quality = JSON.stringify(sent);
    return;
  }
  const asked = matchQualityOf(kinds, row, click, customerData, options);
  for (const kind of kinds) {
    const before = asked[kind];
    const after = sent[kind];
    if (!before || !after) continue;
    const withheld = before.keys.filter((key) => !after.keys.includes(key));
    if (withheld.length === 0) continue;
    after.warnings = after.warnings.filter((warning) => !withheld.includes(warning.key));
    const userData = withheld.filter((key) => USER_DATA_KEYS.has(key));
    const clickIds = withheld.filter((key) => !USER_DATA_KEYS.has(key));
    if (userData.length > 0) {
      after.warnings.push({
        code: 'user_data_denied',
        key: userData[0] as MatchKey,
        message: `consent adUserData is denied: ${userData.join(', ')} not sent`,
      });
    }
    if (clickIds.length > 0) {
      after.warnings.push({
        code: 'ad_storage_denied',
        key: clickIds[0] as MatchKey,
        message: `consent adStorage is denied: ${clickIds.join(', ')} not sent (still used for attribution)`,
      });
    }
  }
  row.match_quality = JSON.stringify(sent);
}
