import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { deleteDestination, listDestinations, putDestination } from '../destinations/settings.js';
import { tenantOf } from '../http/auth.js';
import { ok } from '../http/envelope.js';
import { describeResponses, EXAMPLE, ID_TOO_LONG, STORE_NOT_FOUND } from '../http/openapi.js';
import { bearer, Nullable, type RouteDeps } from './common.js';

const KIND = Type.Enum(['meta', 'google_ads', 'tiktok'], { description: 'The ad platform' });

const Destination = Type.Object({
  kind: KIND,
  configured: Type.Boolean({ description: 'true when the store forwards conversions to this platform' }),
  settings: Nullable(
    Type.Record(Type.String(), Type.Unknown(), {
      description: 'The settings as stored, without secrets (each secret shows as `…Configured: true`); null when not configured',
    }),
  ),
  updatedAt: Nullable(Type.String({ description: 'When the settings last changed; null when not configured' })),
});

const DestinationList = Type.Object({
  destinations: Type.Array(Destination, { description: 'Every platform, configured or not: meta, google_ads, tiktok' }),
});

/** A PUT body depends on the kind: each adapter checks its own (destinations/*.ts), with `details.field`. */
const DestinationBody = Type.Object(
  {},
  {
    additionalProperties: true,
    description: [
      'The settings of one platform (api.md §8); secrets are write-only and may be left out to keep the stored ones.',
      '- `meta`: `pixelId` (5–20 digits), `accessToken`, `testEventCode?` — the same as the store’s pixelId, capiAccessToken, capiTestEventCode.',
      '- `google_ads`: `customerId` (10 digits), `loginCustomerId?`, `conversionAction` (`customers/<id>/conversionActions/<id>`, or an object from eventType to one), `developerToken`, `oauth: {clientId, clientSecret, refreshToken}`.',
      '- `tiktok`: `pixelCode`, `accessToken`, `testEventCode?`.',
    ].join('\n'),
  },
);

const Params = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, description: 'The store’s id', examples: [EXAMPLE.storeId] }),
});
const KindParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, description: 'The store’s id', examples: [EXAMPLE.storeId] }),
  kind: Type.String({ maxLength: 32, description: 'meta, google_ads or tiktok', examples: ['google_ads'] }),
});

const EXAMPLE_GOOGLE = {
  kind: 'google_ads' as const,
  configured: true,
  settings: {
    customerId: '1234567890',
    loginCustomerId: null,
    conversionAction: 'customers/1234567890/conversionActions/987654321',
    oauth: { clientId: '1234-abc.apps.googleusercontent.com', clientSecretConfigured: true, refreshTokenConfigured: true },
    developerTokenConfigured: true,
  },
  updatedAt: EXAMPLE.recordedAt,
};

const UNKNOWN_KIND = {
  unknownKind: {
    summary: 'A platform Waytrack does not forward to',
    code: 'invalid_request' as const,
    message: 'kind must be one of meta, google_ads, tiktok',
    details: { field: 'kind', reason: 'unknown_value' as const },
  },
};

export const destinationRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { database, secrets }) => {
  // GET /v1/stores/:id/destinations — every platform's forwarding settings
  app.get(
    '/stores/:id/destinations',
    {
      config: { scope: 'stores:read' },
      schema: {
        tags: ['Stores'],
        operationId: 'listDestinations',
        summary: 'List a store’s destinations',
        description:
          'Where the store’s conversions are forwarded: Meta (the store’s pixelId and capiAccessToken), Google Ads and TikTok, each with `configured` and its settings without secrets.',
        security: bearer,
        params: Params,
        response: describeResponses(DestinationList, {
          description: 'The store’s destinations',
          examples: {
            list: {
              summary: 'Google Ads configured, Meta and TikTok not',
              data: {
                destinations: [
                  { kind: 'meta', configured: false, settings: null, updatedAt: null },
                  EXAMPLE_GOOGLE,
                  { kind: 'tiktok', configured: false, settings: null, updatedAt: null },
                ],
              },
            },
          },
          invalid: ID_TOO_LONG,
          notFound: STORE_NOT_FOUND,
        }),
      },
    },
    async (request) => ok(request, { destinations: await listDestinations(database, tenantOf(request), request.params.id) }),
  );

  // PUT /v1/stores/:id/destinations/:kind — configure one platform
  app.put(
    '/stores/:id/destinations/:kind',
    {
      config: { scope: 'stores:write' },
      schema: {
        tags: ['Stores'],
        operationId: 'putDestination',
        summary: 'Configure a destination',
        description:
          'Sets the store’s settings for one platform (replacing them; a secret left out keeps the stored one). Secrets are sealed at rest and never returned. Conversions recorded from now on are routed to it (api.md §8).',
        security: bearer,
        params: KindParams,
        body: DestinationBody,
        response: describeResponses(Destination, {
          description: 'The destination as it is now',
          examples: { googleAds: { summary: 'Google Ads configured', data: EXAMPLE_GOOGLE } },
          write: true,
          json: true,
          invalid: {
            ...UNKNOWN_KIND,
            badCustomerId: {
              summary: 'A Google Ads customer id that is not 10 digits',
              code: 'invalid_request',
              message: 'customerId has an invalid format: 10 digits, without dashes',
              details: { field: 'customerId', reason: 'invalid_format' },
            },
          },
          notFound: STORE_NOT_FOUND,
        }),
      },
    },
    async (request) =>
      ok(
        request,
        await putDestination(
          database,
          tenantOf(request),
          request.params.id,
          request.params.kind,
          request.body as Record<string, unknown>,
          secrets,
        ),
      ),
  );

  // DELETE /v1/stores/:id/destinations/:kind — stop forwarding to one platform
  app.delete(
    '/stores/:id/destinations/:kind',
    {
      config: { scope: 'stores:write' },
      schema: {
        tags: ['Stores'],
        operationId: 'deleteDestination',
        summary: 'Remove a destination',
        description:
          'Removes the store’s settings for one platform (for meta: clears pixelId, capiAccessToken and capiTestEventCode). Conversions already queued for it fail with that reason; new ones are not routed to it.',
        security: bearer,
        params: KindParams,
        response: describeResponses(Destination, {
          description: 'The destination, no longer configured',
          examples: {
            removed: { summary: 'TikTok removed', data: { kind: 'tiktok', configured: false, settings: null, updatedAt: null } },
          },
          write: true,
          invalid: UNKNOWN_KIND,
          notFound: {
            ...STORE_NOT_FOUND,
            notConfigured: {
              summary: 'The store has no such destination',
              code: 'not_found',
              message: `Store ${EXAMPLE.storeId} has no tiktok destination`,
            },
          },
        }),
      },
    },
    async (request) =>
      ok(request, await deleteDestination(database, tenantOf(request), request.params.id, request.params.kind, secrets)),
  );
};

const ForwardingEntry = Type.Object({
  status: Type.Union([Type.Literal('pending'), Type.Literal('sent'), Type.Literal('failed'), Type.Literal('skipped')]),
  attempts: Type.Integer({ description: 'Requests to the platform that carried this conversion' }),
  lastError: Type.Optional(Type.String({ description: 'The platform’s last error message' })),
  sentAt: Type.Optional(Type.String({ description: 'When the platform acknowledged it' })),
  reason: Type.Optional(
    Type.String({ description: 'Only when skipped: why (not_configured, test_event_code_missing, expired, consent_denied)' }),
  ),
  message: Type.Optional(Type.String({ description: 'Only when skipped: the reason in a sentence' })),
});

/** `forwarding` of a conversion (api.md §8): an entry per destination that receives it; `meta` is `capi`. */
export const Forwarding = Type.Object(
  {
    meta: Type.Optional(ForwardingEntry),
    google_ads: Type.Optional(ForwardingEntry),
    tiktok: Type.Optional(ForwardingEntry),
  },
  { description: 'Per destination: its delivery state; a destination that does not receive the conversion has no entry' },
);
