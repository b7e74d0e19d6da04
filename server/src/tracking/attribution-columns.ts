/**
 * A conversion row and its attribution result as columns: what attribution reads of a stored
 * conversion (its clues, the store's policy) and what it writes back (result columns, touchpoints).
 * Shared by recording (conversions.ts), re-attribution (reattribution.ts) and the explanation.
 */
import type { ConversionClues } from '../attribution/evidence.js';
import type { Attribution, AttributionPolicy } from '../attribution/model.js';
import type { ConversionsTable, StoresTable, TouchpointsTable } from '../db/schema.js';
import { evidenceColumn } from './attribution-explanation.js';

export const NOT_ATTRIBUTED: Attribution = { winner: null, touchpoints: [], candidates: [] };

/** What a stored (or about to be stored) conversion tells about the visitor. */
export function cluesOf(row: ConversionsTable): ConversionClues {
  return {
    accountId: row.account_id,
    storeId: row.store_id,
    livemode: row.livemode === 1,
    time: row.event_time,
    clickId: row.ref_click_id ?? undefined,
    fbclid: row.ref_fbclid ?? undefined,
    fbc: row.ref_fbc ?? undefined,
    ...(row.ref_ids && { clickIds: refIdsOf(row.ref_ids) }),
    fingerprint: row.fingerprint ?? undefined,
    ipAddress: row.ip_address ?? undefined,
    userAgent: row.user_agent ?? undefined,
    fbp: row.fbp ?? undefined,
    ttp: row.ttp ?? undefined,
    visitorId: row.visitor_id ?? undefined,
    emailHash: row.email_hash ?? undefined,
    phoneHash: row.phone_hash ?? undefined,
    conversionId: row.id,
  };
}

/** The explicit click ids a conversion named (stored as JSON kind → value). */
function refIdsOf(json: string): Array<{ kind: string; value: string }> {
  return Object.entries(JSON.parse(json) as Record<string, string>).map(([kind, value]) => ({ kind, value }));
}

export function policyOf(store: StoresTable): AttributionPolicy {
  return { windowDays: store.attribution_window_days, minConfidence: store.min_confidence };
}

/** The columns of a conversion row that hold its attribution result, and the candidates that explain it. */
export function attributionColumns(attribution: Attribution) {
  const winner = attribution.winner;
  return {
    attributed: winner ? 1 : 0,
    attributed_click_id: winner?.clickId ?? null,
    attributed_fbclid: winner?.fbclid ?? null,
    confidence: winner?.score ?? null,
    attribution_signal: winner?.signal ?? null,
    attribution_evidence: evidenceColumn(attribution),
  };
}

export function touchpointRows(conversionId: string, attribution: Attribution): TouchpointsTable[] {
  return attribution.touchpoints.map((t) => ({
    conversion_id: conversionId,
    click_id: t.clickId,
    signal: t.signal,
    score: t.score,
    click_time: t.clickTime,
  }));
}
