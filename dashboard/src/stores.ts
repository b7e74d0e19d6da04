import { api, query } from './api.js';
import type { Page, Store } from './types.js';

/** Every store of the account (stores are the same in both modes), newest first. */
export async function loadAllStores(): Promise<Store[]> {
  const stores: Store[] = [];
  let cursor: string | undefined;
  do {
    const page = await api.get<Page & { stores: Store[] }>(`/stores${query({ limit: 100, cursor })}`);
    stores.push(...page.stores);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return stores;
}
