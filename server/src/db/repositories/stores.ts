import type { Reader, Writer } from '../database.js';
import { preparedQuery } from '../prepared.js';
import { rowLimit } from '../row-limit.js';
import type { StoresTable } from '../schema.js';
import { afterKeyset, type Page } from './keyset.js';

/** A store of this account, or undefined (unknown and foreign ids are indistinguishable). */
const storeById = preparedQuery((db, v: { storeId: string; accountId: string }) =>
  db.selectFrom('stores').selectAll().where('id', '=', v.storeId).where('account_id', '=', v.accountId),
);

export async function findStore(db: Reader, accountId: string, storeId: string): Promise<StoresTable | undefined> {
  return (await storeById(db, { storeId, accountId })).rows[0];
}

export async function insertStore(db: Writer, store: StoresTable): Promise<void> {
  await db.insertInto('stores').values(store).execute();
}

export async function updateStore(
  db: Writer,
  accountId: string,
  storeId: string,
  changes: Partial<StoresTable>,
): Promise<StoresTable | undefined> {
  await db.updateTable('stores').set(changes).where('id', '=', storeId).where('account_id', '=', accountId).execute();
  return findStore(db, accountId, storeId);
}

export async function listStores(
  db: Reader,
  accountId: string,
  filter: { status?: 'active' | 'inactive' },
  page: Page,
): Promise<StoresTable[]> {
  let query = db.selectFrom('stores').selectAll().where('account_id', '=', accountId);
  if (filter.status) query = query.where('status', '=', filter.status);
  const after = page.after;
  if (after) query = query.where((eb) => afterKeyset(eb, 'created_at', 'id', after));
  return query
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(rowLimit(page.limit + 1))
    .execute();
}
