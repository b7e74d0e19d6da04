import { checkDates, resolveRange } from '../analytics/range.js';
import { isValidDate } from '../calendar/dates.js';
import type { Database } from '../db/database.js';
import type { Page } from '../db/repositories/keyset.js';
import { listSpend, upsertSpend } from '../db/repositories/spend.js';
import type { AdSpendTable } from '../db/schema.js';
import { fieldError, invalid } from '../http/errors.js';
import { newId } from '../ids.js';
import { fromMinorUnits, normalizeCurrency, toMinorUnits } from '../money.js';
import { requireStore } from '../stores/lookup.js';
import { modeFlag, type Tenant } from '../tenancy.js';

export interface SpendEntryInput {
  date: string;
  amount: number;
  currency: string;
  platform?: string;
  campaignId?: string;
  campaignName?: string;
}

/** Records daily ad spend; an entry replaces the one with the same (date, platform, campaignId). */
export async function recordSpend(
  database: Database,
  tenant: Tenant,
  storeId: string,
  entries: SpendEntryInput[],
  now = Date.now(),
) {
  const rows = entries.map((entry, i): AdSpendTable => {
    if (!isValidDate(entry.date))
      throw invalid(`entries[${i}].date`, 'invalid_format', 'date must be a calendar date YYYY-MM-DD');
    const currency = normalizeCurrency(entry.currency);
    if (!currency) {
      throw fieldError(
        'invalid_currency',
        `entries[${i}].currency`,
        'invalid_format',
        `"${entry.currency}" is not an ISO 4217 currency code`,
      );
    }
    return {
      id: newId('spend', now),
      account_id: tenant.accountId,
      store_id: storeId,
      livemode: modeFlag(tenant),
      date: entry.date,
      platform: entry.platform ?? 'meta',
      campaign_id: entry.campaignId ?? '',
      campaign_name: entry.campaignName ?? null,
      amount_minor: toMinorUnits(entry.amount, currency),
      currency,
      created_at: now,
      updated_at: now,
    };
  });
  const stored = await database.write(async (trx) => {
    await requireStore(trx, tenant, storeId);
    return upsertSpend(trx, rows);
  });
  return stored.map(presentSpend);
}

export async function listStoreSpend(
  database: Database,
  tenant: Tenant,
  storeId: string,
  query: { startDate?: string; endDate?: string },
  page: Page,
  now = Date.now(),
) {
  checkDates(query);
  const store = await requireStore(database.read, tenant, storeId);
  const range = resolveRange(query, store.timezone, now);
  return listSpend(database.read, store.id, modeFlag(tenant), range, page);
}

export function presentSpend(row: AdSpendTable) {
  return {
    id: row.id,
    storeId: row.store_id,
    date: row.date,
    amount: fromMinorUnits(row.amount_minor, row.currency),
    currency: row.currency,
    platform: row.platform,
    campaignId: row.campaign_id === '' ? null : row.campaign_id,
    campaignName: row.campaign_name,
    livemode: row.livemode === 1,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}
