import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { tenantOf } from '../http/auth.js';
import { ok } from '../http/envelope.js';
import { listContext, PageQuery } from '../http/pagination.js';
import {
  explainedConversion,
  listConversionsOf,
  presentConversion,
  reattribute,
  trackConversion,
} from '../tracking/conversions.js';
import { FBCLID_PATTERN } from './clicks.js';
import {
  bearer,
  ClientTime,
  DateQuery,
  ForwardingState,
  Nullable,
  Query,
  type RouteDeps,
  responses,
  Timestamp,
} from './common.js';

const EVENT_TYPE = Type.String({
  pattern: '^[A-Za-z][A-Za-z0-9_]{0,49}$',
  description: "A Meta standard event name (Purchase, Lead, CompleteRegistration, …) or a custom name such as 'signup'",
  examples: ['Purchase'],
});

const Text = (maxLength: number) => Type.Optional(Type.String({ maxLength }));

const ConversionBody = Type.Object({
  storeId: Type.String({ minLength: 1, maxLength: 64 }),
  eventType: EVENT_TYPE,
  orderId: Type.String({ minLength: 1, maxLength: 255, examples: ['1001'] }),
  eventValue: Type.Number({ minimum: 0, maximum: 1e12, examples: [49.99] }),
  currency: Type.String({
    maxLength: 16,
    'x-error-code': 'invalid_currency',
    description: 'ISO 4217, any case',
    examples: ['USD'],
  }),
  customerData: Type.Optional(
    Type.Object(
      {
        email: Text(256),
        firstName: Text(256),
        lastName: Text(256),
        phone: Text(256),
        city: Text(256),
        state: Text(256),
        country: Text(256),
        zipCode: Text(256),
      },
      { description: 'Normalized and SHA-256 hashed on arrival (Meta rules); the raw values are never stored' },
    ),
  ),
  fingerprint: Text(256),
  products: Type.Optional(
    Type.Array(
      Type.Object({
        productId: Type.String({ minLength: 1, maxLength: 255 }),
        name: Text(500),
        price: Type.Optional(Type.Number({ minimum: 0, maximum: 1e12 })),
        quantity: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
        category: Text(255),
      }),
      { maxItems: 1000 },
    ),
  ),
  clickId: Text(64),
  fbclid: Type.Optional(Type.String({ maxLength: 500, pattern: FBCLID_PATTERN, 'x-error-code': 'invalid_fbclid' })),
  fbc: Text(600),
  fbp: Text(256),
  ipAddress: Text(64),
  userAgent: Text(1024),
  eventSourceUrl: Text(2048),
  eventId: Text(255),
  timestamp: ClientTime,
});

const AttributedTo = Type.Object({
  clickId: Type.String(),
  fbclid: Type.String(),
  confidenceScore: Type.Integer({ minimum: 0, maximum: 100 }),
});

const ConversionResult = Type.Object({
  conversionId: Type.String(),
  eventType: Type.String(),
  attributed: Type.Boolean(),
  attributedTo: Type.Optional(AttributedTo),
  capiSent: Type.Boolean({ description: 'true only if Meta acknowledged the event before this response' }),
  timestamp: Timestamp('Event time'),
  duplicate: Type.Boolean(),
});

const Conversion = Type.Object({
  conversionId: Type.String(),
  storeId: Type.String(),
  eventType: Type.String(),
  orderId: Type.String(),
  eventId: Type.String(),
  eventValue: Type.Number(),
  currency: Type.String(),
  attributed: Type.Boolean(),
  attributedTo: Type.Optional(AttributedTo),
  ...ForwardingState,
  livemode: Type.Boolean(),
  timestamp: Timestamp('Event time'),
  createdAt: Timestamp('When the conversion was recorded'),
  products: Type.Array(
    Type.Object({
      productId: Type.String(),
      name: Type.Optional(Type.String()),
      price: Type.Optional(Type.Number()),
      quantity: Type.Integer(),
      category: Type.Optional(Type.String()),
    }),
  ),
});

const SIGNAL = Type.Enum(['explicit', 'fingerprint', 'ip_user_agent', 'identity', 'ip']);

const ExplainedConversion = Type.Object({
  ...Conversion.properties,
  attribution: Type.Object(
    {
      signal: Nullable(SIGNAL),
      score: Nullable(Type.Integer({ minimum: 0, maximum: 100 })),
      touchpoints: Type.Array(
        Type.Object({
          clickId: Type.String(),
          fbclid: Type.String(),
          signal: SIGNAL,
          score: Type.Integer({ minimum: 0, maximum: 100 }),
          clickTime: Timestamp('Click time'),
        }),
        { description: 'Every candidate click at or above the store minConfidence, strongest first' },
      ),
    },
    { description: 'Why the conversion was (or was not) attributed: the winning signal and score, and every touchpoint' },
  ),
});

const ConversionParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

const ConversionList = Type.Object({
  conversions: Type.Array(Conversion),
  hasMore: Type.Boolean(),
  nextCursor: Nullable(Type.String()),
});

export const conversionRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { database, cursors, forwarding }) => {
  // POST /v1/track/conversion — record a conversion and attribute it
  app.post(
    '/track/conversion',
    {
      config: { scope: 'conversions:write' },
      schema: {
        tags: ['Tracking'],
        summary: 'Record a conversion and attribute it to the click that caused it',
        security: bearer,
        body: ConversionBody,
        response: responses(200, ConversionResult),
      },
    },
    async (request) => ok(request, await trackConversion(database, tenantOf(request), request.body, Date.now(), forwarding)),
  );

  // GET /v1/conversions — list conversions, newest event first
  app.get(
    '/conversions',
    {
      config: { scope: 'conversions:read' },
      schema: {
        tags: ['Conversions'],
        summary: 'List conversions',
        security: bearer,
        querystring: Query({
          storeId: Type.Optional(Type.String({ maxLength: 64 })),
          eventType: Type.Optional(EVENT_TYPE),
          attributed: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])),
          capiStatus: Type.Optional(
            Type.Union([Type.Literal('pending'), Type.Literal('sent'), Type.Literal('failed'), Type.Literal('skipped')], {
              description: 'Forwarding to Meta: pending, sent, failed or skipped',
            }),
          ),
          startDate: DateQuery('Inclusive, in the store time zone (UTC without storeId)'),
          endDate: DateQuery('Inclusive, in the store time zone (UTC without storeId)'),
          ...PageQuery,
        }),
        response: responses(200, ConversionList),
      },
    },
    async (request) => {
      const auth = tenantOf(request);
      const { limit = 20, cursor, attributed, ...filters } = request.query;
      const query = { ...filters, attributed: attributed === undefined ? undefined : attributed === 'true' };
      const context = listContext('conversions', auth, query);
      const rows = await listConversionsOf(database, auth, query, { limit, after: cursors.decode(cursor, context) });
      const page = cursors.page(rows, limit, context, (r) => ({ time: r.event_time, id: r.id }), presentConversion);
      return ok(request, { conversions: page.items, hasMore: page.hasMore, nextCursor: page.nextCursor });
    },
  );

  // GET /v1/conversions/:id — one conversion
  app.get(
    '/conversions/:id',
    {
      config: { scope: 'conversions:read' },
      schema: {
        tags: ['Conversions'],
        summary: 'Get a conversion',
        security: bearer,
        params: ConversionParams,
        response: responses(200, ExplainedConversion),
      },
    },
    async (request) => ok(request, await explainedConversion(database, tenantOf(request), request.params.id)),
  );

  // POST /v1/conversions/:id/reattribute — attribute again with the clicks known now
  app.post(
    '/conversions/:id/reattribute',
    {
      config: { scope: 'conversions:write' },
      schema: {
        tags: ['Conversions'],
        summary: 'Re-attribute a conversion with the clicks known now (idempotent; a confidence-100 result never changes)',
        security: bearer,
        params: ConversionParams,
        response: responses(200, ExplainedConversion),
      },
    },
    async (request) => ok(request, await reattribute(database, tenantOf(request), request.params.id)),
  );
};
