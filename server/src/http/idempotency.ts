import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Database } from '../db/database.js';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  findIdempotencyRecord,
  type IdempotencyScope,
  releaseIdempotencyKey,
} from '../db/repositories/idempotency.js';
import { ApiError, invalid } from './errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    idempotency?: IdempotencyScope;
  }
  interface FastifyContextConfig {
    /**
     * Fields of the answer's `data` that hold a secret shown once (a webhook's `secret`): the
     * answer kept for replays has each set to null and `<field>Redacted: true` beside it.
     */
    shownOnce?: readonly string[];
  }
}

/**
 * Secrets by their look (api.md §1: keys `wt_live_`/`wt_test_`, publishable `wt_pk_…`; webhook
 * secrets `whsec_`), replaced in a kept answer whatever route it came from: a route that answers
 * with a secret and forgets `shownOnce` still keeps none.
 */
const SECRET_LOOK = /\b(?:wt_(?:pk_)?(?:live|test)_[0-9A-Za-z]{32,128}|whsec_[A-Za-z0-9+/]{32,}={0,2})/g;
export const REDACTED = '[redacted]';

/**
 * The answer as kept for replays: no secret in clear (the idempotency table is in the WAL and in
 * every backup, and a replay may come from anyone holding the Idempotency-Key). Each `shownOnce`
 * field is null with `<field>Redacted: true`; anything else that looks like a secret is replaced.
 */
export function answerToKeep(payload: string, shownOnce: readonly string[] = []): string {
  let text = payload;
  if (shownOnce.length > 0) {
    try {
      const answer = JSON.parse(payload) as { data?: Record<string, unknown> };
      const data = answer.data;
      if (data && typeof data === 'object') {
        for (const field of shownOnce) {
          if (data[field] === undefined || data[field] === null) continue;
          data[field] = null;
          data[`${field}Redacted`] = true;
        }
        text = JSON.stringify(answer);
      }
    } catch {
      // Not JSON (it never is on these routes): the look-based pass below still applies.
    }
  }
  return text.replace(SECRET_LOOK, REDACTED);
}

const WAIT_FOR_FIRST_MS = 10_000;
const POLL_MS = 25;

function requestHash(request: FastifyRequest): string {
  return createHash('sha256')
    .update(`${request.method} ${request.url}\n${JSON.stringify(request.body ?? null)}`)
    .digest('hex');
}

/**
 * `Idempotency-Key` on POST/PATCH (api.md §1): the first request with a key runs and its
 * response is stored; the same key and body within 24 h replays it; a different body is an
 * error. A retry that arrives while the first is still running waits for its result.
 */
export function idempotency(database: Database) {
  async function preHandler(request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const header = request.headers['idempotency-key'];
    if (header === undefined || (request.method !== 'POST' && request.method !== 'PATCH') || !request.auth) return;
    const key = Array.isArray(header) ? (header[0] ?? '') : header;
    if (key.length === 0 || key.length > 255) {
      throw invalid('Idempotency-Key', 'out_of_range', 'The Idempotency-Key header must be 1–255 characters');
    }
    const scope = { accountId: request.auth.accountId, livemode: request.auth.livemode ? 1 : 0, key };
    const hash = requestHash(request);
    const deadline = Date.now() + WAIT_FOR_FIRST_MS;
    for (;;) {
      if (await database.write((trx) => claimIdempotencyKey(trx, scope, hash, Date.now()))) {
        request.idempotency = scope;
        return;
      }
      const record = await findIdempotencyRecord(database.read, scope);
      if (record && record.request_hash !== hash) {
        throw invalid('Idempotency-Key', 'idempotency_key_reused', 'This Idempotency-Key was used with a different request');
      }
      if (record && record.status_code !== null && record.response !== null) {
        const stored = JSON.parse(record.response) as { meta?: { requestId?: string } };
        if (stored.meta) stored.meta.requestId = request.id;
        return reply.code(record.status_code).header('Idempotent-Replayed', 'true').send(stored);
      }
      if (Date.now() > deadline) {
        throw new ApiError('invalid_request', 'A request with this Idempotency-Key is still in progress; retry later', {
          field: 'Idempotency-Key',
          reason: 'idempotency_key_in_use',
        });
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }

  async function onSend(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
    const scope = request.idempotency;
    if (!scope) return payload;
    request.idempotency = undefined;
    const status = reply.statusCode;
    // Failures a retry may fix are not remembered: the key is freed for the retry.
    if (status >= 500 || status === 429) await database.write((trx) => releaseIdempotencyKey(trx, scope));
    else {
      const kept = answerToKeep(String(payload), request.routeOptions.config.shownOnce);
      await database.write((trx) => completeIdempotencyKey(trx, scope, status, kept));
    }
    return payload;
  }

  return { preHandler, onSend };
}
