import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { computeBreakdown, keysetOf } from '../analytics/breakdown.js';
import { DIMENSIONS } from '../analytics/fold.js';
import { computeMetrics } from '../analytics/metrics.js';
import { computeTimeseries, INTERVALS, MAX_HOUR_RANGE_DAYS } from '../analytics/timeseries.js';
import { MODELS } from '../attribution/models.js';
import { tenantOf } from '../http/auth.js';
import { ok } from '../http/envelope.js';
import { listContext, PageQuery } from '../http/pagination.js';
import { bearer, DateQuery, Nullable, Query, type RouteDeps, responses, Timestamp } from './common.js';

const Metrics = Type.Object({
  storeId: Type.String(),
  totalClicks: Type.Integer({ description: 'Non-bot clicks with click time in range' }),
  totalConversions: Type.Integer({ description: 'Conversions of any event type with event time in range' }),
  totalRevenue: Type.Number({ description: 'Sum of Purchase values in the store currency' }),
  attributedConversions: Type.Integer(),
  attributedRevenue: Type.Number({ description: 'Sum of attributed Purchase values in the store currency' }),
  conversionRate: Type.Number({ description: 'attributedConversions / totalClicks × 100, 2 decimals; 0 without clicks' }),
  averageOrderValue: Type.Number({ description: 'totalRevenue / Purchase conversions in the store currency, 2 decimals' }),
  roas: Nullable(Type.Number({ description: 'attributedRevenue / adSpend, 2 decimals; null without recorded spend' })),
  adSpend: Type.Number({ description: 'Recorded ad spend in the store currency' }),
  currency: Type.String(),
  startDate: Type.String(),
  endDate: Type.String(),
  timezone: Type.String(),
  revenueByCurrency: Type.Record(Type.String(), Type.Number(), {
    description: 'Purchase revenue in other currencies; never added into totalRevenue',
  }),
  adSpendByCurrency: Type.Record(Type.String(), Type.Number(), {
    description: 'Spend recorded in other currencies; never added into adSpend',
  }),
  livemode: Type.Boolean(),
});

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
  conversionRate: Type.Number({ description: 'attributedConversions / clicks × 100, 2 decimals; 0 without clicks' }),
  averageOrderValue: Type.Number({ description: 'revenue / Purchase conversions in the store currency, 2 decimals' }),
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
  attributedRevenue: Type.Number({ description: 'Purchase value in the store currency credited by the model' }),
  conversionRate: Type.Number({ description: 'attributedConversions / clicks × 100, 2 decimals; 0 without clicks' }),
  spend: Nullable(Type.Number({ description: 'by=campaign_id: spend recorded for this campaign in range (store currency)' })),
  roas: Nullable(Type.Number({ description: 'by=campaign_id: attributedRevenue / spend, 2 decimals; null without spend' })),
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

export const analyticsRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { database, cursors }) => {
  // GET /v1/analytics/metrics — a store's headline metrics over a date range
  app.get(
    '/analytics/metrics',
    {
      config: { scope: 'analytics:read' },
      schema: {
        tags: ['Analytics'],
        summary: "A store's metrics over an inclusive date range in its time zone",
        security: bearer,
        querystring: Query({
          storeId: Type.String({ minLength: 1, maxLength: 64 }),
          startDate: DateQuery('Inclusive; default 29 days before endDate'),
          endDate: DateQuery('Inclusive; default today in the store time zone'),
        }),
        response: responses(200, Metrics),
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
        summary: "A store's metrics per day or hour of its time zone, every bucket present",
        security: bearer,
        querystring: Query({
          storeId: Type.String({ minLength: 1, maxLength: 64 }),
          startDate: DateQuery('Inclusive; default 29 days before endDate'),
          endDate: DateQuery('Inclusive; default today in the store time zone'),
          interval: Type.Optional(
            Type.Enum([...INTERVALS], {
              default: 'day',
              description: `Bucket size; hour covers at most ${MAX_HOUR_RANGE_DAYS} days (a DST day has 23 or 25 hours)`,
            }),
          ),
        }),
        response: responses(200, Timeseries),
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
        summary: 'Clicks, credited conversions, revenue, spend and ROAS per value of a click dimension, by revenue',
        security: bearer,
        querystring: Query({
          storeId: Type.String({ minLength: 1, maxLength: 64 }),
          startDate: DateQuery('Inclusive; default 29 days before endDate'),
          endDate: DateQuery('Inclusive; default today in the store time zone'),
          by: Type.Enum([...DIMENSIONS], { description: 'The click dimension to group by' }),
          model: Type.Optional(
            Type.Enum([...MODELS], { default: 'last_click', description: 'How a conversion is credited to its touchpoints' }),
          ),
          ...PageQuery,
        }),
        response: responses(200, Breakdown),
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
