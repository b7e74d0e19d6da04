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

/**
 * Customers of a store and mode whose first conversion is in [from, to), counted per channel and
 * campaign of that conversion's credited click (migration 0037): one range of the covering index
 * `customers_first`.
 */
export async function newCustomersBetween(
  db: Reader,
  storeId: string,
  livemode: number,
  from: number,
  to: number,
): Promise<Array<{ channel: string; campaignId: string; customers: number }>> {
  const rows = await db
    .selectFrom('customers')
    .select((eb) => ['channel', 'campaign_id', eb.fn.countAll<number>().as('customers')])
    .where('store_id', '=', storeId)
    .where('livemode', '=', livemode)
    .where('first_event_time', '>=', from)
    .where('first_event_time', '<', to)
    .groupBy(['channel', 'campaign_id'])
    .execute();
  return rows.map((r) => ({ channel: r.channel, campaignId: r.campaign_id, customers: Number(r.customers) }));
}
