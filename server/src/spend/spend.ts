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
    if (!isValidDate(entry.date)) {
      throw invalid(
        `entries[${i}].date`,
        'invalid_format',
        `entries[${i}].date must be a date in YYYY-MM-DD format that exists (${entry.date} does not)`,
      );
    }
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
      source: 'api',
      created_at: now,
      updated_at: now,
    };
  });
  checkNoRepeatedKeys(rows);
  const stored = await database.write(async (trx) => {
    await requireStore(trx, tenant, storeId);
    return upsertSpend(trx, rows);
  });
  return stored.map(presentSpend);
}

/**
 * Two entries of one batch with the same upsert key would have the later silently replace the
 * earlier; which one the sender meant is unknowable, so the batch is refused, naming both.
 */
function checkNoRepeatedKeys(rows: AdSpendTable[]): void {
  const seen = new Map<string, number>();
  rows.forEach((row, i) => {
    const key = JSON.stringify([row.date, row.platform, row.campaign_id]);
    const first = seen.get(key);
    if (first === undefined) {
      seen.set(key, i);
      return;
    }
    const campaign = row.campaign_id === '' ? 'no campaignId' : `campaignId ${row.campaign_id}`;
    throw fieldError(
      'invalid_request',
      `entries[${i}]`,
      'duplicate_entry',
      `entries[${i}] duplicates entries[${first}]: both are ${row.platform} spend on ${row.date} with ${campaign}, ` +
        'and an entry replaces the one with the same date, platform and campaignId; send each once',
      { duplicateOf: `entries[${first}]` },
    );
  });
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
    source: row.source ?? 'api',
    livemode: row.livemode === 1,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}
