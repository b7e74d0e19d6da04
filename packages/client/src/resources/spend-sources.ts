import type { Requester, RequestOptions } from '../request.js';
import type { SpendSource, SpendSourceKind, SpendSourceList, SpendSourceParamsOf, SpendSourceSync } from '../types.js';

/** A store's spend sources (api.md §11): each platform's daily campaign spend, pulled by a background sync. */
export class SpendSources {
  constructor(private readonly requester: Requester) {}

  /** GET /v1/stores/:id/spend-sources — every platform's source with its status (secrets never returned). */
  list(storeId: string, options?: RequestOptions): Promise<SpendSourceList> {
    return this.requester.call({ method: 'GET', path: `/stores/${encodeURIComponent(storeId)}/spend-sources` }, options);
  }

  /**
   * PUT /v1/stores/:id/spend-sources/:kind — connect one platform's accounts; a secret left out
   * keeps the stored one, or else the store's destination of that kind is used. The backfill runs
   * in the background.
   */
  put<K extends SpendSourceKind>(
    storeId: string,
    kind: K,
    params: SpendSourceParamsOf[K],
    options?: RequestOptions,
  ): Promise<SpendSource> {
    return this.requester.call(
      { method: 'PUT', path: `/stores/${encodeURIComponent(storeId)}/spend-sources/${encodeURIComponent(kind)}`, body: params },
      options,
    );
  }

  /** DELETE /v1/stores/:id/spend-sources/:kind — stop syncing (the spend already synced stays). */
  delete(storeId: string, kind: SpendSourceKind, options?: RequestOptions): Promise<SpendSource> {
    return this.requester.call(
      { method: 'DELETE', path: `/stores/${encodeURIComponent(storeId)}/spend-sources/${encodeURIComponent(kind)}` },
      options,
    );
  }

  /** POST /v1/stores/:id/spend-sources/:kind/sync — run the sync now (202; `list` shows its status). */
  sync(storeId: string, kind: SpendSourceKind, options?: RequestOptions): Promise<SpendSourceSync> {
    return this.requester.call(
      { method: 'POST', path: `/stores/${encodeURIComponent(storeId)}/spend-sources/${encodeURIComponent(kind)}/sync` },
      options,
    );
  }
}
