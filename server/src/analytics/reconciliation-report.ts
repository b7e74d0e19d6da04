import type { Database } from '../db/database.js';
import { DESTINATION_KINDS, type DestinationKind } from '../db/repositories/reconciliation.js';
import { reportCountsAndLists } from '../db/repositories/report-rollups.js';
import { requireStore } from '../stores/lookup.js';
import { modeFlag, type Tenant } from '../tenancy.js';
import { checkDates, resolveRange } from './range.js';
import { reconcileCounts } from './reconciliation.js';
import { RECONCILIATION, TRACE_ITEM } from './report-fold.js';
import { refreshRollups } from './rollups.js';

export interface ReconciliationQuery {
  startDate?: string;
  endDate?: string;
  destination?: DestinationKind;
}

/**
 * GET /v1/stores/:id/reconciliation: the store's days in the key's mode (api.md §10), from the
 * report rollups (brought up to date first, like every analytics read) — a few rows per day and
 * destination instead of every conversion of the range.
 */
export async function reconciliationReport(
  database: Database,
  tenant: Tenant,
  storeId: string,
  query: ReconciliationQuery,
  now = Date.now(),
) {
  checkDates(query);
  const store = await requireStore(database.read, tenant, storeId);
  const range = resolveRange(query, store.timezone, now);
  const kinds = query.destination ? [query.destination] : DESTINATION_KINDS;
  await refreshRollups(database, store);
  const scope = {
    storeId: store.id,
    livemode: modeFlag(tenant),
    report: RECONCILIATION,
    startDate: range.startDate,
    endDate: range.endDate,
  };
  const only = query.destination ? kinds : undefined;
  // The trace ids come gathered per day and destination.
  const { counts, lists } = await reportCountsAndLists(database.read, scope, TRACE_ITEM, only);
  const days = reconcileCounts({
    storeId: store.id,
    startDate: range.startDate,
    endDate: range.endDate,
    kinds,
    counts,
    traces: lists,
  });
  return { storeId: store.id, startDate: range.startDate, endDate: range.endDate, timezone: store.timezone, days };
}
