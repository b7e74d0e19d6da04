import type { Database } from '../db/database.js';
import { DESTINATION_KINDS, type DestinationKind, forwardingStates } from '../db/repositories/reconciliation.js';
import { requireStore } from '../stores/lookup.js';
import { modeFlag, type Tenant } from '../tenancy.js';
import { checkDates, resolveRange } from './range.js';
import { reconcile } from './reconciliation.js';

export interface ReconciliationQuery {
  startDate?: string;
  endDate?: string;
  destination?: DestinationKind;
}

/** GET /v1/stores/:id/reconciliation: the store's days in the key's mode (api.md §10). */
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
  const conversions = await forwardingStates(
    database.read,
    { accountId: tenant.accountId, livemode: modeFlag(tenant), storeId: store.id, from: range.from, to: range.to },
    kinds,
  );
  const days = reconcile({
    storeId: store.id,
    timezone: store.timezone,
    startDate: range.startDate,
    endDate: range.endDate,
    kinds,
    conversions,
  });
  return { storeId: store.id, startDate: range.startDate, endDate: range.endDate, timezone: store.timezone, days };
}
