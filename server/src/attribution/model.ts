/**
 * Attribution as pure functions: which clicks may be credited for a conversion, how strongly
 * each piece of evidence counts, and which click wins. No I/O here.
 */

export type Signal = 'explicit' | 'fingerprint' | 'ip_user_agent' | 'identity' | 'ip';

export interface CandidateClick {
  id: string;
  fbclid: string;
  clickTime: number;
  isBot: boolean;
}

/** A click together with the signal that links it to the conversion. */
export interface Evidence {
  click: CandidateClick;
  signal: Signal;
}

export interface AttributionPolicy {
  windowDays: number;
  minConfidence: number;
}

export interface Touchpoint {
  clickId: string;
  fbclid: string;
  signal: Signal;
  score: number;
  clickTime: number;
}

export interface Attribution {
  winner: Touchpoint | null;
  touchpoints: Touchpoint[];
}

const DAY_MS = 86_400_000;
/** A click may be recorded slightly after the conversion it led to (clock skew, async tags). */
export const CLICK_AFTER_CONVERSION_TOLERANCE_MS = 5 * 60 * 1000;

export function isCandidate(click: CandidateClick, conversionTime: number, windowDays: number): boolean {
  return (
    !click.isBot &&
    click.clickTime <= conversionTime + CLICK_AFTER_CONVERSION_TOLERANCE_MS &&
    conversionTime - click.clickTime <= windowDays * DAY_MS
  );
}

/** Confidence of one piece of evidence, an integer 0–100. An explicit reference is certain. */
export function scoreOf(evidence: Evidence): number {
  switch (evidence.signal) {
    case 'explicit':
      return 100;
    default:
      return 0;
  }
}

/**
 * Picks the winning click: highest score, ties to the most recent click (then the larger id,
 * so the answer never depends on the order evidence arrived in). Every candidate scoring at or
 * above the store's threshold is kept as a touchpoint; one click keeps its strongest signal.
 */
export function attribute(conversionTime: number, evidence: Evidence[], policy: AttributionPolicy): Attribution {
  const best = new Map<string, Touchpoint>();
  for (const item of evidence) {
    if (!isCandidate(item.click, conversionTime, policy.windowDays)) continue;
    const score = scoreOf(item);
    if (score < policy.minConfidence) continue;
    const previous = best.get(item.click.id);
    if (previous && previous.score >= score) continue;
    best.set(item.click.id, {
      clickId: item.click.id,
      fbclid: item.click.fbclid,
      signal: item.signal,
      score,
      clickTime: item.click.clickTime,
    });
  }
  const touchpoints = [...best.values()].sort(
    (a, b) => b.score - a.score || b.clickTime - a.clickTime || (a.clickId < b.clickId ? 1 : -1),
  );
  return { winner: touchpoints[0] ?? null, touchpoints };
}
