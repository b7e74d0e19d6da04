import type { Reader, Writer } from '../database.js';
import { engineOf } from '../engine.js';
import type { DestinationHealthTable } from '../schema.js';

/** Health rows by (store, kind), as stored (api.md §12; destinations/health.ts reads them). */
export async function healthOfStore(db: Reader, storeId: string): Promise<DestinationHealthTable[]> {
  return db.selectFrom('destination_health').selectAll().where('store_id', '=', storeId).execute();
}

export interface HealthKey {
  storeId: string;
  kind: string;
  accountId: string;
}

/**
 * A successful attempt: the streak ends. Returns the row as it was before (undefined: none), read
 * under the row's lock on PostgreSQL (the upsert below then takes it over), so that exactly one of
 * several instances recording at once sees the failing → ok turn.
 */
export async function recordSuccess(db: Writer, key: HealthKey, now: number): Promise<DestinationHealthTable | undefined> {
  const before = await lockedRow(db, key);
  await db
    .insertInto('destination_health')
    .values({
      store_id: key.storeId,
      kind: key.kind,
      account_id: key.accountId,
      status: 'ok',
      consecutive_failures: 0,
      last_success_at: now,
      last_failure_at: null,
      last_error: null,
      failing_reason: null,
      failing_since: null,
      updated_at: now,
    })
    .onConflict((oc) =>
      oc.columns(['store_id', 'kind']).doUpdateSet({
        status: 'ok',
        consecutive_failures: 0,
        last_success_at: now,
        failing_reason: null,
        failing_since: null,
        updated_at: now,
      }),
    )
    .execute();
  return before;
}

/**
 * A failed attempt: one more in the streak, counted in the row itself (the upsert adds one to what
 * is stored, whichever instance recorded the previous one). Returns the row as it is now.
 */
export async function recordFailure(db: Writer, key: HealthKey, error: string, now: number): Promise<DestinationHealthTable> {
  return db
    .insertInto('destination_health')
    .values({
      store_id: key.storeId,
      kind: key.kind,
      account_id: key.accountId,
      status: 'ok',
      consecutive_failures: 1,
      last_success_at: null,
      last_failure_at: now,
      last_error: error,
      failing_reason: null,
      failing_since: null,
      updated_at: now,
    })
    .onConflict((oc) =>
      oc.columns(['store_id', 'kind']).doUpdateSet((eb) => ({
        consecutive_failures: eb('destination_health.consecutive_failures', '+', 1),
        last_failure_at: now,
        last_error: error,
        updated_at: now,
      })),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Turns a destination `failing` unless it already is; true when this call turned it (the one
 * that logs and emits the webhook). A stale turn creates the row when there is none yet.
 */
export async function markFailing(
  db: Writer,
  key: HealthKey,
  reason: 'failures' | 'stale',
  now: number,
  error?: string,
): Promise<boolean> {
  await db
    .insertInto('destination_health')
    .values({
      store_id: key.storeId,
      kind: key.kind,
      account_id: key.accountId,
      status: 'ok',
      consecutive_failures: 0,
      last_success_at: null,
      last_failure_at: null,
      last_error: error ?? null,
      failing_reason: null,
      failing_since: null,
      updated_at: now,
    })
    .onConflict((oc) => oc.columns(['store_id', 'kind']).doNothing())
    .execute();
  const turned = await db
    .updateTable('destination_health')
    .set({ status: 'failing', failing_reason: reason, failing_since: now, updated_at: now })
    .where('store_id', '=', key.storeId)
    .where('kind', '=', key.kind)
    .where('status', '!=', 'failing')
    .executeTakeFirst();
  return Number(turned.numUpdatedRows) > 0;
}

async function lockedRow(db: Writer, key: HealthKey): Promise<DestinationHealthTable | undefined> {
  const query = db.selectFrom('destination_health').selectAll().where('store_id', '=', key.storeId).where('kind', '=', key.kind);
  // PostgreSQL: FOR UPDATE (SQLite's writes are serialized already).
  return query.$call(engineOf(db).locks.forUpdate).executeTakeFirst();
}

/** Forgets a removed destination's health (a destination set up again starts unverified). */
export async function deleteHealth(db: Writer, storeId: string, kind: string): Promise<void> {
  await db.deleteFrom('destination_health').where('store_id', '=', storeId).where('kind', '=', kind).execute();
}

/**
 * When the destination's oldest pending job was queued: one seek on
 * `destination_jobs_store_pending` (store, destination, status, created_at).
 */
export async function oldestPendingAt(db: Reader, storeId: string, kind: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('destination_jobs')
    .select('created_at')
    .where('store_id', '=', storeId)
    .where('destination', '=', kind)
    .where('status', '=', 'pending')
    .orderBy('created_at')
    .limit(1)
    .executeTakeFirst();
  return row ? Number(row.created_at) : undefined;
}

/** The destinations configured anywhere (the stale check's list): Meta's from the stores, the others' rows. */
export async function configuredDestinations(db: Reader): Promise<HealthKey[]> {
  const meta = await db
    .selectFrom('stores')
    .select(['id', 'account_id'])
    .where('capi_access_token', 'is not', null)
    .where('pixel_id', 'is not', null)
    .execute();
  const others = await db
    .selectFrom('store_destinations')
    .innerJoin('stores', 'stores.id', 'store_destinations.store_id')
    .select(['store_destinations.store_id', 'store_destinations.kind', 'stores.account_id'])
    .execute();
  return [
    ...meta.map((s) => ({ storeId: s.id, kind: 'meta', accountId: s.account_id })),
    ...others.map((o) => ({ storeId: o.store_id, kind: o.kind, accountId: o.account_id })),
  ];
}
