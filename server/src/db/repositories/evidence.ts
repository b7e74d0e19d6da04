import { sql } from 'kysely';
import type { Reader } from '../database.js';
import { isPostgres } from '../dialect.js';
import type { ClicksTable } from '../schema.js';
import { type CandidateScope, findClick, findClickByFbclid, findClicksByIds, findClicksMatching } from './clicks.js';
import { identityLinkedClickIds } from './conversions.js';

/** What the clicks that may explain a conversion are looked up by (absent signals left out). */
export interface EvidenceLookup {
  accountId: string;
  /** Store, mode and the click-time bounds of the signal lookups. */
  scope: CandidateScope;
  clickId?: string;
  /** Looked up by key: each names at most one click. */
  fbclids: string[];
  fingerprint?: string;
  /** Values of the clicks' derived fingerprint (at most two: the fingerprint, the IP and user agent hash). */
  derivedFingerprints: string[];
  ipAddress?: string;
  /** Earlier attributed conversions of the store and mode sharing a hashed email or phone. */
  identity: { emailHash?: string; phoneHash?: string; before: number; excludeId?: string };
  /** Per signal value, at most this many of the most recent matching clicks. */
  limit: number;
}

export interface EvidenceClicks {
  /** Every click found, once per lookup that found it. */
  clicks: ClicksTable[];
  /** Clicks the identity-linked conversions were attributed to. */
  identityClickIds: string[];
}

/**
 * The clicks that may explain a conversion: each an index-backed lookup of one exact key (inside
 * the time bounds for the signals). On SQLite one statement per lookup (in-process, each costs
 * microseconds); on PostgreSQL every lookup in one statement (PostgreSQL-only SQL below), since
 * there each statement is a round trip whose cost, on both sides, was most of a conversion's.
 */
export async function evidenceClicks(db: Reader, lookup: EvidenceLookup): Promise<EvidenceClicks> {
  if (isPostgres(db)) return evidenceInOneStatement(db, lookup);
  const { scope, limit } = lookup;
  const clicks: ClicksTable[] = [];
  const add = (rows: Array<ClicksTable | undefined>) => {
    for (const row of rows) if (row) clicks.push(row);
  };
  if (lookup.clickId) add([await findClick(db, lookup.accountId, scope.livemode, lookup.clickId)]);
  for (const fbclid of lookup.fbclids) add([await findClickByFbclid(db, scope.storeId, scope.livemode, fbclid)]);
  if (lookup.fingerprint) add(await findClicksMatching(db, scope, 'fingerprint', lookup.fingerprint, limit));
  for (const value of lookup.derivedFingerprints) add(await findClicksMatching(db, scope, 'derived_fingerprint', value, limit));
  const identityClickIds = await identityLinkedClickIds(
    db,
    { storeId: scope.storeId, livemode: scope.livemode, before: lookup.identity.before, excludeId: lookup.identity.excludeId },
    lookup.identity,
    limit,
  );
  add(await findClicksByIds(db, scope.storeId, scope.livemode, identityClickIds));
  if (lookup.ipAddress) add(await findClicksMatching(db, scope, 'ip_address', lookup.ipAddress, limit));
  return { clicks, identityClickIds };
}

/**
 * PostgreSQL: the lookups of `evidenceClicks` as the branches of one UNION ALL, each tagged with
 * its lookup. The statement's text is the same for every conversion (an absent signal is a null
 * parameter, whose branch finds nothing), so it runs as a named prepared statement. An fbclid
 * goes through its key to the click in its own partition, as `findClickByFbclid` does; identity
 * clicks are those of this store and mode, as `findClicksByIds` keeps them.
 */
async function evidenceInOneStatement(db: Reader, lookup: EvidenceLookup): Promise<EvidenceClicks> {
  const { scope, limit } = lookup;
  const [fbclid1 = null, fbclid2 = null] = lookup.fbclids;
  const [derived1 = null, derived2 = null] = lookup.derivedFingerprints;
  if (lookup.fbclids.length > 2 || lookup.derivedFingerprints.length > 2)
    throw new Error('at most two fbclids and two derived fingerprints');
  const store = sql`c.store_id = ${scope.storeId} and c.livemode = ${scope.livemode}`;
  const recent = (column: 'fingerprint' | 'derived_fingerprint' | 'ip_address', value: string | null) => sql`
    select c.* from clicks c
    where ${store} and ${sql.ref(`c.${column}`)} = ${value}
      and c.click_time >= ${scope.from} and c.click_time <= ${scope.to} and c.is_bot = 0
    order by c.click_time desc limit ${limit}`;
  const byKey = (fbclid: string | null) => sql`
    select c.* from clicks c
    where (c.id, c.click_time) = (
      select k.click_id, k.click_time from click_keys k
      where k.store_id = ${scope.storeId} and k.livemode = ${scope.livemode} and k.fbclid = ${fbclid})`;
  const identity = (column: 'email_hash' | 'phone_hash', value: string | null) => sql`
    select v.attributed_click_id from conversions v
    where v.store_id = ${scope.storeId} and v.livemode = ${scope.livemode} and ${sql.ref(`v.${column}`)} = ${value}
      and v.event_time <= ${lookup.identity.before} and v.attributed = 1 and v.id <> ${lookup.identity.excludeId ?? ''}
    order by v.event_time desc limit ${limit}`;
  // Read through `selectFrom` (a reader may only select): the union is its one source.
  const union = sql`
    (select 'click' as lookup, c.* from clicks c
      where c.id = ${lookup.clickId ?? null} and c.account_id = ${lookup.accountId} and c.livemode = ${scope.livemode})
    union all (select 'fbclid', * from (${byKey(fbclid1)}) f1)
    union all (select 'fbclid', * from (${byKey(fbclid2)}) f2)
    union all (select 'fingerprint', * from (${recent('fingerprint', lookup.fingerprint ?? null)}) fp)
    union all (select 'derived', * from (${recent('derived_fingerprint', derived1)}) d1)
    union all (select 'derived', * from (${recent('derived_fingerprint', derived2)}) d2)
    union all (select 'identity', c.* from clicks c
      where ${store} and c.id in ((${identity('email_hash', lookup.identity.emailHash ?? null)})
        union (${identity('phone_hash', lookup.identity.phoneHash ?? null)})))
    union all (select 'ip', * from (${recent('ip_address', lookup.ipAddress ?? null)}) ip)`;
  const rows = await db.selectFrom(sql<ClicksTable & { lookup: string }>`(${union})`.as('evidence')).selectAll().execute();
  const clicks: ClicksTable[] = [];
  const identityClickIds: string[] = [];
  for (const { lookup: found, ...click } of rows) {
    clicks.push(click);
    if (found === 'identity') identityClickIds.push(click.id);
  }
  return { clicks, identityClickIds };
}
