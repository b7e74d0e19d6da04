/**
 * The explanation of an attribution as recorded (api.md §13 "Explanation"): the candidates as
 * they were scored — the winner and the runners-up, each with its evidence, how many distinct
 * browsers in the window shared each piece, and the estimate — kept with the conversion
 * (`attribution_evidence`, migration 0024), so it explains the decision that was made, not one
 * the clicks known today would make.
 */
import type { Attribution, Signal, Touchpoint } from '../attribution/model.js';

/** The winner and this many runners-up are kept. */
export const RUNNERS_UP = 4;

interface StoredCandidate {
  clickId: string;
  fbclid: string;
  clickTime: number;
  confidence: number;
  evidence: Array<{ kind: Signal; sharedBy: number }>;
}

/** The `attribution_evidence` column of a conversion scored with these candidates (null when there were none). */
export function evidenceColumn(attribution: Attribution): string | null {
  if (attribution.candidates.length === 0) return null;
  const kept: StoredCandidate[] = attribution.candidates.slice(0, 1 + RUNNERS_UP).map((c: Touchpoint) => ({
    clickId: c.clickId,
    fbclid: c.fbclid,
    clickTime: c.clickTime,
    confidence: c.score,
    evidence: c.evidence.map(({ kind, sharedBy }) => ({ kind, sharedBy })),
  }));
  return JSON.stringify({ candidates: kept });
}

/** The API view of a conversion's recorded candidates (none for one recorded before they were kept). */
export function presentCandidates(column: string | null | undefined) {
  if (!column) return [];
  const { candidates } = JSON.parse(column) as { candidates: StoredCandidate[] };
  return candidates.map((c) => ({
    clickId: c.clickId,
    fbclid: c.fbclid,
    clickTime: new Date(c.clickTime).toISOString(),
    confidence: c.confidence,
    evidence: c.evidence,
  }));
}
