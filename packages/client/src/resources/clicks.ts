import { type Page, walkPages, withItems } from '../pagination.js';
import type { Requester, RequestOptions } from '../request.js';
import type { Click, ClickList, ClickListParams } from '../types.js';

/** Recorded clicks of the key's mode (live or test). */
export class Clicks {
  constructor(private readonly requester: Requester) {}

  /** GET /v1/clicks — one page, newest first; filter storeId. */
  list(params: ClickListParams = {}, options?: RequestOptions): Promise<Page<ClickList, 'clicks'>> {
    return this.requester
      .call({ method: 'GET', path: '/clicks', query: params }, options)
      .then((page) => withItems(page as ClickList, 'clicks'));
  }

  /** Every click matching the filter, page after page (`limit` sets the page size). */
  listAll(params: ClickListParams = {}, options?: RequestOptions): AsyncGenerator<Click, void, undefined> {
    return walkPages(
      (cursor) => this.list({ ...params, cursor }, options),
      (page) => page.items,
      params.cursor,
    );
  }

  /** GET /v1/clicks/:id */
  retrieve(id: string, options?: RequestOptions): Promise<Click> {
    return this.requester.call({ method: 'GET', path: `/clicks/${encodeURIComponent(id)}` }, options);
  }
}
