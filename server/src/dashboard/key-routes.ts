import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AccountError, createKey, listKeys, revokeKey } from '../accounts/accounts.js';
import { SCOPES } from '../accounts/keys.js';
import { createPublishableKey, MAX_EXTRA_ORIGINS } from '../accounts/publishable.js';
import type { Database } from '../db/database.js';
import { tenantOf } from '../http/auth.js';
import { ok } from '../http/envelope.js';
import { ApiError } from '../http/errors.js';
import { Nullable, responses, Timestamp } from '../routes/common.js';

const MODE = Type.Enum(['live', 'test']);

const KeySummary = Type.Object({
  keyId: Type.String(),
  name: Type.String(),
  mode: MODE,
  kind: Type.Enum(['secret', 'publishable'], { description: 'publishable: a browser tag key (one store, clicks only)' }),
  scopes: Type.Array(Type.String()),
  hint: Type.String({ description: 'Prefix and last 4 characters; the key itself is never shown again' }),
  storeId: Nullable(Type.String({ description: "A publishable key's store" })),
  origins: Type.Array(Type.String(), { description: "A publishable key's extra allowed origins" }),
  createdAt: Timestamp('Creation time'),
  revokedAt: Nullable(Type.String()),
  lastUsedAt: Nullable(Type.String({ description: 'When the key last authenticated a request, to the minute' })),
});

const CreateKeyBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    mode: MODE,
    scopes: Type.Optional(
      Type.Array(Type.Enum(['*', ...SCOPES]), { minItems: 1, maxItems: SCOPES.length + 1, uniqueItems: true }),
    ),
    publishable: Type.Optional(Type.Boolean({ description: 'A browser tag key: needs storeId; its one scope is clicks:write' })),
    storeId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    origins: Type.Optional(Type.Array(Type.String({ maxLength: 255 }), { maxItems: MAX_EXTRA_ORIGINS })),
  },
  { additionalProperties: false },
);

const CreatedKey = Type.Object({
  keyId: Type.String(),
  key: Type.String({ description: 'The full key: shown this once' }),
  mode: MODE,
  scopes: Type.Array(Type.String()),
  storeId: Type.Optional(Type.String()),
  origins: Type.Optional(Type.Array(Type.String())),
});

/** What the accounts module refuses, in the envelope's words: a store it cannot find, or a bad field. */
function fromAccountError(error: unknown): unknown {
  if (!(error instanceof AccountError)) return error;
  if (error.field === 'storeId') return new ApiError('store_not_found', 'No such store in this account', { field: 'storeId' });
  return new ApiError(
    'invalid_request',
    error.message,
    error.field ? { field: error.field, reason: 'invalid_format' } : undefined,
  );
}

function missing(field: string, message: string): ApiError {
  return new ApiError('missing_required_field', message, { field, reason: 'required_field_missing' });
}

/** Settings → API keys: the signed-in owner's keys, over the same functions as the CLI's `keys` commands. */
export const keyRoutes: FastifyPluginAsyncTypebox<{ database: Database }> = async (app, { database }) => {
  // GET /dashboard/api/keys — every key of the account, newest first, revoked ones included
  app.get(
    '/keys',
    {
      config: { dashboard: 'session' },
      schema: { hide: true, response: responses(200, Type.Object({ keys: Type.Array(KeySummary) })) },
    },
    async (request) => ok(request, { keys: await listKeys(database, tenantOf(request).accountId) }),
  );

  // POST /dashboard/api/keys — create a secret or publishable key; the answer is the only time it is shown in full
  app.post(
    '/keys',
    { config: { dashboard: 'session' }, schema: { hide: true, body: CreateKeyBody, response: responses(201, CreatedKey) } },
    async (request, reply) => {
      const { accountId } = tenantOf(request);
      const { publishable, storeId, origins, scopes, name, mode } = request.body;
      let created: object;
      if (publishable) {
        if (storeId === undefined) throw missing('storeId', 'A publishable key is for one store: storeId is required');
        if (scopes !== undefined && (scopes.length !== 1 || scopes[0] !== 'clicks:write')) {
          throw new ApiError('invalid_request', 'A publishable key has the clicks:write scope only', {
            field: 'scopes',
            reason: 'unknown_value',
          });
        }
        created = await createPublishableKey(database, accountId, { storeId, mode, name, origins }).catch((error: unknown) => {
          throw fromAccountError(error);
        });
      } else {
        if (scopes === undefined) throw missing('scopes', 'scopes is required: pick at least one, or * for all');
        if (storeId !== undefined || origins !== undefined) {
          throw new ApiError('invalid_request', 'storeId and origins are for publishable keys only', {
            field: storeId !== undefined ? 'storeId' : 'origins',
            reason: 'unknown_field',
          });
        }
        created = await createKey(database, { accountId, mode, scopes, name }).catch((error: unknown) => {
          throw fromAccountError(error);
        });
      }
      return reply.code(201).send(ok(request, created));
    },
  );

  // POST /dashboard/api/keys/:id/revoke — revoke a key (refused by /v1 within 2 s on every instance)
  app.post(
    '/keys/:id/revoke',
    {
      config: { dashboard: 'session' },
      schema: {
        hide: true,
        params: Type.Object({ id: Type.String({ maxLength: 64 }) }),
        response: responses(200, Type.Object({ keyId: Type.String(), revoked: Type.Literal(true) })),
      },
    },
    async (request) => {
      const keyId = request.params.id;
      // Another account's key, an unknown id and a revoked key read the same: not found.
      await revokeKey(database, keyId, tenantOf(request).accountId).catch((error: unknown) => {
        throw error instanceof AccountError ? new ApiError('not_found', `No active API key ${keyId}`) : error;
      });
      return ok(request, { keyId, revoked: true as const });
    },
  );
};
