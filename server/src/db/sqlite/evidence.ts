import type { Reader } from '../database.js';
import type { AmbiguityCountKind, EvidenceClick, EvidenceClicks, EvidenceLookup, EvidenceStatements } from '../engine.js';
import { countSharedBrowsers } from '../repositories/attribution-keys.js';
import { findClick, findClickByFbclid, findClicksByIds, findClicksMatching } from '../repositories/clicks.js';
import { BROWSERS_LINKED, identityLinks } from '../repositories/conversions.js';
import { identifiedBrowsers } from '../repositories/identity-links.js';

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
    const { visitorId, fbp, ttp } = lookup.browsers;
    if (visitorId) add(await findClicksMatching(db, scope, 'visitor_id', visitorId, limit));
    if (fbp) add(await findClicksMatching(db, scope, 'fbp', fbp, limit));
    if (ttp) add(await findClicksMatching(db, scope, 'ttp', ttp, limit));
    if (lookup.fingerprint) add(await findClicksMatching(db, scope, 'fingerprint', lookup.fingerprint, limit));
    for (const value of lookup.derivedFingerprints) add(await findClicksMatching(db, scope, 'derived_fingerprint', value, limit));
    const identity = await identityLinks(
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
    add(await findClicksByIds(db, scope.storeId, scope.livemode, identity.clickIds));
    // The browsers identify linked to the buyer: a budget of their own beside the earlier conversions'.
    const identified = await identifiedBrowsers(db, scope, lookup.identity, BROWSERS_LINKED);
    const linkedBrowsers = [...identity.browsers, ...identified];
    for (const linked of linkedBrowsers) {
      if (linked.visitorId) add(await findClicksMatching(db, scope, 'visitor_id', linked.visitorId, limit));
      if (linked.fbp) add(await findClicksMatching(db, scope, 'fbp', linked.fbp, limit));
      if (linked.ttp) add(await findClicksMatching(db, scope, 'ttp', linked.ttp, limit));
    }
    if (lookup.ipAddress) add(await findClicksMatching(db, scope, 'ip_address', lookup.ipAddress, limit));
    if (lookup.ipNetwork) add(await findClicksMatching(db, scope, 'ip_network', lookup.ipNetwork, limit));
    // Counted after the clicks, and only the kinds some click found shows: the count is read only for them.
    const { needed, ...counts } = lookup.counts;
    const wanted = needed?.(clicks);
    const keys = wanted
      ? Object.fromEntries(Object.entries(counts.keys).filter(([kind]) => wanted.has(kind as AmbiguityCountKind)))
      : counts.keys;
    const shared = await countSharedBrowsers(db, { ...counts, keys });
    return { clicks, identityClickIds: identity.clickIds, linkedBrowsers, shared, whole: true };
  }
}
