import type { Reader, Writer } from '../database.js';
import { engineOf } from '../engine.js';
import { rowLimit } from '../row-limit.js';
import type { AdSpendTable } from '../schema.js';
import { afterKeyset, type Page } from './keyset.js';

/** Upserts by (store, mode, date, platform, campaignId); returns the stored rows in input order. */
export async function upsertSpend(db: Writer, entries: AdSpendTable[]): Promise<AdSpendTable[]> {
  const stored = await writeEntries(db, entries);
  await refreshSpendMonths(db, stored);
  return stored;
}

/** Entries an upsert statement carries at most (12 columns each: well under both engines' parameter limits). */
const UPSERT_CHUNK = 500;

const spendKey = (e: Pick<AdSpendTable, 'store_id' | 'livemode' | 'date' | 'platform' | 'campaign_id'>) =>
  `${e.store_id}\u0001${e.livemode}\u0001${e.date}\u0001${e.platform}\u0001${e.campaign_id}`;

/**
 * The upserts of `upsertSpend`, without the month rollups: one statement per chunk of up to 500
 * entries, each answering its stored rows (`returning`; a sync's 6,000 rows took two statements
 * each before, ~3 s on PostgreSQL). A key met again starts a new chunk, so a later entry of a
 * key is written after the earlier one and each answers the row as its own write left it.
 */
async function writeEntries(db: Writer, entries: AdSpendTable[]): Promise<AdSpendTable[]> {
  const stored: AdSpendTable[] = [];
  let chunk: AdSpendTable[] = [];
  const keys = new Set<string>();
  const flush = async () => {
    if (chunk.length === 0) return;
    const rows = await db
      .insertInto('ad_spend')
      .values(chunk)
      .onConflict((oc) =>
        oc.columns(['store_id', 'livemode', 'date', 'platform', 'campaign_id']).doUpdateSet((eb) => ({
          amount_minor: eb.ref('excluded.amount_minor'),
          currency: eb.ref('excluded.currency'),
          campaign_name: eb.ref('excluded.campaign_name'),
          source: eb.ref('excluded.source'),
          updated_at: eb.ref('excluded.updated_at'),
        })),
      )
      .returningAll()
      .execute();
    const byKey = new Map(rows.map((r) => [spendKey(r), r]));
    for (const entry of chunk) stored.push(byKey.get(spendKey(entry)) as AdSpendTable);
    chunk = [];
    keys.clear();
  };
  for (const entry of entries) {
    const key = spendKey(entry);
    if (keys.has(key) || chunk.length >= UPSERT_CHUNK) await flush();
    chunk.push(entry);
    keys.add(key);
  }
  await flush();
  return stored;
}

/**
 * Recomputes `rollup_spend_months` (migration 0041) for the store, mode and month of each given
 * entry from all of that month's entries: exact whatever the write changed (an amount, a
 * currency, a name). One delete and one grouped insert per month (~6,000 entries for 200
 * campaigns, through `ad_spend_dates`); spend is written by syncs and API calls, not per event.
 */
async function refreshSpendMonths(db: Writer, entries: Array<Pick<AdSpendTable, 'store_id' | 'livemode' | 'date'>>) {
  const months = new Map(entries.map((e) => [`${e.store_id}\u0001${e.livemode}\u0001${e.date.slice(0, 7)}`, e]));
  for (const [key, { store_id, livemode }] of [...months].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const month = key.slice(key.lastIndexOf('\u0001') + 1);
    // Two writers of one store's month (two sources' syncs) take turns: each recomputes it from
    // the entries committed before it, and neither leaves the other's rows behind (in key order: no deadlock).
    await engineOf(db).locks.serialize(db, `spend month ${key}`);
    await db
      .deleteFrom('rollup_spend_months')
      .where('store_id', '=', store_id)
      .where('livemode', '=', livemode)
      .where('month', '=', month)
      .execute();
    await db
      .insertInto('rollup_spend_months')
      .columns([
        'store_id',
        'livemode',
        'month',
        'platform',
        'campaign_id',
        'currency',
        'amount_minor',
        'entries',
        'campaign_name',
      ])
      .expression((eb) =>
        eb
          .selectFrom('ad_spend')
          .select([
            'store_id',
            'livemode',
            eb.val(month).as('month'),
            'platform',
            'campaign_id',
            'currency',
            eb.fn.sum<number>('amount_minor').as('amount_minor'),
            eb.fn.countAll<number>().as('entries'),
            eb.fn.max('campaign_name').as('campaign_name'),
          ])
          .where('store_id', '=', store_id)
          .where('livemode', '=', livemode)
          .where('date', '>=', `${month}-01`)
          .where('date', '<=', `${month}-31`)
          .groupBy(['store_id', 'livemode', 'platform', 'campaign_id', 'currency']),
      )
      .execute();
  }
}

/**
 * A spend source's pull of `platform` over `range` (api.md §11 "Sync"): each row upserted (the
 * later write of a key wins, whoever wrote it before), and every entry the sync wrote earlier in
 * the range that the platform no longer reports set to 0 (not left stale). Entries written by
 * the API are the merchant's own word: the pull replaces them only where it reports the key.
 * Returns how many entries were zeroed.
 */
export async function replaceSyncedSpend(
  trx: Writer,
  key: { storeId: string; platform: string },
  range: DateRange,
  rows: AdSpendTable[],
  now: number,
): Promise<number> {
  const stored = await writeEntries(trx, rows);
  const reported = new Set(rows.map((r) => `${r.date}\n${r.campaign_id}`));
  const stale = await trx
    .selectFrom('ad_spend')
    .select(['id', 'date', 'campaign_id', 'amount_minor'])
    .where('store_id', '=', key.storeId)
    .where('livemode', '=', 1)
    .where('platform', '=', key.platform)
    .where('source', '=', 'sync')
    .where('date', '>=', range.startDate)
    .where('date', '<=', range.endDate)
    .execute();
  const zeroed = stale.filter((r) => !reported.has(`${r.date}\n${r.campaign_id}`) && Number(r.amount_minor) !== 0);
  const zero = zeroed.map((r) => r.id);
  for (let i = 0; i < zero.length; i += 500) {
    await trx
      .updateTable('ad_spend')
      .set({ amount_minor: 0, updated_at: now })
      .where('id', 'in', zero.slice(i, i + 500))
      .execute();
  }
  // The months of both at once: each month locked once, all in one order.
  await refreshSpendMonths(trx, [...stored, ...zeroed.map((r) => ({ store_id: key.storeId, livemode: 1, date: r.date }))]);
  return zero.length;
}

export interface DateRange {
  startDate: string;
  endDate: string; // inclusive
}

export async function listSpend(
  db: Reader,
  storeId: string,
  livemode: number,
  range: DateRange,
  page: Page,
): Promise<AdSpendTable[]> {
  let query = db
    .selectFrom('ad_spend')
    .selectAll()
    .where('store_id', '=', storeId)
    .where('livemode', '=', livemode)
    .where('date', '>=', range.startDate)
    .where('date', '<=', range.endDate);
  const after = page.after;
  if (after) query = query.where((eb) => afterKeyset(eb, 'date', 'id', after));
  return query
    .orderBy('date', 'desc')
    .orderBy('id', 'desc')
    .limit(rowLimit(page.limit + 1))
    .execute();
}

/** Total recorded spend per currency in a date range. */
export async function sumSpend(
  db: Reader,
  storeId: string,
  livemode: number,
  range: DateRange,
): Promise<Array<{ currency: string; total: number; entries: number }>> {
  const rows = await db
    .selectFrom('ad_spend')
    .select((eb) => ['currency', eb.fn.sum<number>('amount_minor').as('total'), eb.fn.countAll<number>().as('entries')])
    .where('store_id', '=', storeId)
    .where('livemode', '=', livemode)
    .where('date', '>=', range.startDate)
    .where('date', '<=', range.endDate)
    .groupBy('currency')
    .execute();
  return rows.map((r) => ({ currency: r.currency, total: Number(r.total), entries: Number(r.entries) }));
}

/** Spend in one currency per campaign in a date range; entries without a campaign are left out. */
export async function sumSpendByCampaign(
  db: Reader,
  storeId: string,
  livemode: number,
  range: DateRange,
  currency: string,
): Promise<Array<{ campaignId: string; total: number; entries: number }>> {
  const rows = await db
    .selectFrom('ad_spend')
    .select((eb) => ['campaign_id', eb.fn.sum<number>('amount_minor').as('total'), eb.fn.countAll<number>().as('entries')])
    .where('store_id', '=', storeId)
    .where('livemode', '=', livemode)
    .where('date', '>=', range.startDate)
    .where('date', '<=', range.endDate)
    .where('currency', '=', currency)
    .where('campaign_id', '!=', '')
    .groupBy('campaign_id')
    .execute();
  return rows.map((r) => ({ campaignId: r.campaign_id, total: Number(r.total), entries: Number(r.entries) }));
}

/** Spend in one currency per day of a date range (days without spend left out). */
export async function sumSpendByDate(
  db: Reader,
  storeId: string,
  livemode: number,
  range: DateRange,
  currency: string,
): Promise<Array<{ date: string; total: number }>> {
  const rows = await db
    .selectFrom('ad_spend')
    .select((eb) => ['date', eb.fn.sum<number>('amount_minor').as('total')])
    .where('store_id', '=', storeId)
    .where('livemode', '=', livemode)
    .where('date', '>=', range.startDate)
    .where('date', '<=', range.endDate)
    .where('currency', '=', currency)
    .groupBy('date')
    .execute();
  return rows.map((r) => ({ date: r.date, total: Number(r.total) }));
}
