import { sql } from 'kysely';
import type { Reader } from '../database.js';
import type {
  AmbiguityCountKind,
  EvidenceClick,
  EvidenceClicks,
  EvidenceLookup,
  EvidenceStatements,
  LinkedBrowser,
} from '../engine.js';
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
  ipNetwork?: string;
  visitorId?: string;
  fbp?: string;
  ttp?: string;
  emailHash?: string;
  phoneHash?: string;
  after: number;
  before: number;
  excludeId: string;
  days: string;
  kIp?: number;
  kIpUserAgent?: number;
  kFingerprint?: number;
  countLimit: number;
}

type EvidenceRow = EvidenceClick & { lookup: string; shared: number | null };

/**
 * The lookups of `evidenceClicks` (db/repositories/evidence.ts), each bounded by the window, as
 * the branches of the function `waytrack_attribution_evidence` (migration 0024,
 * db/postgres/attribution-evidence.ts): there its plan is generic, made once per connection and
 * pruned to the window's months when it runs. Built and compiled once (db/prepared.ts), so the
 * call also runs as a named prepared statement.
 */
const evidenceCall = preparedQuery((db, v: EvidenceValues) => {
  const call = sql<EvidenceRow>`waytrack_attribution_evidence(
    _click_id => ${v.clickId}, _account_id => ${v.accountId}, _store_id => ${v.storeId},
    _livemode => ${v.livemode}, _from => ${v.from}, _to => ${v.to}, _limit => ${v.limit},
    _fbclid1 => ${v.fbclid1}, _fbclid2 => ${v.fbclid2}, _fingerprint => ${v.fingerprint},
    _derived1 => ${v.derived1}, _derived2 => ${v.derived2}, _ip_address => ${v.ipAddress}, _ip_network => ${v.ipNetwork},
    _visitor_id => ${v.visitorId}, _fbp => ${v.fbp}, _ttp => ${v.ttp},
    _email_hash => ${v.emailHash}, _phone_hash => ${v.phoneHash},
    _after => ${v.after}, _before => ${v.before}, _exclude_id => ${v.excludeId},
    _days => ${v.days}::integer[], _k_ip => ${v.kIp}, _k_ip_user_agent => ${v.kIpUserAgent}, _k_fingerprint => ${v.kFingerprint},
    _count_limit => ${v.countLimit})`;
  // Read through `selectFrom` (a reader may only select): the function is its one source.
  return db.selectFrom(call.as('evidence')).selectAll();
});

const COUNTS: Record<string, AmbiguityCountKind> = {
  count_ip: 'ip',
  count_ip_user_agent: 'ip_user_agent',
  count_fingerprint: 'fingerprint',
};

export class PostgresEvidence implements EvidenceStatements {
  /**
   * Every lookup in one statement: there each statement is a round trip whose cost, on both
   * sides, was most of a conversion's.
   */
  async clicks(db: Reader, lookup: EvidenceLookup): Promise<EvidenceClicks> {
    const { scope, identity, counts } = lookup;
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
      ipNetwork: lookup.ipNetwork,
      visitorId: lookup.browsers.visitorId,
      fbp: lookup.browsers.fbp,
      ttp: lookup.browsers.ttp,
      emailHash: identity.emailHash,
      phoneHash: identity.phoneHash,
      after: identity.after,
      before: identity.before,
      excludeId: identity.excludeId ?? '',
      // One text parameter (an array literal): the statement's parameters stay the same for any window.
      days: `{${counts.days.join(',')}}`,
      kIp: counts.keys.ip,
      kIpUserAgent: counts.keys.ip_user_agent,
      kFingerprint: counts.keys.fingerprint,
      countLimit: counts.limit,
    });
    const clicks: EvidenceClick[] = [];
    const identityClickIds: string[] = [];
    const linkedBrowsers: LinkedBrowser[] = [];
    const shared: EvidenceClicks['shared'] = {};
    for (const { lookup: found, shared: count, ...row } of rows) {
      const kind = COUNTS[found];
      if (kind) {
        shared[kind] = Number(count ?? 0);
        continue;
      }
      if (found === 'linked') {
        linkedBrowsers.push({ visitorId: row.visitor_id ?? null, fbp: row.fbp, ttp: row.ttp ?? null });
        continue;
      }
      clicks.push({ ...row, click_time: Number(row.click_time) });
      if (found === 'identity') identityClickIds.push(row.id);
    }
    return { clicks, identityClickIds, linkedBrowsers, shared };
  }
}
