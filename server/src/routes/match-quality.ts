import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { computeMatchQuality } from '../analytics/match-quality-view.js';
import { tenantOf } from '../http/auth.js';
import { ok } from '../http/envelope.js';
import { DATE_RANGE_ERRORS, describeResponses, EXAMPLE, STORE_NOT_FOUND } from '../http/openapi.js';
import { bearer, DateQuery, Query, type RouteDeps } from './common.js';
import { MatchQualityView } from './schemas/quality.js';

export const matchQualityRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { database }) => {
  // GET /v1/analytics/match-quality — a store's match quality per destination
  app.get(
    '/analytics/match-quality',
    {
      config: { scope: 'analytics:read' },
      schema: {
        tags: ['Analytics'],
        operationId: 'getMatchQuality',
        summary: "A store's match quality per destination over an inclusive date range in its time zone",
        description:
          'For each destination, the conversions in range it receives, their average match-quality score (0–10), the share of them missing each match key, warning counts, and which key would raise the score most. Dates are calendar days of the store’s time zone, both inclusive; by default the 30 days ending today. Only the key’s mode counts.',
        security: bearer,
        querystring: Query({
          storeId: Type.String({ minLength: 1, maxLength: 64, description: 'The store', examples: [EXAMPLE.storeId] }),
          startDate: DateQuery('Inclusive; default 29 days before endDate'),
          endDate: DateQuery('Inclusive; default today in the store time zone'),
        }),
        response: describeResponses(MatchQualityView, {
          description: 'The store’s match quality over the range',
          examples: {
            november: {
              summary: 'Meta only',
              data: {
                storeId: EXAMPLE.storeId,
                startDate: '2026-11-01',
                endDate: '2026-11-22',
                timezone: 'Europe/Berlin',
                livemode: true,
                destinations: {
                  meta: {
                    conversions: 97,
                    averageScore: 7.42,
                    missing: { clickId: 0.3093, email: 0.0206, phone: 0.4124, ipUserAgent: 0.1, fbp: 0.2, address: 0 },
                    warnings: { phone_without_country_code: 12 },
                    improvements: [
                      { key: 'clickId', scoreGain: 0.93 },
                      { key: 'phone', scoreGain: 0.62 },
                      { key: 'ipUserAgent', scoreGain: 0.15 },
                      { key: 'fbp', scoreGain: 0.1 },
                      { key: 'email', scoreGain: 0.06 },
                    ],
                  },
                },
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
            ...DATE_RANGE_ERRORS,
          },
          notFound: STORE_NOT_FOUND,
        }),
      },
    },
    async (request) => ok(request, await computeMatchQuality(database, tenantOf(request), request.query)),
  );
};
