import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { computeBreakdown, keysetOf } from '../analytics/breakdown.js';
import { DIMENSIONS } from '../analytics/fold.js';
import { computeMetrics } from '../analytics/metrics.js';
import { computeTimeseries, INTERVALS, MAX_HOUR_RANGE_DAYS } from '../analytics/timeseries.js';
import { MODELS } from '../attribution/models.js';
import { tenantOf } from '../http/auth.js';
import { ok } from '../http/envelope.js';
import {
  DATE_RANGE_ERRORS,
  describeResponses,
  type ErrorExample,
  EXAMPLE,
  PAGE_ERRORS,
  STORE_NOT_FOUND,
} from '../http/openapi.js';
import { listContext, PageQuery } from '../http/pagination.js';
import { channelRoutes } from './channels.js';
import { cohortRoutes } from './cohorts.js';
import { bearer, DateQuery, Nullable, Query, type RouteDeps, Timestamp } from './common.js';
import { matchQualityRoutes } from './match-quality.js';

const Metrics = Type.Object({
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
      code: Type.Literal('spend_not_converted'),
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

const STORE_ID_QUERY = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'The store (of the key’s account; inactive stores too)',
  examples: [EXAMPLE.storeId],
});

const RANGE_ERRORS: Record<string, ErrorExample> = {
  missingStoreId: {
    summary: 'storeId absent or empty',
    code: 'missing_required_field',
    message: 'storeId is required',
    details: { field: 'storeId', reason: 'required_field_missing' },
  },
  ...DATE_RANGE_ERRORS,
};

const RANGE_RULES =
  'Dates are calendar days of the store’s time zone, both inclusive; by default the 30 days ending today. A range may not start after it ends or cover more than 731 days. Only the key’s mode counts: a test key sees test data only. Money is in the store currency; other currencies are reported apart, never added in (metrics’ `converted` adds them at the exchange rate recorded with each conversion).';

const Bucket = Type.Object({
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

const Timeseries = Type.Object({
  storeId: Type.String(),
  interval: Type.Enum([...INTERVALS]),
  startDate: Type.String(),
  endDate: Type.String(),
  timezone: Type.String(),
  currency: Type.String(),
  livemode: Type.Boolean(),
  buckets: Type.Array(Bucket, { description: 'Every bucket of the range in time order, zeros included' }),
});

const Group = Type.Object({
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

const Breakdown = Type.Object({
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

export const analyticsRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, deps) => {
  const { database, cursors } = deps;
  // GET /v1/analytics/match-quality (api.md §10), beside the other analytics and reused by the dashboard with them.
  await app.register(matchQualityRoutes, deps);
  // GET /v1/analytics/cohorts (api.md §11 "Customers").
  await app.register(cohortRoutes, deps);
  // GET /v1/analytics/channels and /tracking-health (api.md §11 "The channel report", "Tracking health").
  await app.register(channelRoutes, deps);
  // GET /v1/analytics/metrics — a store's headline metrics over a date range
  app.get(
    '/analytics/metrics',
    {
      config: { scope: 'analytics:read' },
      schema: {
        tags: ['Analytics'],
        operationId: 'getMetrics',
        summary: "A store's metrics over an inclusive date range in its time zone",
        description: `Clicks, conversions, revenue, attributed conversions and revenue, conversion rate, average order value, ad spend and ROAS of one store. Bot clicks are left out; revenue counts Purchase conversions only. ${RANGE_RULES}`,
        security: bearer,
        querystring: Query({
          storeId: STORE_ID_QUERY,
          startDate: DateQuery('Inclusive; default 29 days before endDate'),
          endDate: DateQuery('Inclusive; default today in the store time zone'),
        }),
        response: describeResponses(Metrics, {
          description: 'The store’s metrics over the range',
          examples: {
            november: {
              summary: 'November so far',
              data: {
                storeId: EXAMPLE.storeId,
                totalClicks: 1840,
                totalConversions: 97,
                totalRevenue: 4890.3,
                attributedConversions: 61,
                attributedRevenue: 3120.5,
                refunds: 149.9,
                netRevenue: 4740.4,
                conversionRate: 3.32,
                averageOrderValue: 50.42,
                roas: 2.5,
                adSpend: 1200,
                currency: 'EUR',
                startDate: '2026-11-01',
                endDate: '2026-11-22',
                timezone: 'Europe/Berlin',
                revenueByCurrency: { USD: 129.99 },
                adSpendByCurrency: {},
                spendByCurrency: {},
                warnings: [],
                converted: { totalRevenue: 5010.18, attributedRevenue: 3120.5, unconvertedByCurrency: {} },
                livemode: true,
              },
            },
          },
          invalid: RANGE_ERRORS,
          notFound: STORE_NOT_FOUND,
        }),
      },
    },
    async (request) => ok(request, await computeMetrics(database, tenantOf(request), request.query)),
  );

  // GET /v1/analytics/timeseries — a store's metrics per local day or hour
  app.get(
    '/analytics/timeseries',
    {
      config: { scope: 'analytics:read' },
      schema: {
        tags: ['Analytics'],
        operationId: 'getTimeseries',
        summary: "A store's metrics per day or hour of its time zone, every bucket present",
        description: `The metrics of one store bucketed by local day, or by local hour (at most ${MAX_HOUR_RANGE_DAYS} days; a daylight-saving day has 23 or 25 hours), in time order with empty buckets as zeros. ${RANGE_RULES}`,
        security: bearer,
        querystring: Query({
          storeId: STORE_ID_QUERY,
          startDate: DateQuery('Inclusive; default 29 days before endDate'),
          endDate: DateQuery('Inclusive; default today in the store time zone'),
          interval: Type.Optional(
            Type.Enum([...INTERVALS], {
              default: 'day',
              description: `Bucket size; hour covers at most ${MAX_HOUR_RANGE_DAYS} days (a DST day has 23 or 25 hours)`,
            }),
          ),
        }),
        response: describeResponses(Timeseries, {
          description: 'The buckets of the range',
          examples: {
            twoDays: {
              summary: 'Two days, one without traffic',
              data: {
                storeId: EXAMPLE.storeId,
                interval: 'day',
                startDate: '2026-11-21',
                endDate: '2026-11-22',
                timezone: 'Europe/Berlin',
                currency: 'EUR',
                livemode: true,
                buckets: [
                  {
                    start: '2026-11-20T23:00:00.000Z',
                    label: '2026-11-21',
                    clicks: 0,
                    conversions: 0,
                    revenue: 0,
                    attributedConversions: 0,
                    attributedRevenue: 0,
                    refunds: 0,
                    conversionRate: 0,
                    averageOrderValue: 0,
                    adSpend: 0,
                  },
                  {
                    start: '2026-11-21T23:00:00.000Z',
                    label: '2026-11-22',
                    clicks: 84,
                    conversions: 5,
                    revenue: 249.5,
                    attributedConversions: 3,
                    attributedRevenue: 149.7,
                    refunds: 0,
                    conversionRate: 3.57,
                    averageOrderValue: 49.9,
                    adSpend: 60,
                  },
                ],
              },
            },
          },
          invalid: {
            ...RANGE_ERRORS,
            hourRangeTooLong: {
              summary: 'Hourly buckets over more than 31 days',
              code: 'invalid_request',
              message: `interval=hour covers at most ${MAX_HOUR_RANGE_DAYS} days; use interval=day`,
              details: { field: 'interval', reason: 'out_of_range' },
            },
          },
          notFound: STORE_NOT_FOUND,
        }),
      },
    },
    async (request) => ok(request, await computeTimeseries(database, tenantOf(request), request.query)),
  );

  // GET /v1/analytics/breakdown — clicks, credited conversions and revenue per campaign dimension value
  app.get(
    '/analytics/breakdown',
    {
      config: { scope: 'analytics:read' },
      schema: {
        tags: ['Analytics'],
        operationId: 'getBreakdown',
        summary: 'Clicks, credited conversions, revenue, spend and ROAS per value of a click dimension, by revenue',
        description: `Groups one store's clicks by a dimension of the click (utm_source, campaign_id, …) and credits each conversion to its touchpoints with an attribution model (last_click by default; first_click, linear, time_decay, position_based), highest attributed revenue first, paginated. With by=campaign_id, spend and ROAS per campaign come from the recorded ad spend. ${RANGE_RULES}`,
        security: bearer,
        querystring: Query({
          storeId: STORE_ID_QUERY,
          startDate: DateQuery('Inclusive; default 29 days before endDate'),
          endDate: DateQuery('Inclusive; default today in the store time zone'),
          by: Type.Enum([...DIMENSIONS], { description: 'The click dimension to group by' }),
          model: Type.Optional(
            Type.Enum([...MODELS], { default: 'last_click', description: 'How a conversion is credited to its touchpoints' }),
          ),
          ...PageQuery,
        }),
        response: describeResponses(Breakdown, {
          description: 'A page of groups, highest attributed revenue first',
          examples: {
            byCampaign: {
              summary: 'By campaign, last click',
              data: {
                storeId: EXAMPLE.storeId,
                by: 'campaign_id',
                model: 'last_click',
                startDate: '2026-11-01',
                endDate: '2026-11-22',
                timezone: 'Europe/Berlin',
                currency: 'EUR',
                livemode: true,
                groups: [
                  {
                    value: '120210000123456789',
                    clicks: 1320,
                    attributedConversions: 48,
                    attributedRevenue: 2480.6,
                    refunds: 120,
                    netRevenue: 2360.6,
                    conversionRate: 3.64,
                    spend: 900,
                    roas: 2.62,
                  },
                  {
                    value: null,
                    clicks: 520,
                    attributedConversions: 13,
                    attributedRevenue: 639.9,
                    refunds: 0,
                    netRevenue: 639.9,
                    conversionRate: 2.5,
                    spend: null,
                    roas: null,
                  },
                ],
                hasMore: false,
                nextCursor: null,
              },
            },
          },
          invalid: {
            ...RANGE_ERRORS,
            badDimension: {
              summary: 'by is not a click dimension',
              code: 'invalid_request',
              message: `by must be one of: ${DIMENSIONS.join(', ')}`,
              details: { field: 'by', reason: 'unknown_value' },
            },
            ...PAGE_ERRORS,
          },
          notFound: STORE_NOT_FOUND,
        }),
      },
    },
    async (request) => {
      const auth = tenantOf(request);
      const { limit = 20, cursor, ...query } = request.query;
      const filters = { ...query, model: query.model ?? 'last_click' };
      const context = listContext('analytics-breakdown', auth, filters);
      const after = cursors.decode(cursor, context);
      const result = await computeBreakdown(database, auth, filters, { limit, after });
      const page = cursors.page(result.rows, limit, context, keysetOf, result.present);
      return ok(request, { ...result.header, groups: page.items, hasMore: page.hasMore, nextCursor: page.nextCursor });
    },
  );
};
