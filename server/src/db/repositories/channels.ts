import type { Reader } from '../database.js';
import { monthSplit } from './rollup-reads.js';
import type { DateRange } from './spend.js';

/** Ad spend of one platform's campaign in one currency (minor units): over the range, or on one day. */
export interface CampaignDaySpend {
  platform: string;
  campaignId: string;
  campaignName: string | null;
  currency: string;
  /** The day; '' for a sum over the whole range. */
  date: string;
  total: number;
  entries: number;
}

/**
 * Spend per platform, campaign and currency in a date range: the range's whole months from
 * `rollup_spend_months` (migration 0041), its partial first and last months summed from the
 * entries (`ad_spend_campaigns`) — a year of 200 campaigns reads ~2,400 month rows and at most
 * two months of entries, not 73,000 campaign-days. Spend in another currency than `perDayUnless`
 * comes per day (the channel report converts each day's at its rate); without it, every
 * currency is summed over the range. A campaign's name is the greatest of its entries' names.
 */
export async function spendByCampaign(
  db: Reader,
  storeId: string,
  livemode: number,
  range: DateRange,
  perDayUnless?: string,
): Promise<CampaignDaySpend[]> {
  const { months, days } = monthSplit(range);
  const reads = days.map((span) => summedEntries(db, storeId, livemode, span, perDayUnless));
  if (months) {
    let query = db
      .selectFrom('rollup_spend_months')
      .select((eb) => [
        'platform',
        'campaign_id',
        'currency',
        eb.fn.max('campaign_name').as('campaign_name'),
        eb.fn.sum<number>('amount_minor').as('total'),
        eb.fn.sum<number>('entries').as('entries'),
      ])
      .where('store_id', '=', storeId)
      .where('livemode', '=', livemode)
      .where('month', '>=', months.from)
      .where('month', '<=', months.to);
    if (perDayUnless !== undefined) query = query.where('currency', '=', perDayUnless);
    reads.push(query.groupBy(['platform', 'campaign_id', 'currency']).execute());
  }
  const summed = new Map<string, CampaignDaySpend>();
  for (const r of (await Promise.all(reads)).flat()) {
    const key = `${r.platform}\u0001${r.campaign_id}\u0001${r.currency}`;
    const name = (r.campaign_name as string | null) ?? null;
    const sum = summed.get(key);
    if (!sum) {
      summed.set(key, {
        platform: r.platform,
        campaignId: r.campaign_id,
        campaignName: name,
        currency: r.currency,
        date: '',
        total: Number(r.total),
        entries: Number(r.entries),
      });
      continue;
    }
    sum.total += Number(r.total);
    sum.entries += Number(r.entries);
    if (name !== null && (sum.campaignName === null || name > sum.campaignName)) sum.campaignName = name;
  }
  const daily = perDayUnless === undefined ? [] : await otherCurrencyDays(db, storeId, livemode, { months, days }, perDayUnless);
  return [
    ...summed.values(),
    ...daily.map((r) => ({
      platform: r.platform,
      campaignId: r.campaign_id,
      campaignName: (r.campaign_name as string | null) ?? null,
      currency: r.currency,
      date: r.date,
      total: Number(r.total),
      entries: Number(r.entries),
    })),
  ];
}

/**
 * Spend in other currencies than `currency`, per day: in the partial months, and in the whole
 * months whose rollup rows show one (not a scan of the year's entries when every entry is in
 * the store currency).
 */
async function otherCurrencyDays(
  db: Reader,
  storeId: string,
  livemode: number,
  { months, days }: ReturnType<typeof monthSplit>,
  currency: string,
) {
  const spans = [...days];
  if (months) {
    const others = await db
      .selectFrom('rollup_spend_months')
      .select('month')
      .distinct()
      .where('store_id', '=', storeId)
      .where('livemode', '=', livemode)
      .where('month', '>=', months.from)
      .where('month', '<=', months.to)
      .where('currency', '!=', currency)
      .execute();
    for (const { month } of others) spans.push({ startDate: `${month}-01`, endDate: `${month}-31` });
  }
  const reads = spans.map((span) =>
    entries(db, storeId, livemode, span)
      .select('date')
      .where('currency', '!=', currency)
      .groupBy(['platform', 'campaign_id', 'currency', 'date'])
      .execute(),
  );
  return (await Promise.all(reads)).flat();
}

/** The entries of a date range, their sums per platform, campaign and currency selected. */
function entries(db: Reader, storeId: string, livemode: number, range: DateRange) {
  return db
    .selectFrom('ad_spend')
    .select((eb) => [
      'platform',
      'campaign_id',
      'currency',
      eb.fn.max('campaign_name').as('campaign_name'),
      eb.fn.sum<number>('amount_minor').as('total'),
      eb.fn.countAll<number>().as('entries'),
    ])
    .where('store_id', '=', storeId)
    .where('livemode', '=', livemode)
    .where('date', '>=', range.startDate)
    .where('date', '<=', range.endDate);
}

/** The entries of a span summed per platform, campaign and currency (only `currency` when given). */
function summedEntries(db: Reader, storeId: string, livemode: number, span: DateRange, currency?: string) {
  const query = entries(db, storeId, livemode, span);
  return (currency === undefined ? query : query.where('currency', '=', currency))
    .groupBy(['platform', 'campaign_id', 'currency'])
    .execute();
}

/**
 * Spend per currency in a date range: `currency`'s summed over the range (date ''), every other
 * currency per day (each day is converted at its own rate) — from the month rollups as
 * `spendByCampaign` reads them, not the range's entries (a year's 73,200 campaign-days).
 */
export async function spendByCurrencyDay(
  db: Reader,
  storeId: string,
  livemode: number,
  range: DateRange,
  currency: string,
): Promise<Array<{ currency: string; date: string; total: number; entries: number }>> {
  const days = new Map<string, { currency: string; date: string; total: number; entries: number }>();
  for (const row of await spendByCampaign(db, storeId, livemode, range, currency)) {
    const key = `${row.currency}\u0001${row.date}`;
    const day = days.get(key) ?? { currency: row.currency, date: row.date, total: 0, entries: 0 };
    day.total += row.total;
    day.entries += row.entries;
    days.set(key, day);
  }
  return [...days.values()];
}
