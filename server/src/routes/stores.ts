import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { tenantOf } from '../http/auth.js';
import { ok } from '../http/envelope.js';
import { listContext, PageQuery } from '../http/pagination.js';
import { createStore, getStore, listStores, PLATFORMS, presentStore, updateStore } from '../stores/stores.js';
import { bearer, Nullable, Query, type RouteDeps, responses, Timestamp } from './common.js';

const STATUS = Type.Enum(['active', 'inactive']);
const PixelId = Type.String({
  pattern: '^\\d{5,20}$',
  description: 'Meta pixel (dataset) id, 5–20 digits',
  examples: ['123456789012345'],
});
const AccessToken = Type.String({
  minLength: 1,
  maxLength: 1024,
  writeOnly: true,
  description: 'Conversions API access token; write-only, never returned',
});
const TestEventCode = Type.String({
  pattern: '^[A-Za-z0-9_-]{1,64}$',
  description: "Meta's test_event_code, used for test-mode conversions",
  examples: ['TEST12345'],
});

const fields = {
  name: Type.String({ minLength: 1, maxLength: 200, examples: ['Acme Outdoor'] }),
  domain: Type.String({ minLength: 1, maxLength: 253, description: 'Hostname, no scheme or path', examples: ['shop.acme.com'] }),
  platform: Type.Enum([...PLATFORMS]),
  currency: Type.String({
    maxLength: 16,
    'x-error-code': 'invalid_currency',
    description: 'ISO 4217; default USD',
    examples: ['USD'],
  }),
  timezone: Type.String({ maxLength: 64, description: 'IANA time zone; default UTC', examples: ['America/New_York'] }),
  attributionWindowDays: Type.Integer({ minimum: 1, maximum: 90, description: 'Default 7' }),
  minConfidence: Type.Integer({ minimum: 0, maximum: 100, description: 'Default 50' }),
};

const CreateStoreBody = Type.Object(
  {
    name: fields.name,
    domain: fields.domain,
    platform: fields.platform,
    pixelId: Type.Optional(PixelId),
    capiAccessToken: Type.Optional(AccessToken),
    capiTestEventCode: Type.Optional(TestEventCode),
    currency: Type.Optional(fields.currency),
    timezone: Type.Optional(fields.timezone),
    attributionWindowDays: Type.Optional(fields.attributionWindowDays),
    minConfidence: Type.Optional(fields.minConfidence),
  },
  { additionalProperties: false },
);

const UpdateStoreBody = Type.Object(
  {
    name: Type.Optional(fields.name),
    domain: Type.Optional(fields.domain),
    platform: Type.Optional(fields.platform),
    pixelId: Type.Optional(Nullable(PixelId)),
    capiAccessToken: Type.Optional(Nullable(AccessToken)),
    capiTestEventCode: Type.Optional(Nullable(TestEventCode)),
    currency: Type.Optional(fields.currency),
    timezone: Type.Optional(fields.timezone),
    attributionWindowDays: Type.Optional(fields.attributionWindowDays),
    minConfidence: Type.Optional(fields.minConfidence),
    status: Type.Optional(STATUS),
  },
  { additionalProperties: false, description: 'Any subset; null clears pixelId, capiAccessToken or capiTestEventCode' },
);

const Store = Type.Object({
  id: Type.String(),
  name: Type.String(),
  domain: Type.String(),
  platform: Type.String(),
  pixelId: Nullable(Type.String()),
  status: Type.String(),
  currency: Type.String(),
  timezone: Type.String(),
  attributionWindowDays: Type.Integer(),
  minConfidence: Type.Integer(),
  capiConfigured: Type.Boolean({ description: 'pixelId and capiAccessToken are both set' }),
  capiTestEventCode: Type.Optional(Type.String()),
  createdAt: Timestamp('Creation time'),
  updatedAt: Timestamp('Last change'),
});

const StoreList = Type.Object({ stores: Type.Array(Store), hasMore: Type.Boolean(), nextCursor: Nullable(Type.String()) });
const StoreParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

export const storeRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { database, cursors, secrets }) => {
  // GET /v1/stores — list the account's stores, newest first
  app.get(
    '/stores',
    {
      config: { scope: 'stores:read' },
      schema: {
        tags: ['Stores'],
        summary: 'List stores',
        security: bearer,
        querystring: Query({ status: Type.Optional(STATUS), ...PageQuery }),
        response: responses(200, StoreList),
      },
    },
    async (request) => {
      const auth = tenantOf(request);
      const { status, limit = 20, cursor } = request.query;
      // Stores are configuration, shared by both modes: the list context ignores the mode.
      const context = listContext('stores', { ...auth, livemode: true }, { status });
      const rows = await listStores(database, auth, { status }, { limit, after: cursors.decode(cursor, context) });
      const page = cursors.page(rows, limit, context, (r) => ({ time: r.created_at, id: r.id }), presentStore);
      return ok(request, { stores: page.items, hasMore: page.hasMore, nextCursor: page.nextCursor });
    },
  );

  // GET /v1/stores/:id — one store
  app.get(
    '/stores/:id',
    {
      config: { scope: 'stores:read' },
      schema: {
        tags: ['Stores'],
        summary: 'Get a store',
        security: bearer,
        params: StoreParams,
        response: responses(200, Store),
      },
    },
    async (request) => ok(request, await getStore(database, tenantOf(request), request.params.id)),
  );

  // POST /v1/stores — create a store
  app.post(
    '/stores',
    {
      config: { scope: 'stores:write' },
      schema: {
        tags: ['Stores'],
        summary: 'Create a store',
        security: bearer,
        body: CreateStoreBody,
        response: responses(201, Store),
      },
    },
    async (request, reply) => {
      const store = await createStore(database, tenantOf(request), request.body, secrets);
      return reply.code(201).send(ok(request, store));
    },
  );

  // PATCH /v1/stores/:id — change a store (including deactivate / reactivate)
  app.patch(
    '/stores/:id',
    {
      config: { scope: 'stores:write', keepNulls: true },
      schema: {
        tags: ['Stores'],
        summary: 'Update a store',
        security: bearer,
        params: StoreParams,
        body: UpdateStoreBody,
        response: responses(200, Store),
      },
    },
    async (request) => ok(request, await updateStore(database, tenantOf(request), request.params.id, request.body, secrets)),
  );
};
