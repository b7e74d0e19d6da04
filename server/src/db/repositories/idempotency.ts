import type { Reader, Writer } from '../database.js';
import type { IdempotencyKeysTable } from '../schema.js';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** A claim whose request never finished (the process died) is abandoned after this long. */
export const ABANDONED_CLAIM_MS = 60 * 1000;

export interface IdempotencyScope {
  accountId: string;
  livemode: number;
  key: string;
}

/**
 * Claims an idempotency key for a request in flight. Returns true when this request owns it;
 * false when another request (finished or still running) already holds it. An expired record,
 * or a claim abandoned by a process that died mid-request, is replaced.
 */
export async function claimIdempotencyKey(
  db: Writer,
  scope: IdempotencyScope,
  requestHash: string,
  now: number,
): Promise<boolean> {
  await db
    .deleteFrom('idempotency_keys')
    .where('account_id', '=', scope.accountId)
    .where('livemode', '=', scope.livemode)
    .where('key', '=', scope.key)
    .where((eb) =>
      eb.or([
        eb('created_at', '<', now - IDEMPOTENCY_TTL_MS),
        eb.and([eb('status_code', 'is', null), eb('created_at', '<', now - ABANDONED_CLAIM_MS)]),
      ]),
    )
    .execute();
  const result = await db
    .insertInto('idempotency_keys')
    .values({
      account_id: scope.accountId,
      livemode: scope.livemode,
      key: scope.key,
      request_hash: requestHash,
      status_code: null,
      response: null,
      created_at: now,
    })
    .onConflict((oc) => oc.columns(['account_id', 'livemode', 'key']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

export async function findIdempotencyRecord(db: Reader, scope: IdempotencyScope): Promise<IdempotencyKeysTable | undefined> {
  return db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('account_id', '=', scope.accountId)
    .where('livemode', '=', scope.livemode)
    .where('key', '=', scope.key)
    .executeTakeFirst();
}

export async function completeIdempotencyKey(
  db: Writer,
  scope: IdempotencyScope,
  statusCode: number,
  response: string,
): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .set({ status_code: statusCode, response })
    .where('account_id', '=', scope.accountId)
    .where('livemode', '=', scope.livemode)
    .where('key', '=', scope.key)
    .execute();
}

/** Frees a key whose request failed in a way a retry may fix (5xx, 429). */
export async function releaseIdempotencyKey(db: Writer, scope: IdempotencyScope): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('account_id', '=', scope.accountId)
    .where('livemode', '=', scope.livemode)
    .where('key', '=', scope.key)
    .where('status_code', 'is', null)
    .execute();
}

export async function purgeExpiredIdempotencyKeys(db: Writer, now: number): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('created_at', '<', now - IDEMPOTENCY_TTL_MS)
    .execute();
}
