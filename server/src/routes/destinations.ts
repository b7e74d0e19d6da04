import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { testDestination } from '../destinations/check.js';
import { metaSettings } from '../destinations/meta/index.js';
import { ADAPTERS, DESTINATION_KINDS, type DestinationKind } from '../destinations/registry.js';
import { deleteDestination, listDestinations, putDestination, settingsSchemaOf } from '../destinations/settings.js';
import { tenantOf } from '../http/auth.js';
import { ok } from '../http/envelope.js';
import { describeResponses, EXAMPLE, ID_TOO_LONG, STORE_NOT_FOUND } from '../http/openapi.js';
import { validatorCompiler } from '../http/validation.js';
import { bearer, Nullable, type RouteDeps } from './common.js';

const KIND = Type.Enum([...DESTINATION_KINDS], { description: 'The ad platform' });

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

const Health = Type.Object(
  {
    status: Type.Union([Type.Literal('unverified'), Type.Literal('ok'), Type.Literal('failing')], {
      description:
        'unverified: no attempt recorded yet (or not configured); ok: the last attempts deliver; failing: 5 attempts in a row failed, or a job has waited longer than DESTINATION_ALERT_AFTER_S with nothing delivered meanwhile',
    }),
    lastSuccessAt: Type.Optional(Type.String({ description: 'When the platform last acknowledged an attempt' })),
    lastFailureAt: Type.Optional(Type.String({ description: 'When an attempt last failed' })),
    lastError: Type.Optional(
      Type.String({
        description: 'The last failure: whose side failed (this server’s network, or the platform with its message)',
      }),
    ),
    consecutiveFailures: Type.Integer({ description: 'Attempts in a row that failed (0 after a success)' }),
    oldestPendingAt: Type.Optional(
      Type.String({ description: 'When the oldest conversion or refund still waiting for it was queued' }),
    ),
  },
  { description: 'Whether the destination delivers (api.md §12)' },
);

const ListedDestination = Type.Object({ ...Destination.properties, health: Health });

const DestinationList = Type.Object({
  destinations: Type.Array(ListedDestination, {
    description: 'Every platform, configured or not: meta, google_ads, tiktok, microsoft, pinterest, snapchat, reddit, linkedin',
  }),
});

/** The check's kind is one Waytrack has (the document says so: an unknown one is the params' 400). */
const TestParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, description: 'The store’s id', examples: [EXAMPLE.storeId] }),
  kind: KIND,
});

const CheckAnswer = Type.Object({
  ok: Type.Boolean({ description: 'true when the platform accepted the credentials' }),
  message: Type.String({
    description:
      'What was checked and what came of it; a network failure names this server and the host, a refused credential what to renew and where',
  }),
  platformMessage: Type.Optional(Type.String({ description: 'The platform’s own message, when it answered with an error' })),
});

/**
 * What the server's validator checks of a PUT body: an object. Each kind's fields are checked by
 * its adapter's `parse` (destinations/*.ts, its own messages and `details.field`); the document
 * shows each kind's body exactly (each platform folder's settings-schema.ts), one operation per kind.
 */
const AnyObject = Type.Object({}, { additionalProperties: true });
const bodyAsObject: typeof validatorCompiler = (route) =>
  validatorCompiler(route.httpPart === 'body' ? { ...route, schema: AnyObject } : route);

const labelOf = (kind: DestinationKind) => (kind === 'meta' ? metaSettings.label : ADAPTERS[kind].label);
const operationName = (kind: string) => kind.replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase());

const Params = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, description: 'The store’s id', examples: [EXAMPLE.storeId] }),
});
const KindParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, description: 'The store’s id', examples: [EXAMPLE.storeId] }),
  kind: Type.String({
    maxLength: 32,
    description: 'meta, google_ads, tiktok, microsoft, pinterest, snapchat, reddit or linkedin',
    examples: ['google_ads'],
  }),
});

const UNVERIFIED = { status: 'unverified', consecutiveFailures: 0 };

const EXAMPLE_GOOGLE = {
  kind: 'google_ads' as const,
  configured: true,
  settings: {
    api: 'data_manager',
    customerId: '1234567890',
    loginCustomerId: null,
    conversionAction: 'customers/1234567890/conversionActions/987654321',
    oauth: { clientId: '1234-abc.apps.googleusercontent.com', clientSecretConfigured: true, refreshTokenConfigured: true },
    developerTokenConfigured: false,
  },
  updatedAt: EXAMPLE.recordedAt,
};

const EXAMPLE_CONFIGURED = {
  meta: {
    kind: 'meta',
    configured: true,
    settings: { pixelId: '1234567890', testEventCode: null, accessTokenConfigured: true },
    updatedAt: EXAMPLE.recordedAt,
  },
  tiktok: {
    kind: 'tiktok',
    configured: true,
    settings: { pixelCode: 'C4ABCDEFGH12345', testEventCode: null, accessTokenConfigured: true },
    updatedAt: EXAMPLE.recordedAt,
  },
  microsoft: {
    kind: 'microsoft',
    configured: true,
    settings: { tagId: '343210987', accessTokenConfigured: true },
    updatedAt: EXAMPLE.recordedAt,
  },
  reddit: {
    kind: 'reddit',
    configured: true,
    settings: { adAccountId: 'a2_abc123xyz', accessTokenConfigured: true },
    updatedAt: EXAMPLE.recordedAt,
  },
  linkedin: {
    kind: 'linkedin',
    configured: true,
    settings: { conversionRuleId: 'urn:lla:llaPartnerConversion:123456', accessTokenConfigured: true },
    updatedAt: EXAMPLE.recordedAt,
  },
  pinterest: {
    kind: 'pinterest',
    configured: true,
    settings: { adAccountId: '549755885175', testMode: false, accessTokenConfigured: true },
    updatedAt: EXAMPLE.recordedAt,
  },
  snapchat: {
    kind: 'snapchat',
    configured: true,
    settings: { pixelId: '5bf81ee1-15b1-4dc1-b636-d7dae49b950e', accessTokenConfigured: true },
    updatedAt: EXAMPLE.recordedAt,
  },
};

// Examples of the documented kinds; a new platform's operation is documented without them.
const EXAMPLES: Partial<Record<DestinationKind, object>> = EXAMPLE_CONFIGURED;
const field = (name: string, reason: 'invalid_format' | 'unknown_field', message: string) => ({
  code: 'invalid_request' as const,
  message,
  details: { field: name, reason },
});
const INVALID_EXAMPLES: Partial<Record<DestinationKind, typeof ID_TOO_LONG>> = {
  meta: {
    badPixelId: {
      summary: 'A pixel id that is not digits',
      ...field('pixelId', 'invalid_format', 'pixelId has an invalid format: 5–20 digits'),
    },
  },
  google_ads: {
    badCustomerId: {
      summary: 'A Google Ads customer id that is not 10 digits',
      ...field('customerId', 'invalid_format', 'customerId has an invalid format: 10 digits, without dashes'),
    },
  },
  tiktok: {
    unknownField: {
      summary: 'A field TikTok’s destination does not have',
      ...field('pixelId', 'unknown_field', 'Unknown field pixelId; this destination takes pixelCode, accessToken, testEventCode'),
    },
  },
};

export const destinationRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { database, secrets, forwarding }) => {
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
          'Where the store’s conversions are forwarded: Meta (the store’s pixelId and capiAccessToken), Google Ads, TikTok, Microsoft Advertising, Pinterest, Snapchat, Reddit and LinkedIn, each with `configured` and its settings without secrets.',
        security: bearer,
        params: Params,
        response: describeResponses(DestinationList, {
          description: 'The store’s destinations',
          examples: {
            list: {
              summary: 'Google Ads configured, Meta and TikTok not',
              data: {
                destinations: [
                  { kind: 'meta', configured: false, settings: null, updatedAt: null, health: UNVERIFIED },
                  {
                    ...EXAMPLE_GOOGLE,
                    health: { status: 'ok', lastSuccessAt: EXAMPLE.recordedAt, consecutiveFailures: 0 },
                  },
                  { kind: 'tiktok', configured: false, settings: null, updatedAt: null, health: UNVERIFIED },
                  { kind: 'microsoft', configured: false, settings: null, updatedAt: null, health: UNVERIFIED },
                  { kind: 'reddit', configured: false, settings: null, updatedAt: null, health: UNVERIFIED },
                  { kind: 'linkedin', configured: false, settings: null, updatedAt: null, health: UNVERIFIED },
                  { kind: 'pinterest', configured: false, settings: null, updatedAt: null, health: UNVERIFIED },
                  { kind: 'snapchat', configured: false, settings: null, updatedAt: null, health: UNVERIFIED },
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

  // POST /v1/stores/:id/destinations/:kind/test — check the credentials now (api.md §12)
  app.post(
    '/stores/:id/destinations/:kind/test',
    {
      config: { scope: 'stores:write' },
      schema: {
        tags: ['Stores'],
        operationId: 'testDestination',
        summary: 'Check a destination’s credentials',
        description:
          'Checks the stored credentials against the platform now, without creating a live conversion: Meta reads the pixel with the token (or sends a test event when testEventCode is set), Google exchanges the refresh token and uploads a made-up conversion with validateOnly, TikTok sends a test event with its testEventCode, Microsoft an event Microsoft refuses as invalid, Pinterest reads the ad account, Snapchat validates an event, Reddit an event with `test_mode: true`, LinkedIn reads the conversion rule (it has no test mode). Nothing is recorded. `ok: false` is an answer too (200): the message says whose side failed and what to do.',
        security: bearer,
        params: TestParams,
        response: describeResponses(CheckAnswer, {
          description: 'What the platform said',
          examples: {
            ok: {
              summary: 'Meta accepted the token',
              data: { ok: true, message: 'Meta accepted the access token for pixel 1234567890 (Shop pixel)' },
            },
            dns: {
              summary: 'This server cannot resolve the platform',
              data: {
                ok: false,
                message:
                  'This server could not resolve graph.facebook.com (ENOTFOUND): check outbound network, DNS, proxy (not an error of Meta)',
              },
            },
          },
          write: true,
          invalid: ID_TOO_LONG,
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
      ok(
        request,
        await testDestination(database, tenantOf(request), request.params.id, request.params.kind, secrets, forwarding.env),
      ),
  );

  const storeIdOf = (request: FastifyRequest) => (request.params as { id: string }).id;
  const put = (kind: string) => async (request: FastifyRequest) =>
    ok(
      request,
      await putDestination(
        database,
        tenantOf(request),
        storeIdOf(request),
        kind,
        request.body as Record<string, unknown>,
        secrets,
      ),
    );
  const remove = (kind: string) => async (request: FastifyRequest) =>
    ok(request, await deleteDestination(database, tenantOf(request), storeIdOf(request), kind, secrets));

  // PUT and DELETE /v1/stores/:id/destinations/:kind of a kind Waytrack does not have: the
  // unknown kind's error (each known kind has its own documented route below).
  const hidden = { hide: true, params: KindParams };
  app.put(
    '/stores/:id/destinations/:kind',
    { config: { scope: 'stores:write' }, validatorCompiler: bodyAsObject, schema: hidden },
    (request) => put(request.params.kind)(request),
  );
  app.delete('/stores/:id/destinations/:kind', { config: { scope: 'stores:write' }, schema: hidden }, (request) =>
    remove(request.params.kind)(request),
  );

  for (const kind of DESTINATION_KINDS) {
    const label = labelOf(kind);
    // PUT /v1/stores/:id/destinations/<kind> — configure one platform
    app.put(
      `/stores/:id/destinations/${kind}`,
      {
        config: { scope: 'stores:write' },
        validatorCompiler: bodyAsObject,
        schema: {
          tags: ['Stores'],
          operationId: `put${operationName(kind)}Destination`,
          summary: `Configure the ${label} destination`,
          description: `Sets the store’s ${label} settings (replacing them; a secret left out keeps the stored one). Secrets are sealed at rest and never returned. Conversions recorded from now on are routed to it (api.md §8). A field sent as null or "" counts as left out.`,
          security: bearer,
          params: Params,
          body: settingsSchemaOf(kind),
          response: describeResponses(Destination, {
            description: 'The destination as it is now',
            examples:
              kind === 'google_ads'
                ? { googleAds: { summary: 'Google Ads configured', data: EXAMPLE_GOOGLE } }
                : { configured: { summary: `${label} configured`, data: EXAMPLES[kind] ?? { kind, configured: true } } },
            write: true,
            json: true,
            invalid: INVALID_EXAMPLES[kind] ?? ID_TOO_LONG,
            notFound: STORE_NOT_FOUND,
          }),
        },
      },
      put(kind),
    );

    // DELETE /v1/stores/:id/destinations/<kind> — stop forwarding to one platform
    app.delete(
      `/stores/:id/destinations/${kind}`,
      {
        config: { scope: 'stores:write' },
        schema: {
          tags: ['Stores'],
          operationId: `delete${operationName(kind)}Destination`,
          summary: `Remove the ${label} destination`,
          description:
            kind === 'meta'
              ? 'Clears the store’s pixelId, capiAccessToken and capiTestEventCode. Conversions already queued for Meta fail with that reason; new ones are not forwarded to it.'
              : `Removes the store’s ${label} settings. Conversions already queued for it fail with that reason; new ones are not routed to it.`,
          security: bearer,
          params: Params,
          response: describeResponses(Destination, {
            description: 'The destination, no longer configured',
            examples: {
              removed: { summary: `${label} removed`, data: { kind, configured: false, settings: null, updatedAt: null } },
            },
            write: true,
            invalid: ID_TOO_LONG,
            notFound:
              kind === 'meta'
                ? STORE_NOT_FOUND
                : {
                    ...STORE_NOT_FOUND,
                    notConfigured: {
                      summary: 'The store has no such destination',
                      code: 'not_found',
                      message: `Store ${EXAMPLE.storeId} has no ${kind} destination`,
                    },
                  },
          }),
        },
      },
      remove(kind),
    );
  }
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
  Object.fromEntries(DESTINATION_KINDS.map((kind) => [kind, Type.Optional(ForwardingEntry)])),
  { description: 'Per destination: its delivery state; a destination that does not receive the conversion has no entry' },
);
