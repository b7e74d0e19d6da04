/**
 * Tracking health (api.md §11 "Tracking health"): what would make the channel report wrong, each
 * item with a sentence a merchant can act on — campaigns with spend and no tracked click, the
 * clicks of each platform without a campaign id (with the URL parameters to add), failing
 * destinations and spend sources, and conversions waiting more than an hour for a destination.
 */
import type { Database } from '../db/database.js';
import { spendByCampaign } from '../db/repositories/channels.js';
import { healthOfStore } from '../db/repositories/destination-health.js';
import { sumDimensionClicks } from '../db/repositories/rollup-reads.js';
import { storeSources } from '../db/repositories/spend-sources.js';
import { pendingSince } from '../db/repositories/tracking-health.js';
import { fromMinorUnits, ratio2 } from '../money.js';
import { requireStore } from '../stores/lookup.js';
import { modeFlag, type Tenant } from '../tenancy.js';
import { channelOfPlatform } from './channels.js';
import { CHANNEL_CAMPAIGN, NO_VALUE } from './fold.js';
import { checkDates, resolveRange } from './range.js';
import { refreshRollups } from './rollups.js';

/** A platform's name as merchants know it. */
export const CHANNEL_NAMES: Record<string, string> = {
  meta: 'Meta',
  google_ads: 'Google Ads',
  tiktok: 'TikTok',
  microsoft: 'Microsoft Advertising',
  pinterest: 'Pinterest',
  snapchat: 'Snapchat',
  reddit: 'Reddit',
  linkedin: 'LinkedIn',
};

/** The URL parameters each platform's ads add to the landing page so a click carries its campaign id (docs/integrations.md "Tag your ad URLs"). */
export const URL_PARAMETERS: Record<string, string> = {
  meta: 'campaign_id={{campaign.id}}&adset_id={{adset.id}}&ad_id={{ad.id}}',
  google_ads: 'campaign_id={campaignid}&adgroup_id={adgroupid}',
  tiktok: 'campaign_id=__CAMPAIGN_ID__&adgroup_id=__AID__&ad_id=__CID__',
  microsoft: 'campaign_id={CampaignId}',
  pinterest: 'campaign_id={campaignid}',
  snapchat: 'campaign_id={{campaign.id}}',
  reddit: 'campaign_id={{CAMPAIGN_ID}}',
  linkedin: 'campaign_id={{CAMPAIGN_ID}}',
};

/** Jobs pending longer than this are reported. */
export const PENDING_AFTER_MS = 60 * 60 * 1000;

const nameOf = (channel: string) => CHANNEL_NAMES[channel] ?? channel;

function formatMoney(amount: number, currency: string): string {
  try {
    return new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(amount);
  } catch {
    return `${amount} ${currency}`;
  }
}

export interface TrackingHealthQuery {
  storeId: string;
  startDate?: string;
  endDate?: string;
}

export async function computeTrackingHealth(database: Database, tenant: Tenant, query: TrackingHealthQuery, now = Date.now()) {
  checkDates(query);
  const store = await requireStore(database.read, tenant, query.storeId);
  const range = resolveRange(query, store.timezone, now);
  const livemode = modeFlag(tenant);
  await refreshRollups(database, store);
  const [clicks, spend, health, sources, pending] = await Promise.all([
    sumDimensionClicks(database.read, store.id, livemode, CHANNEL_CAMPAIGN, range),
    spendByCampaign(database.read, store.id, livemode, range),
    healthOfStore(database.read, store.id),
    storeSources(database.read, store.id),
    pendingSince(database.read, store.id, livemode, now - PENDING_AFTER_MS),
  ]);
  const items: Array<{ type: string; message: string; [figure: string]: unknown }> = [];

  // Campaigns with spend and no tracked click (of any channel: a campaign id is the platform's own).
  const clickedCampaigns = new Set<string>();
  const perChannel = new Map<string, { clicks: number; untagged: number }>();
  for (const row of clicks) {
    if (row.value === NO_VALUE || row.clicks === 0) continue;
    const bar = row.value.indexOf('|');
    const channel = row.value.slice(0, bar);
    const campaignId = row.value.slice(bar + 1);
    if (campaignId !== '') clickedCampaigns.add(campaignId);
    const c = perChannel.get(channel) ?? { clicks: 0, untagged: 0 };
    c.clicks += row.clicks;
    if (campaignId === '') c.untagged += row.clicks;
    perChannel.set(channel, c);
  }
  const spent = new Map<
    string,
    { channel: string; campaignId: string; campaignName: string | null; currency: string; minor: number }
  >();
  for (const row of spend) {
    if (row.campaignId === '' || clickedCampaigns.has(row.campaignId)) continue;
    const channel = channelOfPlatform(row.platform);
    const key = `${channel}|${row.campaignId}|${row.currency}`;
    const s = spent.get(key) ?? { channel, campaignId: row.campaignId, campaignName: null, currency: row.currency, minor: 0 };
    s.minor += row.total;
    s.campaignName = s.campaignName ?? row.campaignName;
    spent.set(key, s);
  }
  for (const s of [...spent.values()]
    .filter((v) => v.minor > 0)
    .sort((a, b) => b.minor - a.minor || (a.campaignId < b.campaignId ? -1 : 1))) {
    const amount = fromMinorUnits(s.minor, s.currency);
    const campaign = s.campaignName ? `${s.campaignName} (${s.campaignId})` : s.campaignId;
    items.push({
      type: 'spend_without_clicks',
      message: `${nameOf(s.channel)} campaign ${campaign} spent ${formatMoney(amount, s.currency)} from ${range.startDate} to ${range.endDate} with no tracked click: add the Waytrack tag to its landing page or check its URL parameters (${URL_PARAMETERS[s.channel] ?? 'campaign_id=<the campaign id>'}).`,
      channel: s.channel,
      campaignId: s.campaignId,
      campaignName: s.campaignName,
      spend: amount,
      currency: s.currency,
    });
  }

  for (const [channel, c] of [...perChannel.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (c.untagged === 0) continue;
    const parameters = URL_PARAMETERS[channel] ?? 'campaign_id=<the campaign id>';
    const share = ratio2(c.untagged * 100, c.clicks);
    items.push({
      type: 'untagged_clicks',
      message: `${c.untagged} of ${c.clicks} ${nameOf(channel)} clicks (${share}%) carry no campaign id, so their conversions cannot be matched to a campaign's spend: add ${parameters} to the URL parameters of your ${nameOf(channel)} ads.`,
      channel,
      clicks: c.clicks,
      untagged: c.untagged,
      share,
      parameters,
    });
  }

  for (const h of health.filter((row) => row.status === 'failing')) {
    items.push({
      type: 'destination_failing',
      message: `The ${nameOf(h.kind)} destination is failing${h.last_error ? ` (${h.last_error.replace(/\.?$/, '')})` : ''}: conversions are not reaching ${nameOf(h.kind)}; fix its settings on the store page, then test it.`,
      destination: h.kind,
      consecutiveFailures: h.consecutive_failures,
      failingSince: h.failing_since === null ? null : new Date(Number(h.failing_since)).toISOString(),
      lastError: h.last_error,
    });
  }

  for (const s of sources.filter((row) => row.status === 'failing')) {
    items.push({
      type: 'spend_source_failing',
      message: `Spend sync from ${nameOf(s.kind)} is failing${s.last_error ? ` (${s.last_error.replace(/\.?$/, '')})` : ''}: its spend${s.synced_through ? ` after ${s.synced_through}` : ''} is missing from ROAS; renew its credentials on the store page, then sync it.`,
      kind: s.kind,
      lastSyncedAt: s.last_synced_at === null ? null : new Date(Number(s.last_synced_at)).toISOString(),
      syncedThrough: s.synced_through,
      lastError: s.last_error,
    });
  }

  for (const p of pending) {
    items.push({
      type: 'conversions_pending',
      message: `${p.conversions} conversion${p.conversions === 1 ? ' has' : 's have'} been waiting more than an hour to be sent to ${nameOf(p.destination)} (the oldest since ${new Date(p.oldest).toISOString()}): check the destination's health and this server's outbound network.`,
      destination: p.destination,
      conversions: p.conversions,
      oldestPendingAt: new Date(p.oldest).toISOString(),
    });
  }

  return { storeId: store.id, startDate: range.startDate, endDate: range.endDate, livemode: tenant.livemode, items };
}
