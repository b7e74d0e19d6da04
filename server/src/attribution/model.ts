/**
 * Attribution as pure functions: which clicks may be credited for a conversion, which signal
 * links each of them to it, how much confidence that signal earns, and which click wins.
 * No I/O here: the database only narrows the clicks worth looking at (attribution/evidence.ts).
 */

/** Signals, strongest first (api.md §2 "Attribution"). */
export const SIGNALS = ['explicit', 'fingerprint', 'ip_user_agent', 'identity', 'ip'] as const;
export type Signal = (typeof SIGNALS)[number];

/**
 * Score bands. A signal scores `max` for a click at the conversion's moment and decays linearly
 * to `min` at the edge of the attribution window. The bands do not overlap, so a stronger
 * signal always beats a weaker one whatever the clicks' ages; only an explicit reference is 100.
 */
export const SCORE_BANDS: Record<Signal, { max: number; min: number }> = {
  explicit: { max: 100, min: 100 },
  fingerprint: { max: 95, min: 80 },
  ip_user_agent: { max: 79, min: 65 },
  identity: { max: 64, min: 50 },
  ip: { max: 49, min: 30 },
};

const DAY_MS = 86_400_000;
/** A click may be recorded slightly after the conversion it led to (clock skew, async tags). */
export const CLICK_AFTER_CONVERSION_TOLERANCE_MS = 5 * 60 * 1000;

export interface ClickFacts {
  id: string;
  fbclid: string;
  storeId: string;
  livemode: boolean;
  clickTime: number;
  isBot: boolean;
  fingerprint: string | null;
  derivedFingerprint: string | null;
  ipAddress: string | null;
  userAgent: string | null;
}

export interface ConversionFacts {
  storeId: string;
  livemode: boolean;
  time: number;
  /** fbclids the conversion names: its `fbclid` and the one inside its `fbc`. */
  fbclids: string[];
  clickId?: string;
  fingerprint?: string;
  ipAddress?: string;
  userAgent?: string;
  /** Clicks that earlier conversions with the same hashed email or phone were attributed to. */
  identityClickIds: ReadonlySet<string>;
  /** Clicks the conversion names by another click id (gclid, gbraid, wbraid, ttclid, msclkid). */
  explicitClickIds?: ReadonlySet<string>;
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

export function isCandidate(click: ClickFacts, conversion: ConversionFacts, windowDays: number): boolean {
  return (
    click.storeId === conversion.storeId &&
    click.livemode === conversion.livemode &&
    !click.isBot &&
    click.clickTime <= conversion.time + CLICK_AFTER_CONVERSION_TOLERANCE_MS &&
    conversion.time - click.clickTime <= windowDays * DAY_MS
  );
}

/** The strongest signal linking a click to a conversion, or null when nothing does. */
export function strongestSignal(click: ClickFacts, conversion: ConversionFacts): Signal | null {
  if (click.id === conversion.clickId || conversion.fbclids.includes(click.fbclid)) return 'explicit';
  if (conversion.explicitClickIds?.has(click.id)) return 'explicit';
  const fp = conversion.fingerprint;
  if (fp && click.fingerprint === fp) return 'fingerprint';
  const { ipAddress: ip, userAgent: ua } = conversion;
  if ((fp && click.derivedFingerprint === fp) || (ip && ua && click.ipAddress === ip && click.userAgent === ua)) {
    return 'ip_user_agent';
  }
  if (conversion.identityClickIds.has(click.id)) return 'identity';
  if (ip && click.ipAddress === ip) return 'ip';
  return null;
}

/** Integer confidence 0–100 of a signal for a click of a given age inside the window. */
export function scoreOf(signal: Signal, ageMs: number, windowDays: number): number {
  const band = SCORE_BANDS[signal];
  const window = windowDays * DAY_MS;
  const age = Math.min(Math.max(ageMs, 0), window);
  return band.max - Math.floor(((band.max - band.min) * age) / window);
}

/**
 * Every candidate a signal links to the conversion, scored, strongest first: highest score, ties
 * to the most recent click, then the larger id, so the order never depends on the order clicks
 * were found in. No threshold: the store's `minConfidence` is applied by `attribute`.
 */
export function scoreCandidates(conversion: ConversionFacts, clicks: ClickFacts[], windowDays: number): Touchpoint[] {
  const byClick = new Map<string, Touchpoint>();
  for (const click of clicks) {
    if (byClick.has(click.id) || !isCandidate(click, conversion, windowDays)) continue;
    const signal = strongestSignal(click, conversion);
    if (!signal) continue;
    const score = scoreOf(signal, conversion.time - click.clickTime, windowDays);
    if (score <= 0) continue;
    byClick.set(click.id, { clickId: click.id, fbclid: click.fbclid, signal, score, clickTime: click.clickTime });
  }
  return [...byClick.values()].sort((a, b) => b.score - a.score || b.clickTime - a.clickTime || (a.clickId < b.clickId ? 1 : -1));
}

/**
 * Scores every candidate and picks the winner, the strongest (`scoreCandidates`). Every
 * candidate scoring at or above the store's threshold is kept as a touchpoint.
 */
export function attribute(conversion: ConversionFacts, clicks: ClickFacts[], policy: AttributionPolicy): Attribution {
  const touchpoints = scoreCandidates(conversion, clicks, policy.windowDays).filter((t) => t.score >= policy.minConfidence);
  return { winner: touchpoints[0] ?? null, touchpoints };
}

/** Why a conversion is not attributed (api.md; docs/api.md "Errors that teach and other decisions"). */
export type MissReason = 'no_candidates' | 'below_min_confidence' | 'reattribution_available';

export interface Miss {
  reason: MissReason;
  /** The strongest candidate, whatever its score; null when there is none. */
  best: Touchpoint | null;
}

/** Given every scored candidate (strongest first), why the winner is none under this policy. */
export function explainMiss(candidates: Touchpoint[], policy: AttributionPolicy): Miss {
  const best = candidates[0] ?? null;
  if (!best) return { reason: 'no_candidates', best };
  // Stronger now than the threshold: a click recorded after the conversion, or a changed setting.
  return { reason: best.score < policy.minConfidence ? 'below_min_confidence' : 'reattribution_available', best };
}
