import type { Reader } from '../db/database.js';
import { findStore } from '../db/repositories/stores.js';
import type { StoresTable } from '../db/schema.js';
import { ApiError } from '../http/errors.js';
import type { Tenant } from '../tenancy.js';

function notFound(storeId: string): ApiError {
  return new ApiError('store_not_found', `No store ${storeId}`, { field: 'storeId' });
}

/** A store of the tenant's account; unknown and foreign ids give the same error. */
export async function requireStore(db: Reader, tenant: Tenant, storeId: string): Promise<StoresTable> {
  const store = await findStore(db, tenant.accountId, storeId);
  if (!store) throw notFound(storeId);
  return store;
}

/** A store that accepts tracking: an inactive store is not found here. */
export async function requireActiveStore(db: Reader, tenant: Tenant, storeId: string): Promise<StoresTable> {
  const store = await requireStore(db, tenant, storeId);
  if (store.status !== 'active') throw notFound(storeId);
  return store;
}
