import type { Reader, Writer } from '../database.js';
import { engineOf } from '../engine.js';
import { rowLimit } from '../row-limit.js';
import type { SpendSourcesTable } from '../schema.js';

/** Storage of spend sources (migration 0031): settings, state, and the lease of their sync job. */

export interface SourceKey {
  storeId: string;
  kind: string;
}

export async function storeSources(db: Reader, storeId: string): Promise<SpendSourcesTable[]> {
  return db.selectFrom('spend_sources').selectAll().where('store_id', '=', storeId).execute();
}

export async function findSource(db: Reader, key: SourceKey): Promise<SpendSourcesTable | undefined> {
  return db
    .selectFrom('spend_sources')
    .selectAll()
    .where('store_id', '=', key.storeId)
    .where('kind', '=', key.kind)
    .executeTakeFirst();
}

/**
 * Connects or reconfigures a source: due now, with a backfill (`synced_through` null), and any
 * lease of a run of the old settings ended (that run's result is not recorded: runs write only
 * while they hold their lease). Its state (status, last sync, last error) stays.
 */
export async function putSource(trx: Writer, row: SpendSourcesTable): Promise<void> {
  await trx
    .insertInto('spend_sources')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['store_id', 'kind']).doUpdateSet({
        settings: row.settings,
        secrets: row.secrets,
        backfill_days: row.backfill_days,
        synced_through: null,
        next_sync_at: row.next_sync_at,
        claimed_by: null,
        lease_until: null,
        updated_at: row.updated_at,
      }),
    )
    .execute();
}

export async function deleteSource(trx: Writer, key: SourceKey): Promise<boolean> {
  const result = await trx
    .deleteFrom('spend_sources')
    .where('store_id', '=', key.storeId)
    .where('kind', '=', key.kind)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** `POST …/sync`: due now (a run in progress finishes first; this one follows it). */
export async function requestSync(trx: Writer, key: SourceKey, now: number): Promise<boolean> {
  const result = await trx
    .updateTable('spend_sources')
    .set({ next_sync_at: now })
    .where('store_id', '=', key.storeId)
    .where('kind', '=', key.kind)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** When the next source falls due: a free source's next_sync_at, or a leased one's lease end. */
export async function nextSourceDueAt(db: Reader): Promise<number | undefined> {
  const free = await db
    .selectFrom('spend_sources')
    .select((eb) => eb.fn.min<number | string>('next_sync_at').as('at'))
    .where('claimed_by', 'is', null)
    .executeTakeFirst();
  const leased = await db
    .selectFrom('spend_sources')
    .select((eb) => eb.fn.min<number | string>('lease_until').as('at'))
    .where('claimed_by', 'is not', null)
    .executeTakeFirst();
  const times = [free?.at, leased?.at].filter((t) => t !== null && t !== undefined).map(Number);
  return times.length === 0 ? undefined : Math.min(...times);
}

/**
 * Leases up to `limit` due sources to `owner` until `leaseUntil`: due ones nobody holds, and those
 * whose lease ended (its instance died). The rows are chosen and locked first (SKIP LOCKED on
 * PostgreSQL, so two instances claiming at once never get the same source), then leased.
 */
export async function claimSources(
  trx: Writer,
  claim: { owner: string; now: number; leaseUntil: number; limit: number },
): Promise<SpendSourcesTable[]> {
  if (claim.limit <= 0) return [];
  const chosen = await trx
    .selectFrom('spend_sources')
    .select(['store_id', 'kind'])
    .where('next_sync_at', '<=', claim.now)
    .where((eb) => eb.or([eb('claimed_by', 'is', null), eb('lease_until', '<=', claim.now)]))
    .orderBy('next_sync_at')
    .limit(rowLimit(claim.limit))
    .$call(engineOf(trx).locks.claim)
    .execute();
  const claimed: SpendSourcesTable[] = [];
  for (const key of chosen) {
    await trx
      .updateTable('spend_sources')
      .set({ claimed_by: claim.owner, lease_until: claim.leaseUntil })
      .where('store_id', '=', key.store_id)
      .where('kind', '=', key.kind)
      .execute();
    const row = await findSource(trx, { storeId: key.store_id, kind: key.kind });
    if (row) claimed.push(row);
  }
  return claimed;
}

/** Extends `owner`'s lease; false when it holds it no more (reconfigured, removed, or taken over after it ended). */
export async function renewLease(trx: Writer, key: SourceKey, owner: string, leaseUntil: number): Promise<boolean> {
  const result = await trx
    .updateTable('spend_sources')
    .set({ lease_until: leaseUntil })
    .where('store_id', '=', key.storeId)
    .where('kind', '=', key.kind)
    .where('claimed_by', '=', owner)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** The source, locked for the rest of the transaction, when `owner` still holds its lease. */
export async function heldSource(trx: Writer, key: SourceKey, owner: string): Promise<SpendSourcesTable | undefined> {
  return trx
    .selectFrom('spend_sources')
    .selectAll()
    .where('store_id', '=', key.storeId)
    .where('kind', '=', key.kind)
    .where('claimed_by', '=', owner)
    .$call(engineOf(trx).locks.forUpdate)
    .executeTakeFirst();
}

/**
 * Ends `owner`'s run with its outcome and releases the lease. The next run falls due at
 * `nextSyncAt`, unless a sync was asked for during this run (`next_sync_at` moved since the claim:
 * that request stands).
 */
export async function finishRun(
  trx: Writer,
  held: SpendSourcesTable,
  claimedNextSyncAt: number,
  changes: Partial<
    Pick<SpendSourcesTable, 'status' | 'last_synced_at' | 'synced_through' | 'last_error' | 'consecutive_failures'>
  > & { next_sync_at: number; updated_at: number },
): Promise<void> {
  const requested = Number(held.next_sync_at) !== claimedNextSyncAt;
  await trx
    .updateTable('spend_sources')
    .set({
      ...changes,
      next_sync_at: requested ? Number(held.next_sync_at) : changes.next_sync_at,
      claimed_by: null,
      lease_until: null,
    })
    .where('store_id', '=', held.store_id)
    .where('kind', '=', held.kind)
    .execute();
}
