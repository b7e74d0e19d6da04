/**
 * Attribution of a stored conversion (the rules of attribution/, applied to its rows and the
 * rollups): its explanation, and re-attribution on request (the domain function is reattribution.ts's).
 */
import { attributeConversion, explainUnattributed } from '../attribution/evidence.js';
import type { AttributionPolicy, Miss, Signal, Touchpoint } from '../attribution/model.js';
import { clickInOtherMode } from '../attribution/other-mode.js';
import type { Database } from '../db/database.js';
import { fbclidsOf } from '../db/repositories/clicks.js';
import { findConversion, touchpointsOf } from '../db/repositories/conversions.js';
import { findStore } from '../db/repositories/stores.js';
import type { ConversionsTable } from '../db/schema.js';
import { ApiError } from '../http/errors.js';
import { conversionNotFound } from '../http/not-found.js';
import { modeFlag, type Tenant } from '../tenancy.js';
import { cluesOf, policyOf } from './attribution-columns.js';
import { presentCandidates } from './attribution-explanation.js';
import { applyReattribution } from './reattribution.js';

// The columns of a conversion's attribution live in attribution-columns.ts; their importers keep this path.
export { attributionColumns, cluesOf, NOT_ATTRIBUTED, policyOf, touchpointRows } from './attribution-columns.js';
export { applyReattribution, type ReattributionOptions, type ReattributionOutcome } from './reattribution.js';

/**
 * The explanation of a stored conversion's attribution: winning signal, score, every touchpoint,
 * and the candidates as they were scored (the winner and the runners-up, with their evidence).
 */
export async function explainAttribution(database: Database, row: ConversionsTable) {
  const touchpoints = row.attributed === 1 ? await touchpointsOf(database.read, row.id) : [];
  const fbclids = await fbclidsOf(
    database.read,
    touchpoints.map((t) => t.click_id),
  );
  return {
    signal: (row.attribution_signal as Signal | null) ?? null,
    score: row.confidence,
    touchpoints: touchpoints.map((t) => ({
      clickId: t.click_id,
      fbclid: fbclids.get(t.click_id) ?? '',
      signal: t.signal as Signal,
      score: t.score,
      clickTime: new Date(t.click_time).toISOString(),
    })),
    candidates: presentCandidates(row.attribution_evidence),
    ...(row.attributed === 1 ? {} : await whyUnattributed(database, row)),
  };
}

/**
 * Why an unattributed conversion has no winner, under the store's current settings and with the
 * clicks known now: no candidate at all, or the best one (shown) scored below `minConfidence`
 * — or, when it no longer does, that re-attribution would now attribute it.
 */
async function whyUnattributed(database: Database, row: ConversionsTable) {
  const store = await findStore(database.read, row.account_id, row.store_id);
  if (!store) return {};
  const policy = policyOf(store);
  const miss = await explainUnattributed(database.read, cluesOf(row), policy);
  const best = miss.best;
  // A reference to a click of the other mode is the likeliest cause: say so (never the click's data).
  const otherMode = best?.signal === 'explicit' ? undefined : await clickInOtherMode(database.read, cluesOf(row));
  const message = missMessage(miss, row, policy);
  return {
    reason: miss.reason,
    message: otherMode ? `${message}. ${otherMode.message}` : message,
    minConfidence: policy.minConfidence,
    ...(best && { bestCandidate: presentCandidate(best) }),
    ...(otherMode && { clickInOtherMode: otherMode }),
  };
}

function presentCandidate(t: Touchpoint) {
  return {
    clickId: t.clickId,
    fbclid: t.fbclid,
    signal: t.signal,
    score: t.score,
    clickTime: new Date(t.clickTime).toISOString(),
  };
}

function missMessage(miss: Miss, row: ConversionsTable, policy: AttributionPolicy): string {
  const best = miss.best;
  if (!best) {
    return (
      `No candidate click: no ${row.livemode === 1 ? 'live' : 'test'} click of this store from the ${policy.windowDays}-day ` +
      'attribution window (or up to 5 minutes after the conversion) shares a click reference (clickId, fbclid, fbc), ' +
      'fingerprint, IP address and user agent, hashed email or phone, or IP address with this conversion'
    );
  }
  if (miss.reason === 'below_min_confidence') {
    return (
      `The best candidate, click ${best.clickId} (signal ${best.signal}, score ${best.score}), ` +
      `scored below the store's minConfidence of ${policy.minConfidence}`
    );
  }
  return (
    `Click ${best.clickId} now scores ${best.score} (signal ${best.signal}), at least the store's minConfidence of ` +
    `${policy.minConfidence}: it was recorded after this conversion was attributed, or the store's settings changed since; ` +
    `POST /v1/conversions/${row.id}/reattribute attributes it`
  );
}

/**
 * Attributes a stored conversion again with the clicks known now (a click can arrive after its
 * conversion), through `applyReattribution` (reattribution.ts: rollups, match quality,
 * destinations and `conversion.attributed` follow). Idempotent; a result that already has
 * confidence 100 is never changed.
 */
export async function reattributeConversion(database: Database, tenant: Tenant, conversionId: string): Promise<ConversionsTable> {
  const livemode = modeFlag(tenant);
  const row = await findConversion(database.read, tenant.accountId, livemode, conversionId);
  if (!row) throw await conversionNotFound(database.read, tenant, conversionId);
  if (row.confidence === 100) return row;
  const store = await findStore(database.read, tenant.accountId, row.store_id);
  if (!store) throw new ApiError('not_found', `No conversion ${conversionId}`);
  const attribution = await attributeConversion(database.read, cluesOf(row), policyOf(store));
  const applied = await applyReattribution(database, { accountId: tenant.accountId, livemode, conversionId }, attribution);
  return applied?.after ?? row;
}
