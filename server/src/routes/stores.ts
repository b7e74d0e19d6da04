import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { tenantOf } from '../http/auth.js';
import { ok } from '../http/envelope.js';
import {
  CURRENCY_CODE,
  describeResponses,
  EXAMPLE,
  HOSTNAME,
  ID_TOO_LONG,
  PAGE_ERRORS,
  STORE_NOT_FOUND,
  serverRules,
} from '../http/openapi.js';
import { listContext, PageQuery } from '../http/pagination.js';
import { createStore, getStore, listStores, PLATFORMS, presentStore, updateStore } from '../stores/stores.js';
import { bearer, Nullable, Query, type RouteDeps, Timestamp } from './common.js';
import { DefaultConsentBody, DefaultConsentShown, EXAMPLE_CONSENT } from './schemas/consent.js';

const STATUS = Type.Enum(['active', 'inactive'], {
  description: 'active, or inactive: refused for tracking (store_not_found), still listed and readable',
});
const PixelId = Type.String({
  pattern: '^\\d{5,20}$',
  description: 'Meta pixel (dataset) id, 5–20 digits',
  examples: ['123456789012345'],
});
const AccessToken = Type.String({
  minLength: 1,
  maxLength: 1024,
  writeOnly: true,
  description:
    'Conversions API access token from Meta’s Events Manager; write-only: sealed at rest, never returned (see capiConfigured)',
  examples: ['EAAGm0PX4ZCpsBAKZC7dQ2vR9x0ZBwZAZBZC1mF3aLr8vN2ZAx7QeYhUj4KpZCZA'],
});
const TestEventCode = Type.String({
  pattern: '^[A-Za-z0-9_-]{1,64}$',
  description: "Meta's test_event_code, used for test-mode conversions",
  examples: ['TEST12345'],
});

const WebhookSecret = (shop: string, where: string) =>
  Type.String({
    minLength: 1,
    maxLength: 1024,
    writeOnly: true,
    description: `The secret ${shop} signs its webhooks with (${where}); POST /v1/webhooks/${shop.toLowerCase()}/{storeId} checks every delivery against it. Write-only: sealed at rest, never returned (see ${shop.toLowerCase()}WebhookConfigured)`,
    examples: [`${shop.toLowerCase()}-webhook-signing-secret`],
  });
const ShopifyWebhookSecret = WebhookSecret(
  'Shopify',
  'the custom app’s client secret, or the key shown under Settings → Notifications → Webhooks',
);
const WoocommerceWebhookSecret = WebhookSecret(
  'WooCommerce',
  'the Secret of the webhook under WooCommerce → Settings → Advanced → Webhooks',
);

const fields = {
  name: Type.String({ minLength: 1, maxLength: 200, description: 'Display name, 1–200 characters', examples: ['Acme Outdoor'] }),
  domain: Type.String({
    minLength: 1,
    maxLength: 253,
    ...HOSTNAME,
    description:
      'The shop’s hostname, without scheme or path (stored lower-case); publishable keys are accepted from pages on it and its subdomains',
    examples: ['shop.acme-outdoor.com'],
  }),
  platform: Type.Enum([...PLATFORMS], { description: 'The shop software', examples: ['shopify'] }),
  currency: Type.String({
    minLength: 1,
    maxLength: 16,
    ...CURRENCY_CODE,
    'x-error-code': 'invalid_currency',
    description: 'ISO 4217 code the store’s metrics are reported in (also accepted in lower case); default USD',
    examples: ['EUR'],
  }),
  timezone: Type.String({
    minLength: 1,
    maxLength: 64,
    ...serverRules('iana-time-zone'),
    description:
      'IANA time zone name (Europe/Berlin) whose calendar days the metrics use; default UTC. A legacy alias (US/Eastern) is refused with the name to use.',
    examples: ['Europe/Berlin'],
  }),
  attributionWindowDays: Type.Integer({
    minimum: 1,
    maximum: 90,
    description: 'How many days before a conversion a click can win it; default 7',
    examples: [7],
  }),
  minConfidence: Type.Integer({
    minimum: 0,
    maximum: 100,
    description: 'The lowest score that attributes a conversion; default 50 (100 = explicit references only)',
    examples: [50],
  }),
};

const CreateStoreBody = Type.Object(
  {
    name: fields.name,
    domain: fields.domain,
    platform: fields.platform,
    pixelId: Type.Optional(PixelId),
    capiAccessToken: Type.Optional(AccessToken),
    capiTestEventCode: Type.Optional(TestEventCode),
    shopifyWebhookSecret: Type.Optional(ShopifyWebhookSecret),
    woocommerceWebhookSecret: Type.Optional(WoocommerceWebhookSecret),
    currency: Type.Optional(fields.currency),
    timezone: Type.Optional(fields.timezone),
    attributionWindowDays: Type.Optional(fields.attributionWindowDays),
    minConfidence: Type.Optional(fields.minConfidence),
    defaultConsent: Type.Optional(DefaultConsentBody),
  },
  {
    additionalProperties: false,
    description: 'A new store. Unknown fields are refused (`unknown_field`).',
    'x-examples': {
      shopify: {
        summary: 'A Shopify store forwarding to Meta',
        value: {
          name: 'Acme Outdoor',
          domain: 'shop.acme-outdoor.com',
          platform: 'shopify',
          pixelId: '123456789012345',
          capiAccessToken: 'EAAGm0PX4ZCpsBAKZC7dQ2vR9x0ZBwZAZBZC1mF3aLr8vN2ZAx7QeYhUj4KpZCZA',
          capiTestEventCode: 'TEST12345',
          currency: 'EUR',
          timezone: 'Europe/Berlin',
          attributionWindowDays: 7,
          minConfidence: 50,
        },
      },
      minimal: {
        summary: 'The required fields only (USD, UTC, no forwarding)',
        value: { name: 'Acme Outdoor', domain: 'shop.acme-outdoor.com', platform: 'custom' },
      },
    },
  },
);

const UpdateStoreBody = Type.Object(
  {
    name: Type.Optional(fields.name),
    domain: Type.Optional(fields.domain),
    platform: Type.Optional(fields.platform),
    pixelId: Type.Optional(Nullable(PixelId)),
    capiAccessToken: Type.Optional(Nullable(AccessToken)),
    capiTestEventCode: Type.Optional(Nullable(TestEventCode)),
    shopifyWebhookSecret: Type.Optional(Nullable(ShopifyWebhookSecret)),
    woocommerceWebhookSecret: Type.Optional(Nullable(WoocommerceWebhookSecret)),
    currency: Type.Optional(fields.currency),
    timezone: Type.Optional(fields.timezone),
    attributionWindowDays: Type.Optional(fields.attributionWindowDays),
    minConfidence: Type.Optional(fields.minConfidence),
    status: Type.Optional(STATUS),
    defaultConsent: Type.Optional(Nullable(DefaultConsentBody)),
  },
  {
    additionalProperties: false,
    description:
      'Any subset; null clears pixelId, capiAccessToken, capiTestEventCode, shopifyWebhookSecret or woocommerceWebhookSecret, and sets defaultConsent back to all granted',
    'x-examples': {
      settings: { summary: 'Stricter attribution', value: { attributionWindowDays: 3, minConfidence: 70 } },
      deactivate: { summary: 'Deactivate the store', value: { status: 'inactive' } },
      stopForwarding: { summary: 'Stop forwarding to Meta', value: { capiAccessToken: null } },
    },
  },
);

const Store = Type.Object({
  id: Type.String({ description: 'The store’s id', examples: [EXAMPLE.storeId] }),
  name: Type.String({ examples: ['Acme Outdoor'] }),
  domain: Type.String({ examples: ['shop.acme-outdoor.com'] }),
  platform: Type.String({ examples: ['shopify'] }),
  pixelId: Nullable(Type.String({ description: 'Meta pixel (dataset) id' })),
  status: Type.String({ description: 'active or inactive', examples: ['active'] }),
  currency: Type.String({ description: 'ISO 4217 code of the store’s metrics', examples: ['EUR'] }),
  timezone: Type.String({ description: 'IANA time zone of the store’s calendar days', examples: ['Europe/Berlin'] }),
  attributionWindowDays: Type.Integer({ examples: [7] }),
  minConfidence: Type.Integer({ examples: [50] }),
  capiConfigured: Type.Boolean({ description: 'pixelId and capiAccessToken are both set: conversions are forwarded to Meta' }),
  capiTestEventCode: Type.Optional(Type.String({ description: 'Only when set' })),
  shopifyWebhookConfigured: Type.Boolean({
    description: 'shopifyWebhookSecret is set: POST /v1/webhooks/shopify/{storeId} accepts deliveries signed with it',
  }),
  woocommerceWebhookConfigured: Type.Boolean({
    description: 'woocommerceWebhookSecret is set: POST /v1/webhooks/woocommerce/{storeId} accepts deliveries signed with it',
  }),
  defaultConsent: DefaultConsentShown,
  createdAt: Timestamp('Creation time'),
  updatedAt: Timestamp('Last change'),
});

const StoreList = Type.Object({
  stores: Type.Array(Store, { description: 'This page, newest store first' }),
  hasMore: Type.Boolean({ description: 'true when another page follows' }),
  nextCursor: Nullable(Type.String({ description: 'Pass as `cursor` for the next page; null on the last page' })),
});
const StoreParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, description: 'The store’s id', examples: [EXAMPLE.storeId] }),
});

const EXAMPLE_STORE = {
  id: EXAMPLE.storeId,
  name: 'Acme Outdoor',
  domain: 'shop.acme-outdoor.com',
  platform: 'shopify',
  pixelId: '123456789012345',
  status: 'active',
  currency: 'EUR',
  timezone: 'Europe/Berlin',
  attributionWindowDays: 7,
  minConfidence: 50,
  capiConfigured: true,
  capiTestEventCode: 'TEST12345',
  shopifyWebhookConfigured: true,
  woocommerceWebhookConfigured: false,
  defaultConsent: EXAMPLE_CONSENT,
  createdAt: '2026-10-03T08:14:00.000Z',
  updatedAt: '2026-11-02T16:40:12.530Z',
};

const STORE_ERRORS = {
  badDomain: {
    summary: 'A URL where a hostname is expected',
    code: 'invalid_request' as const,
    message: 'domain must be a hostname like shop.example.com (no scheme or path)',
    details: { field: 'domain', reason: 'invalid_format' as const },
  },
  badCurrency: {
    summary: 'Not an ISO 4217 code',
    code: 'invalid_currency' as const,
    message: '"EURO" is not an ISO 4217 currency code',
    details: { field: 'currency', reason: 'invalid_format' as const },
  },
  unknownTimeZone: {
    summary: 'Not an IANA time zone',
    code: 'invalid_request' as const,
    message: '"Berlin" is not an IANA time zone like America/New_York',
    details: { field: 'timezone', reason: 'unknown_value' as const },
  },
  unknownField: {
    summary: 'A field stores do not have',
    code: 'invalid_request' as const,
    message: 'Unknown field attribution_window_days: did you mean attributionWindowDays?',
    details: { field: 'attribution_window_days', reason: 'unknown_field' as const, suggestion: 'attributionWindowDays' },
  },
};

const STORE_DESCRIPTION =
  'Stores are configuration: visible to both live and test keys of the account. A store forwards conversions to Meta once it has `pixelId` and `capiAccessToken` (`capiConfigured: true`); test-mode conversions only with `capiTestEventCode`.';

export const storeRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { database, cursors, secrets }) => {
  // GET /v1/stores — list the account's stores, newest first
  app.get(
    '/stores',
    {
      config: { scope: 'stores:read' },
      schema: {
        tags: ['Stores'],
        operationId: 'listStores',
        summary: 'List stores',
        description: `The account’s stores, newest first, one page at a time (\`limit\`, \`cursor\`); optionally only active or inactive ones. ${STORE_DESCRIPTION}`,
        security: bearer,
        querystring: Query({ status: Type.Optional(STATUS), ...PageQuery }),
        response: describeResponses(StoreList, {
          description: 'A page of stores',
          examples: { page: { summary: 'The only page', data: { stores: [EXAMPLE_STORE], hasMore: false, nextCursor: null } } },
          invalid: {
            ...PAGE_ERRORS,
            badStatus: {
              summary: 'A status that does not exist',
              code: 'invalid_request',
              message: 'status must be one of: active, inactive',
              details: { field: 'status', reason: 'unknown_value' },
            },
          },
        }),
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
        operationId: 'getStore',
        summary: 'Get a store',
        description: `One store of the account, active or inactive. ${STORE_DESCRIPTION}`,
        security: bearer,
        params: StoreParams,
        response: describeResponses(Store, {
          description: 'The store',
          examples: { store: { summary: 'A Shopify store forwarding to Meta', data: EXAMPLE_STORE } },
          invalid: ID_TOO_LONG,
          notFound: STORE_NOT_FOUND,
        }),
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
        operationId: 'createStore',
        summary: 'Create a store',
        description: `Creates a store of the key’s account, active, with the defaults USD, UTC, a 7-day attribution window and minConfidence 50 unless given. Not deduplicated by content: send an \`Idempotency-Key\` to make a retry safe. ${STORE_DESCRIPTION}`,
        security: bearer,
        body: CreateStoreBody,
        response: describeResponses(Store, {
          status: 201,
          description: 'The store was created',
          examples: { created: { summary: 'A new Shopify store', data: EXAMPLE_STORE } },
          write: true,
          json: true,
          invalid: {
            missingName: {
              summary: 'name absent, null or empty',
              code: 'missing_required_field',
              message: 'name is required',
              details: { field: 'name', reason: 'required_field_missing' },
            },
            badPlatform: {
              summary: 'A platform not in the list',
              code: 'invalid_request',
              message: 'platform must be one of: shopify, woocommerce, bigcommerce, magento, wix, squarespace, custom',
              details: { field: 'platform', reason: 'unknown_value' },
            },
            ...STORE_ERRORS,
          },
        }),
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
        operationId: 'updateStore',
        summary: 'Update a store (including deactivate and reactivate)',
        description: `Changes any of the store’s settings; the fields left out keep their values, and null clears pixelId, capiAccessToken, capiTestEventCode or a webhook secret. \`status: inactive\` deactivates the store (tracking answers store_not_found; its data stays readable), \`active\` reactivates it. New attributionWindowDays and minConfidence apply to conversions recorded from now on (and to re-attribution). ${STORE_DESCRIPTION}`,
        security: bearer,
        params: StoreParams,
        body: UpdateStoreBody,
        response: describeResponses(Store, {
          description: 'The store as it is now',
          examples: { updated: { summary: 'After PATCH {"minConfidence": 50}', data: EXAMPLE_STORE } },
          write: true,
          json: true,
          invalid: {
            emptyName: {
              summary: 'name sent empty',
              code: 'missing_required_field',
              message: 'name must not be empty',
              details: { field: 'name', reason: 'required_field_missing' },
            },
            ...STORE_ERRORS,
          },
          notFound: STORE_NOT_FOUND,
        }),
      },
    },
    async (request) => ok(request, await updateStore(database, tenantOf(request), request.params.id, request.body, secrets)),
  );
};
