import { type Page, walkPages, withItems } from '../pagination.js';
import type { Requester, RequestOptions } from '../request.js';
import type { Conversion, ConversionDetail, ConversionList, ConversionListParams } from '../types.js';

/** Recorded conversions of the key's mode (live or test). */
export class Conversions {
  constructor(private readonly requester: Requester) {}

  /** GET /v1/conversions — one page, newest event first; filters storeId, eventType, attributed, capiStatus, dates. */
  list(params: ConversionListParams = {}, options?: RequestOptions): Promise<Page<ConversionList, 'conversions'>> {
    return this.requester
      .call({ method: 'GET', path: '/conversions', query: params }, options)
      .then((page) => withItems(page as ConversionList, 'conversions'));
  }

  /** Every conversion matching the filters, page after page (`limit` sets the page size). */
  listAll(params: ConversionListParams = {}, options?: RequestOptions): AsyncGenerator<Conversion, void, undefined> {
    return walkPages(
      (cursor) => this.list({ ...params, cursor }, options),
      (page) => page.items,
      params.cursor,
    );
  }

  /** GET /v1/conversions/:id — with `attribution`: the winning signal and score, and every touchpoint. */
  retrieve(id: string, options?: RequestOptions): Promise<ConversionDetail> {
    return this.requester.call({ method: 'GET', path: `/conversions/${encodeURIComponent(id)}` }, options);
  }
}
