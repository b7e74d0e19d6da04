import { checkDates, resolveRange } from '../analytics/range.js';
import type { Database } from '../db/database.js';
import { matchQualityInRange } from '../db/repositories/match-quality.js';
import { requireStore } from '../stores/lookup.js';
import { modeFlag, type Tenant } from '../tenancy.js';
import { summarizeMatchQuality } from './summary.js';

export interface MatchQualityQuery {
  storeId: string;
  startDate?: string;
  endDate?: string;
}

/** A store's match quality per destination over an inclusive date range in its time zone (api.md §10). */
export async function computeMatchQuality(database: Database, tenant: Tenant, query: MatchQualityQuery, now = Date.now()) {
  checkDates(query);
  const store = await requireStore(database.read, tenant, query.storeId);
  const range = resolveRange(query, store.timezone, now);
  const stored = await matchQualityInRange(database.read, store.id, modeFlag(tenant), range);
  return {
    storeId: store.id,
    startDate: range.startDate,
    endDate: range.endDate,
    timezone: range.timezone,
    livemode: tenant.livemode,
    destinations: summarizeMatchQuality(stored),
  };
}
