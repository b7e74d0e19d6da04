import { sql } from 'kysely';
import type { Reader } from '../database.js';
import { isPostgres } from '../dialect.js';
import { preparedQuery } from '../prepared.js';
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
  /** Every click found, once per lookup that found it (at least the columns attribution reads). */
  clicks: EvidenceClick[];
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
  const clicks: EvidenceClick[] = [];
  const add = (rows: Array<EvidenceClick | undefined>) => {
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

/** The columns of a click that attribution reads (the rest of its row is not fetched on PostgreSQL). */
export type EvidenceClick = Pick<
  ClicksTable,
  | 'id'
  | 'fbclid'
  | 'store_id'
  | 'livemode'
  | 'click_time'
  | 'is_bot'
  | 'fingerprint'
  | 'derived_fingerprint'
  | 'ip_address'
  | 'user_agent'
>;
const EVIDENCE_COLUMNS = sql.raw(
  'c.id, c.fbclid, c.store_id, c.livemode, c.click_time, c.is_bot, c.fingerprint, c.derived_fingerprint, c.ip_address, c.user_agent',
);

/** The values of the one-statement evidence lookup; an absent signal is null (its branch finds nothing). */
interface EvidenceValues {
  clickId?: string;
  accountId: string;
  storeId: string;
  livemode: number;
  from: number;
  to: number;
  limit: number;
  fbclid1?: string;
  fbclid2?: string;
  fingerprint?: string;
  derived1?: string;
  derived2?: string;
  ipAddress?: string;
  emailHash?: string;
  phoneHash?: string;
  before: number;
  excludeId: string;
}

/**
 * PostgreSQL: the lookups of `evidenceClicks` as the branches of one UNION ALL, each tagged with
 * its lookup (PostgreSQL-only SQL). Built and compiled once (db/prepared.ts): its text is the
 * same for every conversion, so it also runs as a named prepared statement. An fbclid goes
 * through its key to the click in its own partition, as `findClickByFbclid` does; identity
 * clicks are those of this store and mode, as `findClicksByIds` keeps them.
 */
const evidenceUnion = preparedQuery((db, v: EvidenceValues) => {
  const store = sql`c.store_id = ${v.storeId} and c.livemode = ${v.livemode}`;
  const recent = (column: 'fingerprint' | 'derived_fingerprint' | 'ip_address', value: string | undefined) => sql`
    select ${EVIDENCE_COLUMNS} from clicks c
    where ${store} and ${sql.ref(`c.${column}`)} = ${value}
      and c.click_time >= ${v.from} and c.click_time <= ${v.to} and c.is_bot = 0
    order by c.click_time desc limit ${v.limit}`;
  const byKey = (fbclid: string | undefined) => sql`
    select ${EVIDENCE_COLUMNS} from clicks c
    where (c.id, c.click_time) = (
      select k.click_id, k.click_time from click_keys k
      where k.store_id = ${v.storeId} and k.livemode = ${v.livemode} and k.fbclid = ${fbclid})`;
  const identity = (column: 'email_hash' | 'phone_hash', value: string | undefined) => sql`
    select e.attributed_click_id from conversions e
    where e.store_id = ${v.storeId} and e.livemode = ${v.livemode} and ${sql.ref(`e.${column}`)} = ${value}
      and e.event_time <= ${v.before} and e.attributed = 1 and e.id <> ${v.excludeId}
    order by e.event_time desc limit ${v.limit}`;
  const union = sql<EvidenceClick & { lookup: string }>`(
    (select 'click' as lookup, ${EVIDENCE_COLUMNS} from clicks c
      where c.id = ${v.clickId} and c.account_id = ${v.accountId} and c.livemode = ${v.livemode})
    union all (select 'fbclid', * from (${byKey(v.fbclid1)}) f1)
    union all (select 'fbclid', * from (${byKey(v.fbclid2)}) f2)
    union all (select 'fingerprint', * from (${recent('fingerprint', v.fingerprint)}) fp)
    union all (select 'derived', * from (${recent('derived_fingerprint', v.derived1)}) d1)
    union all (select 'derived', * from (${recent('derived_fingerprint', v.derived2)}) d2)
    union all (select 'identity', ${EVIDENCE_COLUMNS} from clicks c
      where ${store} and c.id in ((${identity('email_hash', v.emailHash)})
        union (${identity('phone_hash', v.phoneHash)})))
    union all (select 'ip', * from (${recent('ip_address', v.ipAddress)}) ip))`;
  // Read through `selectFrom` (a reader may only select): the union is its one source.
  return db.selectFrom(union.as('evidence')).selectAll();
});

async function evidenceInOneStatement(db: Reader, lookup: EvidenceLookup): Promise<EvidenceClicks> {
  const { scope, identity } = lookup;
  if (lookup.fbclids.length > 2 || lookup.derivedFingerprints.length > 2)
    throw new Error('at most two fbclids and two derived fingerprints');
  // Every key, in the same order, on every call: the statement is compiled once per set of keys.
  const { rows } = await evidenceUnion(db, {
    clickId: lookup.clickId,
    accountId: lookup.accountId,
    storeId: scope.storeId,
    livemode: scope.livemode,
    from: scope.from,
    to: scope.to,
    limit: lookup.limit,
    fbclid1: lookup.fbclids[0],
    fbclid2: lookup.fbclids[1],
    fingerprint: lookup.fingerprint,
    derived1: lookup.derivedFingerprints[0],
    derived2: lookup.derivedFingerprints[1],
    ipAddress: lookup.ipAddress,
    emailHash: identity.emailHash,
    phoneHash: identity.phoneHash,
    before: identity.before,
    excludeId: identity.excludeId ?? '',
  });
  const clicks: EvidenceClick[] = [];
  const identityClickIds: string[] = [];
  for (const { lookup: found, ...click } of rows) {
    clicks.push(click);
    if (found === 'identity') identityClickIds.push(click.id);
  }
  return { clicks, identityClickIds };
}
