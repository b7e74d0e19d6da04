/**
 * The ad platforms' click ids and first-party cookies (api.md §8), as pure functions (the tag
 * reads the page URL and `document.cookie` with them; tests run them without a browser).
 * - `gclid` → `_gcl_aw` = `GCL.<seconds>.<gclid>` (Google's own format), `gbraid` → `_gcl_gb`.
 * - `wbraid`, `ttclid` → `_wt_wbraid`, `_wt_ttclid` (ours: the platforms keep none readable).
 * - `msclkid` → `_uetmsclkid` = `_uet<msclkid>` (Microsoft's UET format).
 * - `epik` → `_epik`, `ScCid` → `_scclid`, `rdt_cid` → `_rdt_cid`, `li_fat_id` → `li_fat_id`: the
 *   cookie each platform's own tag keeps its click id in, as the id itself (api.md §12).
 * - `_scid` and `_rdt_uuid`, Snapchat's and Reddit's browser ids, are their pixels' cookies: read, never invented.
 * - `_ttp`, TikTok's browser id, is TikTok's pixel's own cookie: read, never invented.
 */
export const CLICK_ID_KINDS = [
  'fbclid',
  'gclid',
  'gbraid',
  'wbraid',
  'ttclid',
  'msclkid',
  'epik',
  'ScCid',
  'rdt_cid',
  'li_fat_id',
] as const;
export type ClickIdKind = (typeof CLICK_ID_KINDS)[number];
export type ClickIds = Partial<Record<ClickIdKind, string>>;

/** What the server accepts as any click id: 1–500 of `[A-Za-z0-9_.-]`. */
export const CLICK_ID = /^[A-Za-z0-9_.-]{1,500}$/;

/** The click ids of a page's query string (malformed ones left out). */
export function clickIdsOf(search: string): ClickIds {
  const params = new URLSearchParams(search);
  const ids: ClickIds = {};
  for (const kind of CLICK_ID_KINDS) {
    const value = params.get(kind);
    if (value && CLICK_ID.test(value)) ids[kind] = value;
  }
  return ids;
}

/** Each id other than fbclid (its cookies are `_fbc`/`_fbp`, cookies.ts): cookie name and value format. */
export const ID_COOKIES: Record<
  Exclude<ClickIdKind, 'fbclid'>,
  { name: string; write(value: string, now: number): string; read(cookie: string): string | null }
> = {
  gclid: gclStyle('_gcl_aw'),
  gbraid: gclStyle('_gcl_gb'),
  wbraid: plain('_wt_wbraid'),
  ttclid: plain('_wt_ttclid'),
  msclkid: {
    name: '_uetmsclkid',
    write: (value) => `_uet${value}`,
    read: (cookie) => {
      const value = cookie.startsWith('_uet') ? cookie.slice(4) : null;
      return value && CLICK_ID.test(value) ? value : null;
    },
  },
  epik: plain('_epik'),
  ScCid: plain('_scclid'),
  rdt_cid: plain('_rdt_cid'),
  li_fat_id: plain('li_fat_id'),
};

function gclStyle(name: string) {
  return {
    name,
    write: (value: string, now: number) => `GCL.${Math.floor(now / 1000)}.${value}`,
    read: (cookie: string) => {
      const value = /^GCL\.\d+\.(.+)$/.exec(cookie)?.[1] ?? null;
      return value && CLICK_ID.test(value) ? value : null;
    },
  };
}

function plain(name: string) {
  return { name, write: (value: string) => value, read: (cookie: string) => (CLICK_ID.test(cookie) ? cookie : null) };
}

/** The key the tag remembers a sent click by: its first id (an fbclid stays the bare fbclid, as before). */
export function sentKey(ids: ClickIds): string | null {
  for (const kind of CLICK_ID_KINDS) {
    const value = ids[kind];
    if (value) return kind === 'fbclid' ? value : `${kind}:${value}`;
  }
  return null;
}
