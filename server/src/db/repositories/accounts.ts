import type { Reader, Writer } from '../database.js';
import type { AccountsTable, ApiKeysTable } from '../schema.js';

export async function insertAccount(db: Writer, account: AccountsTable): Promise<void> {
  await db.insertInto('accounts').values(account).execute();
}

export async function findAccountByEmail(db: Reader, email: string): Promise<AccountsTable | undefined> {
  return db.selectFrom('accounts').selectAll().where('email', '=', email).executeTakeFirst();
}

export async function findAccount(db: Reader, id: string): Promise<AccountsTable | undefined> {
  return db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Every account, oldest first (the operator's `waytrack account list`). */
export async function listAccounts(db: Reader): Promise<AccountsTable[]> {
  return db.selectFrom('accounts').selectAll().orderBy('created_at', 'asc').orderBy('id', 'asc').execute();
}

export async function countAccounts(db: Reader): Promise<number> {
  const row = await db
    .selectFrom('accounts')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertApiKey(db: Writer, key: ApiKeysTable): Promise<void> {
  await db.insertInto('api_keys').values(key).execute();
}

export async function findApiKeyByHash(db: Reader, keyHash: string): Promise<ApiKeysTable | undefined> {
  return db.selectFrom('api_keys').selectAll().where('key_hash', '=', keyHash).executeTakeFirst();
}

export async function listApiKeys(db: Reader, accountId: string): Promise<ApiKeysTable[]> {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/**
 * Marks a key revoked; returns false when the id is unknown, it was already revoked, or (with
 * `accountId`) it belongs to another account.
 */
export async function revokeApiKey(db: Writer, keyId: string, now: number, accountId?: string): Promise<boolean> {
  let update = db.updateTable('api_keys').set({ revoked_at: now }).where('id', '=', keyId).where('revoked_at', 'is', null);
  if (accountId !== undefined) update = update.where('account_id', '=', accountId);
  const result = await update.executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Records that a key authenticated a request at `now` (never moves the time backwards). */
export async function markApiKeyUsed(db: Writer, keyId: string, now: number): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ last_used_at: now })
    .where('id', '=', keyId)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', now)]))
    .execute();
}

/** Returns false when there is no such account. */
export async function setAccountPassword(db: Writer, accountId: string, passwordHash: string): Promise<boolean> {
  const result = await db
    .updateTable('accounts')
    .set({ password_hash: passwordHash })
    .where('id', '=', accountId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** The account a store belongs to, whatever account asks (the operator's CLI names a store alone). */
export async function findStoreAccount(db: Reader, storeId: string): Promise<string | undefined> {
  const row = await db.selectFrom('stores').select('account_id').where('id', '=', storeId).executeTakeFirst();
  return row?.account_id;
}
