import { Type } from 'typebox';
import { DIMENSIONS } from '../../analytics/fold.js';
import { INTERVALS } from '../../analytics/timeseries.js';
import { MODELS } from '../../attribution/models.js';
import { DATE_RANGE_ERRORS, type ErrorExample, EXAMPLE } from '../../http/openapi.js';
import { Nullable, Timestamp } from '../common.js';

/** The schemas of the analytics routes (routes/analytics.ts): metrics, timeseries buckets, breakdown groups. */

export const Metrics = Type.Object({
  storeId: Type.String({ examples: [EXAMPLE.storeId] }),
  totalClicks: Type.Integer({ description: 'Non-bot clicks with click time in range' }),
  totalConversions: Type.Integer({ description: 'Conversions of any event type with event time in range' }),
  totalRevenue: Type.Number({ description: 'Sum of Purchase values in the store currency' }),
  attributedConversions: Type.Integer({ description: 'Conversions of any event type in range that are attributed' }),
  attributedRevenue: Type.Number({ description: 'Sum of attributed Purchase values in the store currency' }),
  refunds: Type.Number({
    description: 'Refunds of Purchase conversions with refund time in range, in the store currency (POST /v1/track/refund)',
  }),
  netRevenue: Type.Number({ description: 'totalRevenue − refunds' }),
  conversionRate: Type.Number({ description: 'attributedConversions / totalClicks × 100, 2 decimals; 0 without clicks' }),
  averageOrderValue: Type.Number({ description: 'totalRevenue / Purchase conversions in the store currency, 2 decimals' }),
  roas: Nullable(
    Type.Number({
      description:
        '(attributedRevenue − refunds in range of the attributed conversions) / adSpend, 2 decimals; null without recorded spend',
    }),
  ),
  adSpend: Type.Number({
    description:
      'Recorded ad spend in the store currency, spend in other currencies included at the exchange rate of its day (waytrack fx load); spend without a rate is in spendByCurrency instead',
  }),
  currency: Type.String({ description: 'The store currency every amount is in', examples: ['EUR'] }),
  startDate: Type.String({ description: 'First day computed (inclusive)', examples: ['2026-11-01'] }),
  endDate: Type.String({ description: 'Last day computed (inclusive)', examples: ['2026-11-22'] }),
  timezone: Type.String({ description: 'The store time zone the days are in', examples: ['Europe/Berlin'] }),
  revenueByCurrency: Type.Record(Type.String(), Type.Number(), {
    description: 'Purchase revenue in other currencies; never added into totalRevenue',
  }),
  adSpendByCurrency: Type.Record(Type.String(), Type.Number(), {
    description: 'Spend recorded in other currencies, as recorded (adSpend holds those of them converted at their day’s rate)',
  }),
  spendByCurrency: Type.Record(Type.String(), Type.Number(), {
    description: 'Spend in other currencies with no exchange rate for its day: left out of adSpend and ROAS (api.md §11)',
  }),
  warnings: Type.Array(
    Type.Object({
      // A string, not an enum: the OpenAPI document's one `code` enum is the error envelope's (hardening.test.ts).
      code: Type.String({ description: 'What is wrong; so far only `spend_not_converted`', examples: ['spend_not_converted'] }),
      currency: Type.String({ examples: ['USD'] }),
      days: Type.Array(Type.String(), { description: 'The days of that currency’s spend without a rate' }),
      amount: Type.Number({ description: 'That spend, in its currency' }),
      message: Type.String(),
    }),
    { description: 'What makes a figure incomplete: spend_not_converted names the currency and days left out of ROAS' },
  ),
  converted: Type.Object(
    {
      totalRevenue: Type.Number({
        description: 'totalRevenue plus the Purchase revenue in other currencies, each converted at the rate recorded with it',
      }),
      attributedRevenue: Type.Number({
        description: 'attributedRevenue plus attributed foreign-currency Purchases, converted likewise',
      }),
      unconvertedByCurrency: Type.Record(Type.String(), Type.Number(), {
        description:
          'Purchase revenue in other currencies recorded without a rate (none was loaded for its day): not in the two sums',
      }),
    },
    {
      description: 'Revenue in the store currency including other currencies at their recorded exchange rates (waytrack fx load)',
    },
  ),
  livemode: Type.Boolean({ description: 'true for live data (a wt_live_ key), false for test data' }),
});

export const STORE_ID_QUERY = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'The store (of the key’s account; inactive stores too)',
  examples: [EXAMPLE.storeId],
});

export const RANGE_ERRORS: Record<string, ErrorExample> = {
  missingStoreId: {
    summary: 'storeId absent or empty',
    code: 'missing_required_field',
    message: 'storeId is required',
    details: { field: 'storeId', reason: 'required_field_missing' },
  },
  ...DATE_RANGE_ERRORS,
};

export const RANGE_RULES =
  'Dates are calendar days of the store’s time zone, both inclusive; by default the 30 days ending today. A range may not start after it ends or cover more than 731 days. Only the key’s mode counts: a test key sees test data only. Money is in the store currency; other currencies are reported apart, never added in (metrics’ `converted` adds them at the exchange rate recorded with each conversion).';

export const Bucket = Type.Object({
  start: Timestamp('First instant of the bucket (UTC)'),
  label: Type.String({
    description: 'The bucket in the store time zone: the date (day), or the local start time with its offset (hour)',
    examples: ['2026-11-01', '2026-11-01T01:00-05:00'],
  }),
  clicks: Type.Integer({ description: 'Non-bot clicks with click time in the bucket' }),
  conversions: Type.Integer({ description: 'Conversions of any event type with event time in the bucket' }),
  revenue: Type.Number({ description: 'Sum of Purchase values in the store currency' }),
  attributedConversions: Type.Integer(),
  attributedRevenue: Type.Number({ description: 'Sum of attributed Purchase values in the store currency' }),
  refunds: Type.Number({ description: 'Refunds of Purchase conversions with refund time in the bucket, in the store currency' }),
  conversionRate: Type.Number({ description: 'attributedConversions / clicks × 100, 2 decimals; 0 without clicks' }),
  averageOrderValue: Type.Number({ description: 'revenue / Purchase conversions in the store currency, 2 decimals' }),
  adSpend: Type.Optional(
    Type.Number({
      description:
        'interval=day only: the ad spend recorded for the day in the store currency (spend in other currencies is in metrics’ adSpendByCurrency)',
    }),
  ),
});

export const Timeseries = Type.Object({
  storeId: Type.String(),
  interval: Type.Enum([...INTERVALS]),
  startDate: Type.String(),
  endDate: Type.String(),
  timezone: Type.String(),
  currency: Type.String(),
  livemode: Type.Boolean(),
  buckets: Type.Array(Bucket, { description: 'Every bucket of the range in time order, zeros included' }),
});

export const Group = Type.Object({
  value: Nullable(Type.String({ description: 'The dimension value; null for the clicks without one' })),
  clicks: Type.Integer({ description: 'Non-bot clicks with this value and click time in range' }),
  attributedConversions: Type.Number({
    description: 'Conversions (any event type) in range credited to clicks with this value by the model, 2 decimals',
  }),
  attributedRevenue: Type.Number({
    description: 'Purchase value in the store currency credited by the model (conversions with event time in range)',
  }),
  refunds: Type.Number({
    description:
      'Refunds with refund time in range, in the store currency, credited by the model in proportion to each touchpoint’s share of the refunded conversion',
  }),
  netRevenue: Type.Number({
    description: 'attributedRevenue − refunds (may be negative when refunds in range are of earlier sales)',
  }),
  conversionRate: Type.Number({ description: 'attributedConversions / clicks × 100, 2 decimals; 0 without clicks' }),
  spend: Nullable(Type.Number({ description: 'by=campaign_id: spend recorded for this campaign in range (store currency)' })),
  roas: Nullable(
    Type.Number({ description: 'by=campaign_id: netRevenue / spend (net of refunds), 2 decimals; null without spend' }),
  ),
});

export const Breakdown = Type.Object({
  storeId: Type.String(),
  by: Type.Enum([...DIMENSIONS]),
  model: Type.Enum([...MODELS]),
  startDate: Type.String(),
  endDate: Type.String(),
  timezone: Type.String(),
  currency: Type.String(),
  livemode: Type.Boolean(),
  groups: Type.Array(Group),
  hasMore: Type.Boolean(),
  nextCursor: Nullable(Type.String()),
});
