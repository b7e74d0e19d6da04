import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { reconciliationReport } from '../analytics/reconciliation-report.js';
import { tenantOf } from '../http/auth.js';
import { ok } from '../http/envelope.js';
import { DATE_RANGE_ERRORS, describeResponses, EXAMPLE, STORE_NOT_FOUND } from '../http/openapi.js';
import { bearer, DateQuery, Query, type RouteDeps } from './common.js';
import { EXAMPLE_RECONCILIATION, Reconciliation } from './schemas/reconciliation.js';

const StoreParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, description: 'The store’s id', examples: [EXAMPLE.storeId] }),
});

export const reconciliationRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { database }) => {
  // GET /v1/stores/:id/reconciliation — per day and destination, what was received and what became of it
  app.get(
    '/stores/:id/reconciliation',
    {
      config: { scope: 'analytics:read' },
      schema: {
        tags: ['Analytics'],
        operationId: 'getReconciliation',
        summary: 'Reconcile conversions with what each destination received',
        description:
          'Per day (event time in the store’s time zone; by default the 30 days ending today, at most 731) and per destination: the conversions received, attributed and refunded, and of those a destination receives (`eligible` = sent + pending + failed + skipped), how many were sent, acknowledged with the platform’s trace id (Meta `fbtrace_id`, Google Ads job id, TikTok `request_id`, Microsoft’s request id, Pinterest `x-pinterest-rid`, Snapchat `request_id`, Reddit’s request id, LinkedIn’s x-li-uuid), are pending, failed or were skipped, by reason. Every count comes with the `GET /v1/conversions` query listing exactly its conversions.',
        security: bearer,
        params: StoreParams,
        querystring: Query({
          startDate: DateQuery('Inclusive; default 29 days before endDate'),
          endDate: DateQuery('Inclusive; default today in the store time zone'),
          destination: Type.Optional(
            Type.Union(
              [
                Type.Literal('meta'),
                Type.Literal('google_ads'),
                Type.Literal('tiktok'),
                Type.Literal('microsoft'),
                Type.Literal('pinterest'),
                Type.Literal('snapchat'),
                Type.Literal('reddit'),
                Type.Literal('linkedin'),
              ],
              {
                description: 'Only this destination; default all of them',
              },
            ),
          ),
        }),
        response: describeResponses(Reconciliation, {
          description: 'The reconciliation of the range',
          examples: { day: { summary: 'One day, Meta only', data: EXAMPLE_RECONCILIATION } },
          invalid: DATE_RANGE_ERRORS,
          notFound: STORE_NOT_FOUND,
        }),
      },
    },
    async (request) => ok(request, await reconciliationReport(database, tenantOf(request), request.params.id, request.query)),
  );
};
