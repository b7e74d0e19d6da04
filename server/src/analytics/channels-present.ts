/** The channel report's figures and how they are presented (api.md §11; computed by channels.ts). */
import { CHANNEL_OF_KIND } from '../click-channel.js';
import { fromMinorUnits, moneyRatio, ratio2 } from '../money.js';
import { CREDIT_UNITS } from './fold.js';
import { spendWarnings, type UnconvertedSpend } from './spend-fx.js';

/** One channel's or campaign's figures in exact units (credit in millionths, money in minor units). */
export interface ChannelFigures {
  clicks: number;
  units: number;
  revenueMinor: number;
  refundMinor: number;
  spendMinor: number;
  spendEntries: number;
  newCustomers: number;
}

export function emptyFigures(): ChannelFigures {
  return { clicks: 0, units: 0, revenueMinor: 0, refundMinor: 0, spendMinor: 0, spendEntries: 0, newCustomers: 0 };
}

function add(into: ChannelFigures, from: ChannelFigures): void {
  into.clicks += from.clicks;
  into.units += from.units;
  into.revenueMinor += from.revenueMinor;
  into.refundMinor += from.refundMinor;
  into.spendMinor += from.spendMinor;
  into.spendEntries += from.spendEntries;
  into.newCustomers += from.newCustomers;
}

/** The channels of click ids, in their order of api.md §11; other spend platforms follow by name, `unattributed` last. */
const CHANNEL_ORDER = [...new Set(Object.values(CHANNEL_OF_KIND))];

function figuresOut(f: ChannelFigures, currency: string) {
  const net = f.revenueMinor - f.refundMinor;
  // CPA: spend per credited conversion, rounded half up to the minor unit.
  const cpaMinor =
    f.spendMinor === 0 || f.units <= 0
      ? null
      : Number((BigInt(f.spendMinor) * BigInt(CREDIT_UNITS) * 2n + BigInt(f.units)) / (BigInt(f.units) * 2n));
  return {
    spend: fromMinorUnits(f.spendMinor, currency),
    clicks: f.clicks,
    conversions: ratio2(f.units, CREDIT_UNITS),
    revenue: fromMinorUnits(f.revenueMinor, currency),
    refunds: fromMinorUnits(f.refundMinor, currency),
    netRevenue: fromMinorUnits(net, currency),
    roas: f.spendMinor === 0 ? null : moneyRatio(net, f.spendMinor),
    cpa: cpaMinor === null ? null : fromMinorUnits(cpaMinor, currency),
    newCustomers: f.newCustomers,
  };
}

const netOf = (f: ChannelFigures) => f.revenueMinor - f.refundMinor;

export function presentChannels(input: {
  header: {
    storeId: string;
    startDate: string;
    endDate: string;
    timezone: string;
    currency: string;
    model: string;
    livemode: boolean;
  };
  channels: Map<string, { figures: ChannelFigures; campaigns: Map<string, ChannelFigures> }>;
  unattributed: ChannelFigures;
  names: Map<string, string>;
  unconverted: UnconvertedSpend[];
}) {
  const { currency } = input.header;
  const rank = (channel: string) => {
    const i = CHANNEL_ORDER.indexOf(channel);
    return i === -1 ? CHANNEL_ORDER.length : i;
  };
  const total = emptyFigures();
  const channels = [...input.channels.entries()]
    .sort(([a], [b]) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0))
    .map(([channel, c]) => {
      for (const f of c.campaigns.values()) add(c.figures, f);
      add(total, c.figures);
      const campaigns = [...c.campaigns.entries()]
        .sort(
          ([a, fa], [b, fb]) =>
            fb.spendMinor - fa.spendMinor || netOf(fb) - netOf(fa) || fb.units - fa.units || (a < b ? -1 : a > b ? 1 : 0),
        )
        .map(([campaignId, f]) => ({
          campaignId,
          campaignName: input.names.get(`${channel}|${campaignId}`) ?? null,
          ...figuresOut(f, currency),
        }));
      return { channel, ...figuresOut(c.figures, currency), campaigns };
    });
  const u = input.unattributed;
  if (u.units !== 0 || u.revenueMinor !== 0 || u.refundMinor !== 0 || u.newCustomers !== 0) {
    add(total, u);
    channels.push({ channel: 'unattributed', ...figuresOut(u, currency), campaigns: [] });
  }
  const netMinor = netOf(total);
  return {
    ...input.header,
    channels,
    totals: {
      spend: fromMinorUnits(total.spendMinor, currency),
      netRevenue: fromMinorUnits(netMinor, currency),
      mer: total.spendMinor === 0 ? null : moneyRatio(netMinor, total.spendMinor),
    },
    warnings: spendWarnings(input.unconverted, currency),
  };
}
