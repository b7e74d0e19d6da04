import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { computeBreakdown, keysetOf } from '../analytics/breakdown.js';
import { DIMENSIONS } from '../analytics/fold.js';
import { computeMetrics } from '../analytics/metrics.js';
import { computeTimeseries, INTERVALS, MAX_HOUR_RANGE_DAYS } from '../analytics/timeseries.js';
import { MODELS } from '../attribution/models.js';
import { tenantOf } from '../http/auth.js';
import { ok } from '../http/envelope.js';
import { describeResponses, EXAMPLE, PAGE_ERRORS, STORE_NOT_FOUND } from '../http/openapi.js';
import { listContext, PageQuery } from '../http/pagination.js';
import { channelRoutes } from './channels.js';
import { cohortRoutes } from './cohorts.js';
import { bearer, DateQuery, Query, type RouteDeps } from './common.js';
import { matchQualityRoutes } from './match-quality.js';
import { Breakdown, Metrics, RANGE_ERRORS, RANGE_RULES, STORE_ID_QUERY, Timeseries } from './schemas/analytics.js';

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
