/** What every list response has besides its items (api.md §1, Pagination). */
export interface PageInfo {
  hasMore: boolean;
  nextCursor: string | null;
}

/** A list answer as the API sends it, plus `items`: its list under one name whatever the resource (api.md §6). */
export type Page<P, K extends keyof P> = P & { items: P[K] };

/** Adds `items` to a list answer (the same array the API names `stores`, `conversions`, …). */
export function withItems<P, K extends keyof P>(page: P, key: K): Page<P, K> {
  return { ...page, items: page[key] };
}

/**
 * Every item of every page, fetched lazily one page at a time: the next page is requested only
 * when the caller has consumed the current one, so breaking out of the loop stops the walk.
 */
export async function* walkPages<P extends PageInfo, T>(
  loadPage: (cursor: string | undefined) => Promise<P>,
  itemsOf: (page: P) => T[],
  firstCursor?: string,
): AsyncGenerator<T, void, undefined> {
  let cursor = firstCursor;
  for (;;) {
    const page = await loadPage(cursor);
    yield* itemsOf(page);
    // A page that says hasMore without a cursor would loop forever: the walk ends there.
    if (!page.hasMore || page.nextCursor === null) return;
    cursor = page.nextCursor;
  }
}
