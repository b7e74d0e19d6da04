import type { Reader } from '../database.js';
import type { EvidenceClick, EvidenceClicks, EvidenceLookup, EvidenceStatements } from '../engine.js';
import { findClick, findClickByFbclid, findClicksByIds, findClicksMatching } from '../repositories/clicks.js';
import { identityLinkedClickIds } from '../repositories/conversions.js';

/** One statement per lookup: in-process, each costs microseconds. */
export class SqliteEvidence implements EvidenceStatements {
  async clicks(db: Reader, lookup: EvidenceLookup): Promise<EvidenceClicks> {
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
      {
        storeId: scope.storeId,
        livemode: scope.livemode,
        after: lookup.identity.after,
        before: lookup.identity.before,
        excludeId: lookup.identity.excludeId,
      },
      lookup.identity,
      limit,
    );
    add(await findClicksByIds(db, scope.storeId, scope.livemode, identityClickIds));
    if (lookup.ipAddress) add(await findClicksMatching(db, scope, 'ip_address', lookup.ipAddress, limit));
    return { clicks, identityClickIds };
  }
}
