import { sql } from 'kysely';
import type { Reader } from '../database.js';
import type { EvidenceClick, EvidenceClicks, EvidenceLookup, EvidenceStatements } from '../engine.js';
import { preparedQuery } from '../prepared.js';

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
 * The lookups of `evidenceClicks` (db/repositories/evidence.ts) as the branches of one UNION ALL, each tagged with
 * its lookup (PostgreSQL-only SQL). Built and compiled once (db/prepared.ts): its text is the
 * same for every conversion, so it also runs as a named prepared statement. An fbclid goes
 * through its key to the click in its own partition, as `findClickByFbclid` does (db/postgres/clicks.ts); identity
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

export class PostgresEvidence implements EvidenceStatements {
  /**
   * Every lookup in one statement: there each statement is a round trip whose cost, on both
   * sides, was most of a conversion's.
   */
  async clicks(db: Reader, lookup: EvidenceLookup): Promise<EvidenceClicks> {
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
}
