import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { tenantOf } from '../http/auth.js';
import { ok } from '../http/envelope.js';
import { listContext, PageQuery } from '../http/pagination.js';
import { listStoreSpend, presentSpend, recordSpend } from '../spend/spend.js';
import { bearer, DateQuery, Nullable, Query, type RouteDeps, responses, Timestamp } from './common.js';

const SpendEntryBody = Type.Object(
  {
    date: Type.String({
      pattern: '^\\d{4}-\\d{2}-\\d{2}$',
      description: 'Calendar day the spend belongs to',
      examples: ['2026-11-21'],
    }),
    amount: Type.Number({ minimum: 0, maximum: 1e12, examples: [250.5] }),
    currency: Type.String({ maxLength: 16, 'x-error-code': 'invalid_currency', examples: ['USD'] }),
    platform: Type.Optional(Type.String({ pattern: '^[a-z][a-z0-9_]{0,31}$', description: 'Default "meta"' })),
    campaignId: Type.Optional(Type.String({ maxLength: 255 })),
    campaignName: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);

const SpendEntry = Type.Object({
  id: Type.String(),
  storeId: Type.String(),
  date: Type.String(),
  amount: Type.Number(),
  currency: Type.String(),
  platform: Type.String(),
  campaignId: Nullable(Type.String()),
  campaignName: Nullable(Type.String()),
  livemode: Type.Boolean(),
  createdAt: Timestamp('First recorded'),
  updatedAt: Timestamp('Last replaced'),
});

const StoreParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

export const spendRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { database, cursors }) => {
  // POST /v1/stores/:id/ad-spend — record daily ad spend (upsert)
  app.post(
    '/stores/:id/ad-spend',
    {
      config: { scope: 'spend:write' },
      schema: {
        tags: ['Ad spend'],
        summary: 'Record ad spend; an entry replaces the one with the same date, platform and campaignId',
        security: bearer,
        params: StoreParams,
        body: Type.Object(
          { entries: Type.Array(SpendEntryBody, { minItems: 1, maxItems: 1000 }) },
          { additionalProperties: false },
        ),
        response: responses(200, Type.Object({ entries: Type.Array(SpendEntry) })),
      },
    },
    async (request) => {
      const entries = await recordSpend(database, tenantOf(request), request.params.id, request.body.entries);
      return ok(request, { entries });
    },
  );

  // GET /v1/stores/:id/ad-spend — recorded spend in a date range, newest day first
  app.get(
    '/stores/:id/ad-spend',
    {
      config: { scope: 'analytics:read' },
      schema: {
        tags: ['Ad spend'],
        summary: 'List recorded ad spend',
        security: bearer,
        params: StoreParams,
        querystring: Query({
          startDate: DateQuery('Inclusive; default 29 days before endDate'),
          endDate: DateQuery('Inclusive; default today in the store time zone'),
          ...PageQuery,
        }),
        response: responses(
          200,
          Type.Object({ entries: Type.Array(SpendEntry), hasMore: Type.Boolean(), nextCursor: Nullable(Type.String()) }),
        ),
      },
    },
    async (request) => {
      const auth = tenantOf(request);
      const { limit = 20, cursor, ...range } = request.query;
      const context = listContext('ad-spend', auth, { storeId: request.params.id, ...range });
      const rows = await listStoreSpend(database, auth, request.params.id, range, {
        limit,
        after: cursors.decode(cursor, context),
      });
      const page = cursors.page(rows, limit, context, (r) => ({ time: r.date, id: r.id }), presentSpend);
      return ok(request, { entries: page.items, hasMore: page.hasMore, nextCursor: page.nextCursor });
    },
  );
};
