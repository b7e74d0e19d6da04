import { type Page, walkPages, withItems } from '../pagination.js';
import type { Requester, RequestOptions } from '../request.js';
import type { AdSpendEntry, AdSpendList, AdSpendListParams, AdSpendUpsertParams, AdSpendUpsertResult } from '../types.js';

/** Daily ad spend of a store, for ROAS; separated by mode like every event. */
export class AdSpend {
  constructor(private readonly requester: Requester) {}

  /** POST /v1/stores/:id/ad-spend — each entry replaces the one with the same date, platform and campaignId. */
  upsert(storeId: string, params: AdSpendUpsertParams, options?: RequestOptions): Promise<AdSpendUpsertResult> {
    return this.requester.call(
      { method: 'POST', path: `/stores/${encodeURIComponent(storeId)}/ad-spend`, body: params },
      options,
    );
  }

  /** GET /v1/stores/:id/ad-spend — one page, newest day first. */
  list(storeId: string, params: AdSpendListParams = {}, options?: RequestOptions): Promise<Page<AdSpendList, 'entries'>> {
    return this.requester
      .call({ method: 'GET', path: `/stores/${encodeURIComponent(storeId)}/ad-spend`, query: params }, options)
      .then((page) => withItems(page as AdSpendList, 'entries'));
  }

  /** Every entry in the range, page after page. */
  listAll(
    storeId: string,
    params: AdSpendListParams = {},
    options?: RequestOptions,
  ): AsyncGenerator<AdSpendEntry, void, undefined> {
    return walkPages(
      (cursor) => this.list(storeId, { ...params, cursor }, options),
      (page) => page.items,
      params.cursor,
    );
  }
}
