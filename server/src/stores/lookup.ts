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

/**
 * Active stores found lately, per database: a click names its store, and under load the same
 * few stores thousands of times a second. An entry lives as long as a cached API key
 * (`KEY_CACHE_TTL_MS`): a store made inactive stops taking clicks on this instance at once
 * (`forgetStore`) and on the others within that time, as a revoked key does.
 */
const STORE_CACHE_TTL_MS = 2_000;
const activeStores = new WeakMap<Reader, Map<string, { store: StoresTable; expires: number }>>();

function storeCacheOf(db: Reader): Map<string, { store: StoresTable; expires: number }> {
  let cache = activeStores.get(db);
  if (!cache) {
    cache = new Map();
    activeStores.set(db, cache);
  }
  return cache;
}

/**
 * `requireActiveStore` through the cache above: for the click path (which reads only the store's
 * id) and the conversion path (its settings: a change made on this instance applies at once, one
 * made on another within the TTL, as a store made inactive does). Read-only: the row is shared.
 */
export async function requireActiveStoreCached(
  db: Reader,
  tenant: Tenant,
  storeId: string,
  now = Date.now(),
): Promise<StoresTable> {
  const cache = storeCacheOf(db);
  const key = `${tenant.accountId}/${storeId}`;
  const hit = cache.get(key);
  if (hit && hit.expires > now) return hit.store;
  const store = await requireActiveStore(db, tenant, storeId);
  if (cache.size >= 10_000) cache.clear();
  cache.set(key, { store, expires: now + STORE_CACHE_TTL_MS });
  return store;
}

/** Drops a store from this instance's cache (its status or settings changed). */
export function forgetStore(db: Reader, accountId: string, storeId: string): void {
  activeStores.get(db)?.delete(`${accountId}/${storeId}`);
}

/** A store that accepts tracking: an inactive store is not found here. */
export async function requireActiveStore(db: Reader, tenant: Tenant, storeId: string): Promise<StoresTable> {
  const store = await requireStore(db, tenant, storeId);
  if (store.status !== 'active') throw notFound(storeId);
  return store;
}
