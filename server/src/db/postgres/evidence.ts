import { sql } from 'kysely';
import type { Reader } from '../database.js';
import type { EvidenceClick, EvidenceClicks, EvidenceLookup, EvidenceStatements } from '../engine.js';
import { preparedQuery } from '../prepared.js';

/** The values of the evidence function; an absent signal is null (its branch finds nothing). */
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
  after: number;
  before: number;
  excludeId: string;
}

/**
 * The lookups of `evidenceClicks` (db/repositories/evidence.ts), each bounded by the window, as
 * the branches of one UNION ALL in the function `waytrack_evidence_clicks` (migration 0021, in
 * db/postgres/migrations.ts): there its plan is generic, made once per connection and pruned to
 * the window's months when it runs. A statement would be planned again for every conversion.
 * Built and compiled once (db/prepared.ts), so the call also runs as a named prepared statement.
 */
const evidenceCall = preparedQuery((db, v: EvidenceValues) => {
  const call = sql<EvidenceClick & { lookup: string }>`waytrack_evidence_clicks(
    _click_id => ${v.clickId}, _account_id => ${v.accountId}, _store_id => ${v.storeId},
    _livemode => ${v.livemode}, _from => ${v.from}, _to => ${v.to}, _limit => ${v.limit},
    _fbclid1 => ${v.fbclid1}, _fbclid2 => ${v.fbclid2}, _fingerprint => ${v.fingerprint},
    _derived1 => ${v.derived1}, _derived2 => ${v.derived2}, _ip_address => ${v.ipAddress},
    _email_hash => ${v.emailHash}, _phone_hash => ${v.phoneHash},
    _after => ${v.after}, _before => ${v.before}, _exclude_id => ${v.excludeId})`;
  // Read through `selectFrom` (a reader may only select): the function is its one source.
  return db.selectFrom(call.as('evidence')).selectAll();
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
    const { rows } = await evidenceCall(db, {
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
      after: identity.after,
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
