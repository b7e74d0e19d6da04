/**
 * Which platform a click came from (api.md §12 "attributedTo names the click's platform", §11
 * channels): a click's ids by kind, as stored with the conversion credited to it
 * (`conversions.attributed_click_ids`, migration 0029), and the channel they name.
 */
import type { ClicksTable, ConversionsTable } from './db/schema.js';

/** The click ids a click may carry (api.md §8, §12), in the order a duplicate is looked up by. */
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
/** The kinds kept in `click_ids` and a column each (an fbclid has its own key: the click's `fbclid` column). */
export const OTHER_CLICK_ID_KINDS = CLICK_ID_KINDS.filter((kind) => kind !== 'fbclid') as Exclude<
  (typeof CLICK_ID_KINDS)[number],
  'fbclid'
>[];

/** The channel (§11) of each click id kind. */
export const CHANNEL_OF_KIND: Record<(typeof CLICK_ID_KINDS)[number], string> = {
  fbclid: 'meta',
  gclid: 'google_ads',
  gbraid: 'google_ads',
  wbraid: 'google_ads',
  ttclid: 'tiktok',
  msclkid: 'microsoft',
  epik: 'pinterest',
  ScCid: 'snapchat',
  rdt_cid: 'reddit',
  li_fat_id: 'linkedin',
};

/** The fbclid of a stored click, or undefined when its `fbclid` column holds another id's key. */
export function realFbclid(stored: string | null | undefined): string | undefined {
  return stored && !stored.includes(':') ? stored : undefined;
}

/** A click's ids by kind, in CLICK_ID_KINDS order: its real fbclid and each other id it carries. */
export function clickIdsOfClick(click: ClicksTable): Record<string, string> {
  const ids: Record<string, string> = {};
  const fbclid = realFbclid(click.fbclid);
  for (const kind of CLICK_ID_KINDS) {
    const value = kind === 'fbclid' ? fbclid : (click as unknown as Record<string, string | null | undefined>)[kind];
    if (value) ids[kind] = value;
  }
  // A click stored without its own column for the kind (none today) still has its key.
  if (Object.keys(ids).length === 0 && click.fbclid) Object.assign(ids, idsOfKey(click.fbclid));
  return ids;
}

/** `attributed_click_ids` of a conversion credited to `click` (null when it is credited to none). */
export function attributedClickIdsColumn(click: ClicksTable | undefined): string | null {
  return click ? JSON.stringify(clickIdsOfClick(click)) : null;
}

/** The ids a click's `fbclid` column tells: a real fbclid, or `kind:value` for a click without one. */
function idsOfKey(key: string): Record<string, string> {
  const fbclid = realFbclid(key);
  if (fbclid) return { fbclid };
  const colon = key.indexOf(':');
  return { [key.slice(0, colon)]: key.slice(colon + 1) };
}

/**
 * The credited click's ids of a stored conversion. Rows attributed before migration 0029 (the
 * column null) read them from `attributed_fbclid`, the click's dedup key: their one id that
 * key holds (a real fbclid, else the first of gclid, gbraid, wbraid, ttclid, msclkid).
 */
export function attributedClickIds(row: ConversionsTable): Record<string, string> {
  if (row.attributed_click_ids) return JSON.parse(row.attributed_click_ids) as Record<string, string>;
  return row.attributed_fbclid ? idsOfKey(row.attributed_fbclid) : {};
}

/**
 * The channel of the credited click: the platform of the click id kind the conversion named
 * explicitly (its fbclid/fbc, or a gclid, ttclid, … reference) when the click carries it, else
 * of the click's first kind in CLICK_ID_KINDS order (fbclid, gclid, gbraid, wbraid, ttclid,
 * msclkid). A click with several kinds is rare (a landing page with both an fbclid and a gclid);
 * the conversion's own reference says which ad the buyer came through.
 */
export function channelOf(row: ConversionsTable, ids: Record<string, string>): string | undefined {
  const named: string[] = [];
  if (row.ref_fbclid || row.ref_fbc) named.push('fbclid');
  if (row.ref_ids) named.push(...Object.keys(JSON.parse(row.ref_ids) as Record<string, string>));
  const kind = named.find((k) => ids[k] !== undefined) ?? Object.keys(ids).find((k) => k in CHANNEL_OF_KIND);
  return kind ? CHANNEL_OF_KIND[kind as keyof typeof CHANNEL_OF_KIND] : undefined;
}

/** `attributedTo` (api.md §2, §12) of an attributed conversion: `fbclid` only when the click has a real one. */
export function presentAttributedTo(row: ConversionsTable) {
  const clickIds = attributedClickIds(row);
  const channel = channelOf(row, clickIds);
  return {
    clickId: row.attributed_click_id ?? '',
    ...(clickIds.fbclid !== undefined && { fbclid: clickIds.fbclid }),
    clickIds,
    ...(channel !== undefined && { channel }),
    confidenceScore: row.confidence ?? 0,
  };
}

/**
 * The channel of a stored click (api.md §11 channel report): the platform of its first id kind in
 * CLICK_ID_KINDS order — the one a conversion credited to it names unless it named another of
 * the click's ids (`channelOf`). Every click carries at least one id (its `fbclid` column is its
 * dedup key), so a stored click always has a channel.
 */
export function channelOfClick(click: Pick<ClicksTable, 'fbclid'> & Partial<Record<string, unknown>>): string {
  const ids = clickIdsOfClick(click as unknown as ClicksTable);
  const kind = Object.keys(ids).find((k) => k in CHANNEL_OF_KIND);
  return kind ? CHANNEL_OF_KIND[kind as keyof typeof CHANNEL_OF_KIND] : 'meta';
}
