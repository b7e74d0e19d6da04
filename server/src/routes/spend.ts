import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { tenantOf } from '../http/auth.js';
import { ok } from '../http/envelope.js';
import {
  CALENDAR_DATE,
  CURRENCY_CODE,
  DATE_RANGE_ERRORS,
  describeResponses,
  EXAMPLE,
  PAGE_ERRORS,
  STORE_NOT_FOUND,
  serverRules,
} from '../http/openapi.js';
import { listContext, PageQuery } from '../http/pagination.js';
import { listStoreSpend, presentSpend, recordSpend } from '../spend/spend.js';
import { bearer, DateQuery, Nullable, Query, type RouteDeps, Timestamp } from './common.js';

const SpendEntryBody = Type.Object(
  {
    date: Type.String({
      ...CALENDAR_DATE,
      description: 'Calendar day the spend belongs to (YYYY-MM-DD, a day that exists), in the store’s time zone',
      examples: ['2026-11-21'],
    }),
    amount: Type.Number({
      minimum: 0,
      maximum: 1e12,
      description: 'What was spent that day, in currency; stored exactly in minor units',
      examples: [250.5],
    }),
    currency: Type.String({
      minLength: 1,
      maxLength: 16,
      ...CURRENCY_CODE,
      'x-error-code': 'invalid_currency',
      description:
        'ISO 4217 code (also accepted in lower case); spend in another currency than the store’s is reported apart (adSpendByCurrency), never converted',
      examples: ['EUR'],
    }),
    platform: Type.Optional(
      Type.String({ pattern: '^[a-z][a-z0-9_]{0,31}$', description: 'The ad platform; default "meta"', examples: ['meta'] }),
    ),
    campaignId: Type.Optional(
      Type.String({
        maxLength: 255,
        description: 'The campaign, matched with the clicks’ campaign_id for ROAS per campaign; absent = the whole day',
        examples: ['120210000123456789'],
      }),
    ),
    campaignName: Type.Optional(
      Type.String({ maxLength: 500, description: 'For people', examples: ['Autumn sale – prospecting'] }),
    ),
  },
  { additionalProperties: false, description: 'One day of spend. Unknown fields are refused (`unknown_field`).' },
);

const SpendEntry = Type.Object({
  id: Type.String({ description: 'The entry’s id', examples: [EXAMPLE.spendId] }),
  storeId: Type.String({ examples: [EXAMPLE.storeId] }),
  date: Type.String({ examples: ['2026-11-21'] }),
  amount: Type.Number({ examples: [250.5] }),
  currency: Type.String({ examples: ['EUR'] }),
  platform: Type.String({ examples: ['meta'] }),
  campaignId: Nullable(Type.String()),
  campaignName: Nullable(Type.String()),
  source: Type.Union([Type.Literal('api'), Type.Literal('sync')], {
    description:
      'Who wrote the entry last: `api` (POST …/ad-spend) or `sync` (a spend source, api.md §11); the later write of a key wins',
  }),
  livemode: Type.Boolean({ description: 'true for live data, false for test data' }),
  createdAt: Timestamp('First recorded'),
  updatedAt: Timestamp('Last replaced'),
});

const StoreParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, description: 'The store’s id', examples: [EXAMPLE.storeId] }),
});

const EXAMPLE_ENTRY = {
  id: EXAMPLE.spendId,
  storeId: EXAMPLE.storeId,
  date: '2026-11-21',
  amount: 250.5,
  currency: 'EUR',
  platform: 'meta',
  campaignId: '120210000123456789',
  campaignName: 'Autumn sale – prospecting',
  source: 'api' as const,
  livemode: true,
  createdAt: '2026-11-22T06:00:00.000Z',
  updatedAt: '2026-11-22T06:00:00.000Z',
};

export const spendRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { database, cursors }) => {
  // POST /v1/stores/:id/ad-spend — record daily ad spend (upsert)
  app.post(
    '/stores/:id/ad-spend',
    {
      config: { scope: 'spend:write' },
      schema: {
        tags: ['Ad spend'],
        operationId: 'upsertAdSpend',
        summary: 'Record ad spend; an entry replaces the one with the same date, platform and campaignId',
        description:
          'Records what a store spent on ads per day (and campaign), for ROAS in the metrics and breakdowns. An upsert: an entry replaces the stored one with the same store, mode, date, platform and campaignId, so re-sending a day’s figures is safe; one batch may not name the same key twice. A test key records test spend, which never moves live ROAS. 1–1000 entries per request, all or none.',
        security: bearer,
        params: StoreParams,
        body: Type.Object(
          {
            entries: Type.Array(SpendEntryBody, {
              minItems: 1,
              maxItems: 1000,
              ...serverRules('unique-entries'),
              description: '1–1000 days of spend; no two with the same date, platform and campaignId',
            }),
          },
          {
            additionalProperties: false,
            'x-examples': {
              twoDays: {
                summary: 'Two days of one campaign',
                value: {
                  entries: [
                    {
                      date: '2026-11-20',
                      amount: 180,
                      currency: 'EUR',
                      campaignId: '120210000123456789',
                      campaignName: 'Autumn sale – prospecting',
                    },
                    {
                      date: '2026-11-21',
                      amount: 250.5,
                      currency: 'EUR',
                      campaignId: '120210000123456789',
                      campaignName: 'Autumn sale – prospecting',
                    },
                  ],
                },
              },
            },
          },
        ),
        response: describeResponses(
          Type.Object({ entries: Type.Array(SpendEntry, { description: 'The stored entries, in the order sent' }) }),
          {
            description: 'The entries were stored (created or replaced)',
            examples: { stored: { summary: 'One day of one campaign', data: { entries: [EXAMPLE_ENTRY] } } },
            write: true,
            json: true,
            invalid: {
              noEntries: {
                summary: 'An empty batch',
                code: 'invalid_request',
                message: 'entries must have at least 1 items',
                details: { field: 'entries', reason: 'out_of_range' },
              },
              badDate: {
                summary: 'A day that does not exist',
                code: 'invalid_request',
                message: 'entries[0].date must be a date in YYYY-MM-DD format that exists (2026-02-30 does not)',
                details: { field: 'entries[0].date', reason: 'invalid_format' },
              },
              badCurrency: {
                summary: 'Not an ISO 4217 code',
                code: 'invalid_currency',
                message: '"EURO" is not an ISO 4217 currency code',
                details: { field: 'entries[0].currency', reason: 'invalid_format' },
              },
              repeatedEntry: {
                summary: 'The same day, platform and campaign twice in one batch',
                code: 'invalid_request',
                message:
                  'entries[1] duplicates entries[0]: both are meta spend on 2026-11-21 with campaignId 120210000123456789, and an entry replaces the one with the same date, platform and campaignId; send each once',
                details: { field: 'entries[1]', reason: 'duplicate_entry', duplicateOf: 'entries[0]' },
              },
            },
            notFound: STORE_NOT_FOUND,
          },
        ),
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
        operationId: 'listAdSpend',
        summary: 'List recorded ad spend',
        description:
          'The spend recorded for one store in the key’s mode over a date range (calendar days, both inclusive; by default the 30 days ending today), newest day first, paginated.',
        security: bearer,
        params: StoreParams,
        querystring: Query({
          startDate: DateQuery('Inclusive; default 29 days before endDate'),
          endDate: DateQuery('Inclusive; default today in the store time zone'),
          ...PageQuery,
        }),
        response: describeResponses(
          Type.Object({
            entries: Type.Array(SpendEntry, { description: 'This page, newest day first' }),
            hasMore: Type.Boolean({ description: 'true when another page follows' }),
            nextCursor: Nullable(Type.String({ description: 'Pass as `cursor` for the next page; null on the last page' })),
          }),
          {
            description: 'A page of spend entries',
            examples: {
              page: { summary: 'The last page', data: { entries: [EXAMPLE_ENTRY], hasMore: false, nextCursor: null } },
            },
            invalid: {
              ...DATE_RANGE_ERRORS,
              ...PAGE_ERRORS,
            },
            notFound: STORE_NOT_FOUND,
          },
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
