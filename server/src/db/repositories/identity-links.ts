import type { Reader, Writer } from '../database.js';
import type { LinkedBrowser } from '../engine.js';
import { preparedQuery } from '../prepared.js';
import type { IdentityLinksTable } from '../schema.js';

/**
 * Identity links (migration 0026, POST /v1/track/identify): a hashed email or phone linked to a
 * browser. An absent browser id is stored as '' (the primary key holds every id) and read as null.
 */

/**
 * Records links, each once per (store, mode, kind, hash, browser): one sent again only moves its
 * `seen_at`. Returns how many were new.
 */
export async function recordIdentityLinks(db: Writer, rows: IdentityLinksTable[]): Promise<number> {
  let created = 0;
  for (const row of rows) {
    const inserted = await db
      .insertInto('identity_links')
      .values(row)
      .onConflict((oc) => oc.columns(['store_id', 'livemode', 'kind', 'hash', 'visitor_id', 'fbp', 'ttp']).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) > 0) {
      created++;
      continue;
    }
    await db
      .updateTable('identity_links')
      .set({ seen_at: row.seen_at })
      .where('store_id', '=', row.store_id)
      .where('livemode', '=', row.livemode)
      .where('kind', '=', row.kind)
      .where('hash', '=', row.hash)
      .where('visitor_id', '=', row.visitor_id)
      .where('fbp', '=', row.fbp)
      .where('ttp', '=', row.ttp)
      .where('seen_at', '<', row.seen_at)
      .execute();
  }
  return created;
}

/** Built once (prepared.ts): every conversion with an email or phone reads it. */
const linksOf = preparedQuery(
  (db, v: { storeId: string; livemode: number; kind: IdentityLinksTable['kind']; hash: string; limit: number }) =>
    db
      .selectFrom('identity_links')
      .select(['visitor_id', 'fbp', 'ttp', 'seen_at'])
      .where('store_id', '=', v.storeId)
      .where('livemode', '=', v.livemode)
      .where('kind', '=', v.kind)
      .where('hash', '=', v.hash)
      .orderBy('seen_at', 'desc')
      .limit(v.limit),
);

/**
 * The browsers most recently linked to a hashed email or phone (at most `limit`, newest first
 * over both): per hash one range of `identity_links_recent`, read newest first.
 */
export async function identifiedBrowsers(
  db: Reader,
  scope: { storeId: string; livemode: number },
  hashes: { emailHash?: string; phoneHash?: string },
  limit: number,
): Promise<LinkedBrowser[]> {
  const found: Array<LinkedBrowser & { seen: number }> = [];
  for (const [kind, hash] of [
    ['email', hashes.emailHash],
    ['phone', hashes.phoneHash],
  ] as const) {
    if (!hash) continue;
    const { rows } = await linksOf(db, { storeId: scope.storeId, livemode: scope.livemode, kind, hash, limit });
    for (const row of rows) {
      found.push({ visitorId: row.visitor_id || null, fbp: row.fbp || null, ttp: row.ttp || null, seen: Number(row.seen_at) });
    }
  }
  return found
    .sort((a, b) => b.seen - a.seen)
    .slice(0, limit)
    .map(({ visitorId, fbp, ttp }) => ({ visitorId, fbp, ttp }));
}

/**
 * Deletes up to `limit` links last seen before `before` (RETENTION_DAYS, retention.ts): a link is
 * personal data, kept no longer than the events. Returns how many were deleted.
 */
export async function deleteIdentityLinksSeenBefore(db: Writer, before: number, limit: number): Promise<number> {
  const rows = await db
    .selectFrom('identity_links')
    .select(['store_id', 'livemode', 'kind', 'hash', 'visitor_id', 'fbp', 'ttp'])
    .where('seen_at', '<', before)
    .limit(limit)
    .execute();
  for (const row of rows) {
    await db
      .deleteFrom('identity_links')
      .where('store_id', '=', row.store_id)
      .where('livemode', '=', row.livemode)
      .where('kind', '=', row.kind)
      .where('hash', '=', row.hash)
      .where('visitor_id', '=', row.visitor_id)
      .where('fbp', '=', row.fbp)
      .where('ttp', '=', row.ttp)
      .where('seen_at', '<', before)
      .execute();
  }
  return rows.length;
}
