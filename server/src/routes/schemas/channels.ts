import { Type } from 'typebox';
import { MODELS } from '../../attribution/models.js';
import { EXAMPLE } from '../../http/openapi.js';
import { Nullable } from '../common.js';

/** Schemas of GET /v1/analytics/channels (api.md §11 "The channel report"; docs/api.md "Channels"). */

const money = (description: string, example: number) => Type.Number({ description, examples: [example] });

const figures = {
  spend: money(
    'Ad spend in the store currency (other currencies converted at their day’s rate; without one left out, see warnings)',
    900,
  ),
  clicks: Type.Integer({ description: 'Clicks (bots left out) dated in range', examples: [1320] }),
  conversions: Type.Number({
    description: 'Conversions credited by the model (fractions of multi-touch credit, 2 decimals)',
    examples: [48],
  }),
  revenue: money('Credited Purchase revenue in the store currency, by conversion day', 2480.6),
  refunds: money('Credited refunds in the store currency, by refund day', 120),
  netRevenue: money('revenue − refunds', 2360.6),
  roas: Nullable(Type.Number({ description: 'netRevenue ÷ spend, 2 decimals; null when spend is 0', examples: [2.62] })),
  cpa: Nullable(
    Type.Number({
      description: 'spend ÷ conversions, to the minor unit; null when spend or conversions is 0',
      examples: [18.75],
    }),
  ),
  newCustomers: Type.Integer({
    description: 'Customers whose first conversion is in range and credited (last click) to this channel / campaign',
    examples: [31],
  }),
};

export const ChannelCampaign = Type.Object({
  campaignId: Type.String({
    description: 'The credited click’s campaign_id (or the spend entry’s campaignId); "" for clicks without one',
    examples: ['120210000123456789'],
  }),
  campaignName: Nullable(Type.String({ description: 'From the ad spend entries, when known', examples: ['Summer Sale'] })),
  ...figures,
});

export const Channel = Type.Object({
  channel: Type.String({
    description:
      'meta, google_ads, tiktok, microsoft, pinterest, snapchat, reddit, linkedin (the credited click’s platform), another ad spend platform by its name, or unattributed (conversions credited to no click)',
    examples: ['meta'],
  }),
  ...figures,
  campaigns: Type.Array(ChannelCampaign, { description: 'Highest spend first, then net revenue; empty for unattributed' }),
});

export const Channels = Type.Object({
  storeId: Type.String({ examples: [EXAMPLE.storeId] }),
  startDate: Type.String({ examples: ['2026-11-01'] }),
  endDate: Type.String({ examples: ['2026-11-22'] }),
  timezone: Type.String({ examples: ['Europe/Berlin'] }),
  currency: Type.String({ description: 'The store currency every amount is in', examples: ['EUR'] }),
  model: Type.Enum([...MODELS]),
  livemode: Type.Boolean(),
  channels: Type.Array(Channel, {
    description:
      'Each channel with clicks, credit or spend in range (click platforms first, in a fixed order), unattributed last; they add up to GET /v1/analytics/metrics',
  }),
  totals: Type.Object({
    spend: money('Ad spend of every channel in the store currency', 1400),
    netRevenue: money('Net revenue of every channel (the metrics’ netRevenue)', 4120.5),
    mer: Nullable(Type.Number({ description: 'netRevenue ÷ spend, 2 decimals; null when spend is 0', examples: [2.94] })),
  }),
  warnings: Type.Array(
    Type.Object({
      // A string, not an enum: the OpenAPI document's one `code` enum is the error envelope's.
      code: Type.String({ description: 'What is wrong; so far only `spend_not_converted`', examples: ['spend_not_converted'] }),
      currency: Type.String({ examples: ['USD'] }),
      days: Type.Array(Type.String(), { examples: [['2026-11-02']] }),
      amount: Type.Number({ examples: [120] }),
      message: Type.String(),
    }),
  ),
});
