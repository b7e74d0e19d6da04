import { type Page, walkPages, withItems } from '../pagination.js';
import type { Requester, RequestOptions } from '../request.js';
import type {
  Destination,
  DestinationKind,
  DestinationList,
  DestinationParams,
  DestinationTestResult,
  Store,
  StoreCreateParams,
  StoreList,
  StoreListParams,
  StoreUpdateParams,
} from '../types.js';
import { SpendSources } from './spend-sources.js';

/** A store's destinations (api.md §8): `wt.stores.destinations.put(storeId, 'tiktok', {...})`. */
export class Destinations {
  constructor(private readonly requester: Requester) {}

  /** GET /v1/stores/:id/destinations — every platform, configured or not (secrets never returned). */
  list(storeId: string, options?: RequestOptions): Promise<DestinationList> {
    return this.requester.call({ method: 'GET', path: `/stores/${encodeURIComponent(storeId)}/destinations` }, options);
  }

  /** PUT /v1/stores/:id/destinations/:kind — configure one platform (a secret left out keeps the stored one). */
  put(storeId: string, kind: DestinationKind, params: DestinationParams, options?: RequestOptions): Promise<Destination> {
    return this.requester.call(
      { method: 'PUT', path: `/stores/${encodeURIComponent(storeId)}/destinations/${encodeURIComponent(kind)}`, body: params },
      options,
    );
  }

  /**
   * POST /v1/stores/:id/destinations/:kind/test — checks the stored credentials against the
   * platform now, without a live conversion (api.md §12). `ok: false` is an answer, not an error:
   * its message says whose side failed (this server's network, or the credential to renew).
   */
  test(storeId: string, kind: DestinationKind, options?: RequestOptions): Promise<DestinationTestResult> {
    return this.requester.call(
      { method: 'POST', path: `/stores/${encodeURIComponent(storeId)}/destinations/${encodeURIComponent(kind)}/test` },
      options,
    );
  }

  /** DELETE /v1/stores/:id/destinations/:kind — stop forwarding to one platform. */
  delete(storeId: string, kind: DestinationKind, options?: RequestOptions): Promise<Destination> {
    return this.requester.call(
      { method: 'DELETE', path: `/stores/${encodeURIComponent(storeId)}/destinations/${encodeURIComponent(kind)}` },
      options,
    );
  }
}

/** The account's stores (configuration: visible with live and test keys alike). */
export class Stores {
  readonly destinations: Destinations;
  readonly spendSources: SpendSources;

  constructor(private readonly requester: Requester) {
    this.destinations = new Destinations(requester);
    this.spendSources = new SpendSources(requester);
  }

  /** GET /v1/stores — one page, newest first. */
  list(params: StoreListParams = {}, options?: RequestOptions): Promise<Page<StoreList, 'stores'>> {
    return this.requester
      .call({ method: 'GET', path: '/stores', query: params }, options)
      .then((page) => withItems(page as StoreList, 'stores'));
  }

  /** Every store, page after page (`limit` sets the page size). */
  listAll(params: StoreListParams = {}, options?: RequestOptions): AsyncGenerator<Store, void, undefined> {
    return walkPages(
      (cursor) => this.list({ ...params, cursor }, options),
      (page) => page.items,
      params.cursor,
    );
  }

  /** POST /v1/stores — create a store (the answer is the store). */
  create(params: StoreCreateParams, options?: RequestOptions): Promise<Store> {
    return this.requester.call({ method: 'POST', path: '/stores', body: params }, options);
  }

  /** GET /v1/stores/:id */
  retrieve(id: string, options?: RequestOptions): Promise<Store> {
    return this.requester.call({ method: 'GET', path: `/stores/${encodeURIComponent(id)}` }, options);
  }

  /** PATCH /v1/stores/:id — any subset of fields; `status: 'inactive'` deactivates, null clears pixelId and the CAPI settings. */
  update(id: string, params: StoreUpdateParams, options?: RequestOptions): Promise<Store> {
    return this.requester.call({ method: 'PATCH', path: `/stores/${encodeURIComponent(id)}`, body: params }, options);
  }
}
