import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { tenantOf } from '../http/auth.js';
import { ok } from '../http/envelope.js';
import { describeResponses, EXAMPLE, ID_TOO_LONG, STORE_NOT_FOUND } from '../http/openapi.js';
import { validatorCompiler } from '../http/validation.js';
import { SPEND_SOURCE_KINDS } from '../spend/source-settings.js';
import { deleteSpendSource, listSpendSources, putSpendSource, syncSpendSourceNow } from '../spend/sources.js';
import { bearer, Nullable, type RouteDeps } from './common.js';

const KIND = Type.Enum([...SPEND_SOURCE_KINDS], { description: 'The ad platform whose spend is pulled' });

const SpendSource = Type.Object({
  kind: KIND,
  configured: Type.Boolean({ description: 'true when the store pulls this platform’s spend' }),
  accounts: Type.Array(Type.String(), {
    description: 'The platform accounts pulled (Meta ad accounts, Google Ads customers, TikTok advertisers)',
  }),
  status: Type.Union([Type.Literal('never'), Type.Literal('ok'), Type.Literal('failing')], {
    description:
      'never: no sync has finished yet; ok: the last sync recorded the spend; failing: the last sync failed (lastError says why)',
  }),
  lastSyncedAt: Nullable(Type.String({ description: 'When a sync last recorded the spend' })),
  syncedThrough: Nullable(
    Type.String({ description: 'The last day (the platform account’s own) the last successful sync pulled' }),
  ),
  lastError: Type.Optional(
    Type.String({
      description:
        'Why the last sync failed: the platform’s error with its message and the credential to renew (expired token, missing permission, unknown account), or this server’s network (DNS, connect, TLS, timeout) naming the host',
    }),
  ),
  settings: Nullable(
    Type.Record(Type.String(), Type.Unknown(), {
      description: 'The settings without secrets (each own secret shows as `…Configured: true`); null when not configured',
    }),
  ),
});

const SourceList = Type.Object({
  spendSources: Type.Array(SpendSource, { description: 'Every platform: meta, google_ads, tiktok' }),
});

const Params = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, description: 'The store’s id', examples: [EXAMPLE.storeId] }),
});
const KindParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, description: 'The store’s id', examples: [EXAMPLE.storeId] }),
  kind: KIND,
});

const Token = (description: string) =>
  Type.Optional(Type.String({ minLength: 1, maxLength: 2000, description, writeOnly: true }));

/** The PUT body of every kind: the domain checks which fields the kind takes (spend/source-settings.ts). */
const SourceBody = Type.Object(
  {
    adAccountIds: Type.Optional(
      Type.Array(Type.String({ pattern: '^act_\\d{1,20}$' }), {
        description: 'meta: the ad accounts, act_<digits>',
        examples: [['act_123456789']],
      }),
    ),
    customerIds: Type.Optional(
      Type.Array(Type.String({ pattern: '^\\d{10}$' }), {
        description: 'google_ads: the customer ids, 10 digits without dashes',
      }),
    ),
    loginCustomerId: Type.Optional(
      Type.String({ pattern: '^\\d{10}$', description: 'google_ads: the manager account; default the destination’s' }),
    ),
    advertiserIds: Type.Optional(
      Type.Array(Type.String({ pattern: '^\\d{1,30}$' }), { description: 'tiktok: the advertiser ids' }),
    ),
    accessToken: Token(
      'meta, tiktok: a token of its own; left out, the one stored with the source, else the store’s destination’s',
    ),
    developerToken: Token('google_ads: the Google Ads API developer token; left out, the stored one, else the destination’s'),
    oauth: Type.Optional(
      Type.Object(
        {
          clientId: Type.String({ description: 'The OAuth client id' }),
          clientSecret: Type.Optional(Type.String({ writeOnly: true })),
          refreshToken: Type.Optional(Type.String({ writeOnly: true })),
        },
        { description: 'google_ads: an OAuth client of its own (the destination’s shape); left out, the destination’s' },
      ),
    ),
    backfillDays: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 90, description: 'Days pulled when connected (default 30)', examples: [30] }),
    ),
  },
  { additionalProperties: true, description: 'The fields of the kind; secrets are write-only and sealed at rest' },
);
const AnyObject = Type.Object({}, { additionalProperties: true });
const bodyAsObject: typeof validatorCompiler = (route) =>
  validatorCompiler(route.httpPart === 'body' ? { ...route, schema: AnyObject } : route);

const NEVER = { accounts: [], status: 'never' as const, lastSyncedAt: null, syncedThrough: null, settings: null };
const EXAMPLE_META = {
  kind: 'meta' as const,
  configured: true,
  accounts: ['act_123456789'],
  status: 'ok' as const,
  lastSyncedAt: EXAMPLE.recordedAt,
  syncedThrough: '2026-11-22',
  settings: { adAccountIds: ['act_123456789'], backfillDays: 30, accessTokenConfigured: false },
};
const NO_SOURCE = {
  ...STORE_NOT_FOUND,
  notConfigured: {
    summary: 'The store has no such spend source',
    code: 'not_found' as const,
    message: `Store ${EXAMPLE.storeId} has no meta spend source`,
  },
};

export const spendSourceRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { database, secrets, spendSync }) => {
  const wake = () => spendSync?.wake();

  // GET /v1/stores/:id/spend-sources — every platform's spend source
  app.get(
    '/stores/:id/spend-sources',
    {
      config: { scope: 'stores:read' },
      schema: {
        tags: ['Stores'],
        operationId: 'listSpendSources',
        summary: 'List a store’s spend sources',
        description: 'Where the store’s ad spend is pulled from (api.md §11): Meta, Google Ads and TikTok, each with its status.',
        security: bearer,
        params: Params,
        response: describeResponses(SourceList, {
          description: 'The store’s spend sources',
          examples: {
            list: {
              summary: 'Meta connected',
              data: {
                spendSources: [
                  EXAMPLE_META,
                  { kind: 'google_ads', configured: false, ...NEVER },
                  { kind: 'tiktok', configured: false, ...NEVER },
                ],
              },
            },
          },
          invalid: ID_TOO_LONG,
          notFound: STORE_NOT_FOUND,
        }),
      },
    },
    async (request) =>
      ok(request, { spendSources: await listSpendSources(database, tenantOf(request), request.params.id, secrets) }),
  );

  // PUT /v1/stores/:id/spend-sources/:kind — connect or reconfigure one (a backfill follows)
  app.put(
    '/stores/:id/spend-sources/:kind',
    {
      config: { scope: 'stores:write' },
      validatorCompiler: bodyAsObject,
      schema: {
        tags: ['Stores'],
        operationId: 'putSpendSource',
        summary: 'Connect a spend source',
        description:
          'Sets the source’s accounts and credentials (replacing the settings; a secret left out keeps the one stored with the source, else the store’s destination of that kind lends its own — neither: 400 naming the field). The source falls due at once and backfills `backfillDays` days; then it re-pulls the last SPEND_RESTATE_DAYS days every SPEND_SYNC_INTERVAL_S.',
        security: bearer,
        params: KindParams,
        body: SourceBody,
        response: describeResponses(SpendSource, {
          description: 'The source as it is now',
          examples: {
            connected: {
              summary: 'Meta connected with the store’s token',
              data: { ...EXAMPLE_META, status: 'never', lastSyncedAt: null, syncedThrough: null },
            },
          },
          write: true,
          json: true,
          invalid: {
            badAccount: {
              summary: 'An ad account id without act_',
              code: 'invalid_request',
              message: 'adAccountIds[0] has an invalid format: an ad account id act_<digits>',
              details: { field: 'adAccountIds[0]', reason: 'invalid_format' },
            },
            noToken: {
              summary: 'No token, and no Meta destination to lend one',
              code: 'missing_required_field',
              message: 'accessToken is required: the store has no capiAccessToken (meta destination) to lend its token',
              details: { field: 'accessToken', reason: 'required_field_missing' },
            },
          },
          notFound: STORE_NOT_FOUND,
        }),
      },
    },
    async (request) =>
      ok(
        request,
        await putSpendSource(
          database,
          tenantOf(request),
          request.params.id,
          request.params.kind,
          request.body as Record<string, unknown>,
          secrets,
          wake,
        ),
      ),
  );

  // DELETE /v1/stores/:id/spend-sources/:kind — stop pulling (the recorded spend stays)
  app.delete(
    '/stores/:id/spend-sources/:kind',
    {
      config: { scope: 'stores:write' },
      schema: {
        tags: ['Stores'],
        operationId: 'deleteSpendSource',
        summary: 'Disconnect a spend source',
        description:
          'Stops pulling the platform’s spend. The spend already recorded stays (delete nothing you may need for ROAS).',
        security: bearer,
        params: KindParams,
        response: describeResponses(SpendSource, {
          description: 'The source, no longer configured',
          examples: { removed: { summary: 'Meta disconnected', data: { kind: 'meta', configured: false, ...NEVER } } },
          write: true,
          invalid: ID_TOO_LONG,
          notFound: NO_SOURCE,
        }),
      },
    },
    async (request) => ok(request, await deleteSpendSource(database, tenantOf(request), request.params.id, request.params.kind)),
  );

  // POST /v1/stores/:id/spend-sources/:kind/sync — sync now (202: the run follows)
  app.post(
    '/stores/:id/spend-sources/:kind/sync',
    {
      config: { scope: 'stores:write' },
      schema: {
        tags: ['Stores'],
        operationId: 'syncSpendSource',
        summary: 'Sync a spend source now',
        description:
          'Makes the source due now (202): one instance runs it shortly (a run in progress finishes first). Its outcome shows in the source’s status.',
        security: bearer,
        params: KindParams,
        response: describeResponses(SpendSource, {
          status: 202,
          description: 'Accepted: the source as it is, before the run',
          examples: { accepted: { summary: 'A sync of Meta asked for', data: EXAMPLE_META } },
          write: true,
          invalid: ID_TOO_LONG,
          notFound: NO_SOURCE,
        }),
      },
    },
    async (request, reply) =>
      reply
        .code(202)
        .send(
          ok(
            request,
            await syncSpendSourceNow(database, tenantOf(request), request.params.id, request.params.kind, secrets, wake),
          ),
        ),
  );
};
