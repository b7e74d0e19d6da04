import type { Reader } from '../database.js';
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
 * Spend per platform, campaign and currency in a date range, summed in SQL (index `ad_spend` by
 * store, mode, date): a year of 200 campaigns is 200 rows, not 73,000 campaign-days. Spend in
 * another currency than `perDayUnless` comes per day (the channel report converts each day's at
 * its rate); without it, every currency is summed over the range.
 */
export async function spendByCampaign(
  db: Reader,
  storeId: string,
  livemode: number,
  range: DateRange,
  perDayUnless?: string,
): Promise<CampaignDaySpend[]> {
  const base = db
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
  const summed = await (perDayUnless === undefined ? base : base.where('currency', '=', perDayUnless))
    .groupBy(['platform', 'campaign_id', 'currency'])
    .execute();
  const daily =
    perDayUnless === undefined
      ? []
      : await base
          .select('date')
          .where('currency', '!=', perDayUnless)
          .groupBy(['platform', 'campaign_id', 'currency', 'date'])
          .execute();
  return [...summed.map((r) => ({ ...r, date: '' })), ...daily].map((r) => ({
    platform: r.platform,
    campaignId: r.campaign_id,
    campaignName: (r.campaign_name as string | null) ?? null,
    currency: r.currency,
    date: r.date,
    total: Number(r.total),
    entries: Number(r.entries),
  }));
}

/** Customers of a store and mode whose first conversion is in [from, to): its id and the customer's channel (index customers_first). */
export async function firstConversionsBetween(
  db: Reader,
  storeId: string,
  livemode: number,
  from: number,
  to: number,
): Promise<Array<{ conversionId: string; channel: string }>> {
  const rows = await db
    .selectFrom('customers')
    .select(['first_conversion_id', 'channel'])
    .where('store_id', '=', storeId)
    .where('livemode', '=', livemode)
    .where('first_event_time', '>=', from)
    .where('first_event_time', '<', to)
    .execute();
  return rows.map((r) => ({ conversionId: r.first_conversion_id, channel: r.channel }));
}

const ID_CHUNK = 500;

/** The campaign id of the click each of these conversions is credited to ('' when the click has none or is gone). */
export async function creditedCampaigns(db: Reader, storeId: string, conversionIds: string[]): Promise<Map<string, string>> {
  const clickOf = new Map<string, string>();
  for (let i = 0; i < conversionIds.length; i += ID_CHUNK) {
    const rows = await db
      .selectFrom('conversions')
      .select(['id', 'attributed_click_id'])
      .where('store_id', '=', storeId)
      .where('id', 'in', conversionIds.slice(i, i + ID_CHUNK))
      .execute();
    for (const r of rows) if (r.attributed_click_id) clickOf.set(r.id, r.attributed_click_id);
  }
  const campaignOf = new Map<string, string>();
  const clickIds = [...new Set(clickOf.values())];
  for (let i = 0; i < clickIds.length; i += ID_CHUNK) {
    const rows = await db
      .selectFrom('clicks')
      .select(['id', 'campaign_id'])
      .where('store_id', '=', storeId)
      .where('id', 'in', clickIds.slice(i, i + ID_CHUNK))
      .execute();
    for (const r of rows) campaignOf.set(r.id, r.campaign_id ?? '');
  }
  return new Map([...clickOf].map(([conversion, click]) => [conversion, campaignOf.get(click) ?? '']));
}
