import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { COHORT_BY, computeCohorts } from '../analytics/cohorts.js';
import { tenantOf } from '../http/auth.js';
import { ok } from '../http/envelope.js';
import { DATE_RANGE_ERRORS, describeResponses, EXAMPLE, STORE_NOT_FOUND } from '../http/openapi.js';
import { bearer, DateQuery, Query, type RouteDeps } from './common.js';
import { Cohorts } from './schemas/cohorts.js';

export const cohortRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { database }) => {
  // GET /v1/analytics/cohorts — first-purchase cohorts by month (and channel)
  app.get(
    '/analytics/cohorts',
    {
      config: { scope: 'analytics:read' },
      schema: {
        tags: ['Analytics'],
        operationId: 'getCohorts',
        summary: "A store's first-purchase cohorts by month (and channel of the first purchase)",
        description:
          'Customers (a hashed email, else phone) grouped by the month of their first conversion in the store’s time zone — by=channel also by the channel that conversion is credited to — with the cumulative Purchase value net of refunds per customer d0…d365 days after each customer’s first conversion, the month’s ad spend (by=channel: the platform’s), CAC and the payback day. Only the key’s mode counts. Dates are calendar days of the store’s time zone, both inclusive; by default the twelve months ending today.',
        security: bearer,
        querystring: Query({
          storeId: Type.String({ minLength: 1, maxLength: 64, description: 'The store', examples: [EXAMPLE.storeId] }),
          startDate: DateQuery('Inclusive; default the first day of the month eleven months before endDate’s'),
          endDate: DateQuery('Inclusive; default today in the store time zone'),
          by: Type.Optional(Type.Enum([...COHORT_BY], { description: 'month (default) or channel' })),
        }),
        response: describeResponses(Cohorts, {
          description: 'The cohorts',
          examples: {
            byChannel: {
              summary: 'September’s Meta cohort',
              data: {
                storeId: EXAMPLE.storeId,
                by: 'channel',
                startDate: '2026-09-01',
                endDate: '2026-09-30',
                timezone: 'Europe/Berlin',
                currency: 'EUR',
                livemode: true,
                asOf: '2026-11-22T10:00:00.000Z',
                cohorts: [
                  {
                    cohort: '2026-09',
                    channel: 'meta',
                    customers: 120,
                    spend: 3000,
                    cac: 25,
                    netRevenuePerCustomer: { d0: 18.4, d30: 24.1 },
                    paybackDays: 41,
                  },
                  { cohort: '2026-09', channel: 'unattributed', customers: 64, netRevenuePerCustomer: { d0: 35, d30: 41.25 } },
                ],
                warnings: [],
              },
            },
          },
          invalid: {
            missingStoreId: {
              summary: 'storeId absent or empty',
              code: 'missing_required_field',
              message: 'storeId is required',
              details: { field: 'storeId', reason: 'required_field_missing' },
            },
            unknownBy: {
              summary: 'by is not month or channel',
              code: 'invalid_request',
              message: 'by must be one of month, channel',
              details: { field: 'by', reason: 'unknown_value' },
            },
            ...DATE_RANGE_ERRORS,
          },
          notFound: STORE_NOT_FOUND,
        }),
      },
    },
    async (request) => ok(request, await computeCohorts(database, tenantOf(request), request.query)),
  );
};
