import type { Database } from '../db/database.js';
import { reportCounts } from '../db/repositories/report-rollups.js';
import { summarizeMatchCounts } from '../quality/summary.js';
import { requireStore } from '../stores/lookup.js';
import { modeFlag, type Tenant } from '../tenancy.js';
import { checkDates, resolveRange } from './range.js';
import { MATCH_QUALITY } from './report-fold.js';
import { refreshRollups } from './rollups.js';

export interface MatchQualityQuery {
  storeId: string;
  startDate?: string;
  endDate?: string;
}

/**
 * A store's match quality per destination over an inclusive date range in its time zone (api.md
 * §10), from the match-quality rollups (brought up to date first, like every analytics read).
 */
export async function computeMatchQuality(database: Database, tenant: Tenant, query: MatchQualityQuery, now = Date.now()) {
  checkDates(query);
  const store = await requireStore(database.read, tenant, query.storeId);
  const range = resolveRange(query, store.timezone, now);
  await refreshRollups(database, store);
  const counts = await reportCounts(database.read, {
    storeId: store.id,
    livemode: modeFlag(tenant),
    report: MATCH_QUALITY,
    startDate: range.startDate,
    endDate: range.endDate,
  });
  return {
    storeId: store.id,
    startDate: range.startDate,
    endDate: range.endDate,
    timezone: range.timezone,
    livemode: tenant.livemode,
    destinations: summarizeMatchCounts(counts),
  };
}
