import { MATCH_WEIGHTS, type MatchDestination, type MatchKey, type MatchQuality } from './match-quality.js';

/** The store view of match quality for one destination (GET /v1/analytics/match-quality). */
export interface DestinationSummary {
  conversions: number;
  averageScore: number;
  /** Every key of the destination → share (0–1, 4 decimals) of its conversions that lacked it. */
  missing: Partial<Record<MatchKey, number>>;
  /** Warning code → number of conversions that had it. */
  warnings: Record<string, number>;
  /** The keys that would raise the average most if every conversion had them, largest gain first. */
  improvements: { key: MatchKey; scoreGain: number }[];
}

function round(value: number, places: number): number {
  const factor = 10 ** places;
  return Math.round(value * factor) / factor;
}

/**
 * Folds stored match-quality entries (one JSON object per conversion) into the store view.
 * Scores are tenths (weights are multiples of 0.5), so sums are exact in integer tenths.
 */
export function summarizeMatchQuality(
  stored: (string | null | undefined)[],
): Partial<Record<MatchDestination, DestinationSummary>> {
  const acc = new Map<
    MatchDestination,
    { count: number; tenths: number; missing: Map<MatchKey, number>; warnings: Map<string, number> }
  >();
  for (const json of stored) {
    if (!json) continue;
    const entries = JSON.parse(json) as Partial<Record<MatchDestination, MatchQuality>>;
    for (const [kind, quality] of Object.entries(entries) as [MatchDestination, MatchQuality][]) {
      if (!(kind in MATCH_WEIGHTS)) continue;
      let a = acc.get(kind);
      if (!a) {
        a = { count: 0, tenths: 0, missing: new Map(), warnings: new Map() };
        acc.set(kind, a);
      }
      a.count++;
      a.tenths += Math.round(quality.score * 10);
      for (const key of quality.missing) a.missing.set(key, (a.missing.get(key) ?? 0) + 1);
      for (const w of quality.warnings) a.warnings.set(w.code, (a.warnings.get(w.code) ?? 0) + 1);
    }
  }
  const out: Partial<Record<MatchDestination, DestinationSummary>> = {};
  for (const kind of Object.keys(MATCH_WEIGHTS) as MatchDestination[]) {
    const a = acc.get(kind);
    if (!a) continue;
    const weights = MATCH_WEIGHTS[kind];
    const missing: Partial<Record<MatchKey, number>> = {};
    const improvements: { key: MatchKey; scoreGain: number }[] = [];
    for (const key of Object.keys(weights) as MatchKey[]) {
      const lacking = a.missing.get(key) ?? 0;
      missing[key] = round(lacking / a.count, 4);
      const gain = round(((weights[key] ?? 0) * lacking) / a.count, 2);
      if (gain > 0) improvements.push({ key, scoreGain: gain });
    }
    improvements.sort((x, y) => y.scoreGain - x.scoreGain);
    out[kind] = {
      conversions: a.count,
      averageScore: round(a.tenths / 10 / a.count, 2),
      missing,
      warnings: Object.fromEntries([...a.warnings].sort(([x], [y]) => (x < y ? -1 : 1))),
      improvements,
    };
  }
  return out;
}
