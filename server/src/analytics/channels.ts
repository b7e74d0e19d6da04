/**
 * The channel report (api.md §11 "The channel report"): per channel of the credited click and per
 * campaign id, the spend beside the clicks, credited conversions, revenue and refunds of one
 * attribution model — read from the rollups' `channel_campaign` dimension (fold.ts), never from
 * raw conversions — and `unattributed`, what no click is credited with. The channels add up to
 * `GET /v1/analytics/metrics` of the same range: `unattributed` is the metrics' totals less
 * everything credited to a channel.
 */
import type { Model } from '../attribution/models.js';
import type { Database } from '../db/database.js';
import { type CampaignDaySpend, spendByCampaign } from '../db/repositories/channels.js';
import { newCustomersBetween } from '../db/repositories/new-customers.js';
import { sumDimensionClicks, sumDimensionCredits, sumTotals } from '../db/repositories/rollup-reads.js';
import { requireStore } from '../stores/lookup.js';
import { modeFlag, type Tenant } from '../tenancy.js';
import { type ChannelFigures, emptyFigures, presentChannels } from './channels-present.js';
import { refreshCohorts } from './cohort-rollups.js';
import { CHANNEL_CAMPAIGN, CREDIT_UNITS, NO_VALUE } from './fold.js';
import { checkDates, resolveRange } from './range.js';
import { refreshRollups, TZDATA } from './rollups.js';
import { convertSpend } from './spend-fx.js';

export interface ChannelsQuery {
  storeId: string;
  startDate?: string;
  endDate?: string;
  model?: Model;
}

/**
 * The channel an `ad_spend.platform` is reported under: the spend sync's kinds and the names a
 * merchant may post (`google` → google_ads, `facebook`/`instagram` → meta, `bing` → microsoft);
 * any other platform is a channel of its own name (its spend, no clicks), so spend adds up.
 */
export function channelOfPlatform(platform: string): string {
  return PLATFORM_ALIASES[platform] ?? platform;
}

const PLATFORM_ALIASES: Record<string, string> = {
  google: 'google_ads',
  adwords: 'google_ads',
  facebook: 'meta',
  instagram: 'meta',
  bing: 'microsoft',
};

export const UNATTRIBUTED = 'unattributed';

/** Splits `total` over parts in proportion to `weights` (each ≥ 0), exactly: largest remainders get the rest. */
function split(total: number, weights: number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  if (sum === 0) return weights.map((_, i) => (i === 0 ? total : 0));
  const big = weights.map((w) => BigInt(total) * BigInt(w));
  const shares = big.map((b) => b / BigInt(sum));
  let rest = total - shares.reduce((a, b) => a + Number(b), 0);
  const order = big
    .map((b, i) => ({ i, r: b - (b / BigInt(sum)) * BigInt(sum) }))
    .sort((a, b) => (b.r > a.r ? 1 : b.r < a.r ? -1 : a.i - b.i));
  const out = shares.map(Number);
  for (const { i } of order) {
    if (rest === 0) break;
    out[i] = (out[i] as number) + Math.sign(rest);
    rest -= Math.sign(rest);
  }
  return out;
}

export async function computeChannels(database: Database, tenant: Tenant, query: ChannelsQuery, now = Date.now()) {
  checkDates(query);
  const store = await requireStore(database.read, tenant, query.storeId);
  const range = resolveRange(query, store.timezone, now);
  const livemode = modeFlag(tenant);
  const model = query.model ?? 'last_click';
  const currency = store.currency;
  // Every conversion recorded so far counts: the store's events, then its customers, folded first.
  await refreshRollups(database, store);
  await refreshCohorts(database, store.id, TZDATA);
  const [totals, clicks, credits, spend, firsts] = await Promise.all([
    sumTotals(database.read, store.id, livemode, range),
    sumDimensionClicks(database.read, store.id, livemode, CHANNEL_CAMPAIGN, range),
    sumDimensionCredits(database.read, store.id, livemode, CHANNEL_CAMPAIGN, model, range, currency),
    spendByCampaign(database.read, store.id, livemode, range, currency),
    newCustomersBetween(database.read, store.id, livemode, range),
  ]);

  const channels = new Map<string, { figures: ChannelFigures; campaigns: Map<string, ChannelFigures> }>();
  const campaign = (channel: string, campaignId: string) => {
    let c = channels.get(channel);
    if (!c) {
      c = { figures: emptyFigures(), campaigns: new Map() };
      channels.set(channel, c);
    }
    let f = c.campaigns.get(campaignId);
    if (!f) {
      f = emptyFigures();
      c.campaigns.set(campaignId, f);
    }
    return f;
  };
  const keyOf = (value: string) => {
    const bar = value.indexOf('|');
    return { channel: value.slice(0, bar), campaignId: value.slice(bar + 1) };
  };
  for (const row of clicks) {
    if (row.value === NO_VALUE || row.clicks === 0) continue;
    const { channel, campaignId } = keyOf(row.value);
    campaign(channel, campaignId).clicks += row.clicks;
  }
  let creditedUnits = 0;
  let creditedRevenue = 0;
  let creditedRefunds = 0;
  for (const row of credits) {
    // Credit of a click no longer stored (NO_VALUE) is nobody's: it stays in `unattributed`.
    if (row.value === NO_VALUE || (row.units === 0 && row.revenueMinor === 0 && row.refundMinor === 0)) continue;
    const { channel, campaignId } = keyOf(row.value);
    const f = campaign(channel, campaignId);
    f.units += row.units;
    f.revenueMinor += row.revenueMinor;
    f.refundMinor += row.refundMinor;
    creditedUnits += row.units;
    creditedRevenue += row.revenueMinor;
    creditedRefunds += row.refundMinor;
  }

  // Spend as the metrics count it: store currency as recorded, another currency's day converted
  // once at its rate (spend-fx.ts) and that amount split over its campaigns, so the channels add up.
  const converted = await convertSpend(
    database.read,
    currency,
    [...groupDays(spend).values()].map(({ currency: c, date, total, entries }) => ({ currency: c, date, total, entries })),
  );
  const names = new Map<string, string>();
  for (const row of spend) {
    const channel = channelOfPlatform(row.platform);
    if (row.campaignName) names.set(`${channel}|${row.campaignId}`, row.campaignName);
    const f = campaign(channel, row.campaignId);
    f.spendEntries += row.entries;
    if (row.currency === currency) f.spendMinor += row.total;
  }
  const days = groupDays(spend);
  for (const day of converted.convertedDays) {
    const parts = days.get(`${day.currency}|${day.date}`)?.rows ?? [];
    const shares = split(
      day.minor,
      parts.map((p) => Math.abs(p.total)),
    );
    parts.forEach((p, i) => {
      campaign(channelOfPlatform(p.platform), p.campaignId).spendMinor += shares[i] as number;
    });
  }

  // New customers: customers whose first conversion is in range, by that conversion's channel and credited click's campaign.
  let unattributedCustomers = 0;
  for (const first of firsts) {
    if (first.channel === UNATTRIBUTED) unattributedCustomers += first.customers;
    else campaign(first.channel, first.campaignId).newCustomers += first.customers;
  }

  // What no channel is credited with: the metrics' totals less the channels' credit.
  let conversions = 0;
  let revenueMinor = 0;
  let refundsMinor = 0;
  for (const t of totals) {
    if (t.currency === NO_VALUE) continue;
    conversions += t.conversions;
    if (t.currency === currency) {
      revenueMinor += t.revenueMinor;
      refundsMinor += t.refundsMinor;
    }
  }
  const unattributed = emptyFigures();
  unattributed.units = conversions * CREDIT_UNITS - creditedUnits;
  unattributed.revenueMinor = revenueMinor - creditedRevenue;
  unattributed.refundMinor = refundsMinor - creditedRefunds;
  unattributed.newCustomers = unattributedCustomers;

  return presentChannels({
    header: {
      storeId: store.id,
      startDate: range.startDate,
      endDate: range.endDate,
      timezone: range.timezone,
      currency,
      model,
      livemode: tenant.livemode,
    },
    channels,
    unattributed,
    names,
    unconverted: converted.unconverted,
  });
}

/** Spend rows per currency and day ('' for the store currency's, summed over the range), with the day's total. */
function groupDays(spend: CampaignDaySpend[]) {
  const days = new Map<string, { currency: string; date: string; total: number; entries: number; rows: CampaignDaySpend[] }>();
  for (const row of spend) {
    const key = `${row.currency}|${row.date}`;
    const day = days.get(key) ?? { currency: row.currency, date: row.date, total: 0, entries: 0, rows: [] };
    day.total += row.total;
    day.entries += row.entries;
    day.rows.push(row);
    days.set(key, day);
  }
  return days;
}
