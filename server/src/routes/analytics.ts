import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { computeMetrics } from '../analytics/metrics.js';
import { tenantOf } from '../http/auth.js';
import { ok } from '../http/envelope.js';
import { bearer, DateQuery, Nullable, Query, type RouteDeps, responses } from './common.js';

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

export const analyticsRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { database }) => {
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
};
