import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { tenantOf } from '../http/auth.js';
import { ok } from '../http/envelope.js';
import type { ErrorReason } from '../http/errors.js';
import { describeResponses, EXAMPLE, ID_TOO_LONG, STORE_NOT_FOUND } from '../http/openapi.js';
import { validatorCompiler } from '../http/validation.js';
import { KIND_RULES, SPEND_SOURCE_KINDS, type SpendSourceKind } from '../spend/source-settings.js';
import { deleteSpendSource, listSpendSources, putSpendSource, syncSpendSourceNow } from '../spend/sources.js';
import { bearer, Nullable, type RouteDeps } from './common.js';
import { SOURCE_SCHEMAS } from './schemas/spend-sources.js';

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

const AnyObject = Type.Object({}, { additionalProperties: true });
const bodyAsObject: typeof validatorCompiler = (route) =>
  validatorCompiler(route.httpPart === 'body' ? { ...route, schema: AnyObject } : route);

const AnyKindParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  kind: Type.String({ maxLength: 32 }),
});
const operationName = (kind: string) => kind.replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase());

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
const CONNECTED: Record<SpendSourceKind, object> = {
  meta: { ...EXAMPLE_META, status: 'never', lastSyncedAt: null, syncedThrough: null },
  google_ads: {
    kind: 'google_ads',
    configured: true,
    accounts: ['1234567890'],
    status: 'never',
    lastSyncedAt: null,
    syncedThrough: null,
    settings: {
      customerIds: ['1234567890'],
      backfillDays: 30,
      loginCustomerId: '9876543210',
      developerTokenConfigured: false,
      oauth: null,
    },
  },
  tiktok: {
    kind: 'tiktok',
    configured: true,
    accounts: ['7012345678901234567'],
    status: 'never',
    lastSyncedAt: null,
    syncedThrough: null,
    settings: { advertiserIds: ['7012345678901234567'], backfillDays: 14, accessTokenConfigured: false },
  },
};
const invalidExample = (
  summary: string,
  code: 'invalid_request' | 'missing_required_field',
  field: string,
  reason: ErrorReason,
  message: string,
) => ({
  summary,
  code,
  message,
  details: { field, reason },
});
const INVALID: Record<SpendSourceKind, Record<string, ReturnType<typeof invalidExample>>> = {
  meta: {
    badAccount: invalidExample(
      'An ad account id without act_',
      'invalid_request',
      'adAccountIds[0]',
      'invalid_format',
      'adAccountIds[0] has an invalid format: an ad account id act_<digits>',
    ),
    noToken: invalidExample(
      'No token, and no Meta destination to lend one',
      'missing_required_field',
      'accessToken',
      'required_field_missing',
      'accessToken is required: the store has no capiAccessToken (meta destination) to lend its token',
    ),
  },
  google_ads: {
    noDeveloperToken: invalidExample(
      'No developer token, and no google_ads destination to lend one',
      'missing_required_field',
      'developerToken',
      'required_field_missing',
      'developerToken is required: the store’s google_ads destination has none to lend (reports need the Google Ads API)',
    ),
  },
  tiktok: {
    badAdvertiser: invalidExample(
      'An advertiser id that is not digits',
      'invalid_request',
      'advertiserIds[0]',
      'invalid_format',
      'advertiserIds[0] has an invalid format: an advertiser id of digits',
    ),
  },
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

  const put = (kind: string) => async (request: FastifyRequest) =>
    ok(
      request,
      await putSpendSource(
        database,
        tenantOf(request),
        (request.params as { id: string }).id,
        kind,
        request.body as Record<string, unknown>,
        secrets,
        wake,
      ),
    );

  // PUT /v1/stores/:id/spend-sources/:kind of a kind Waytrack does not have: the unknown kind's
  // error (each known kind has its own documented route below, with its body).
  app.put(
    '/stores/:id/spend-sources/:kind',
    { config: { scope: 'stores:write' }, validatorCompiler: bodyAsObject, schema: { hide: true, params: AnyKindParams } },
    (request) => put(request.params.kind)(request),
  );

  for (const kind of SPEND_SOURCE_KINDS) {
    const label = KIND_RULES[kind].label;
    // PUT /v1/stores/:id/spend-sources/<kind> — connect or reconfigure one (a backfill follows)
    app.put(
      `/stores/:id/spend-sources/${kind}`,
      {
        config: { scope: 'stores:write' },
        validatorCompiler: bodyAsObject,
        schema: {
          tags: ['Stores'],
          operationId: `put${operationName(kind)}SpendSource`,
          summary: `Connect the ${label} spend source`,
          description: `Sets the accounts whose ${label} campaign spend is pulled, and optionally credentials of its own (replacing the settings; a secret left out keeps the one stored with the source, else the store’s ${kind} destination lends its own — neither: 400 naming the field). The source falls due at once and backfills \`backfillDays\` days; then it re-pulls the last SPEND_RESTATE_DAYS days every SPEND_SYNC_INTERVAL_S (api.md §11).`,
          security: bearer,
          params: Params,
          body: SOURCE_SCHEMAS[kind],
          response: describeResponses(SpendSource, {
            description: 'The source as it is now',
            examples: { connected: { summary: `${label} connected`, data: CONNECTED[kind] } },
            write: true,
            json: true,
            invalid: INVALID[kind],
            notFound: STORE_NOT_FOUND,
          }),
        },
      },
      put(kind),
    );
  }

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
