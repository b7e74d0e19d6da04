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

type Accumulated = Map<
  MatchDestination,
  { count: number; tenths: number; missing: Map<MatchKey, number>; warnings: Map<string, number> }
>;

function entryOf(acc: Accumulated, kind: MatchDestination) {
  let a = acc.get(kind);
  if (!a) {
    a = { count: 0, tenths: 0, missing: new Map(), warnings: new Map() };
    acc.set(kind, a);
  }
  return a;
}

/**
 * Folds stored match-quality entries (one JSON object per conversion) into the store view.
 * Scores are tenths (weights are multiples of 0.5), so sums are exact in integer tenths.
 */
export function summarizeMatchQuality(
  stored: (string | null | undefined)[],
): Partial<Record<MatchDestination, DestinationSummary>> {
  const acc: Accumulated = new Map();
  for (const json of stored) {
    if (!json) continue;
    const entries = JSON.parse(json) as Partial<Record<MatchDestination, MatchQuality>>;
    for (const [kind, quality] of Object.entries(entries) as [MatchDestination, MatchQuality][]) {
      if (!(kind in MATCH_WEIGHTS)) continue;
      const a = entryOf(acc, kind);
      a.count++;
      a.tenths += Math.round(quality.score * 10);
      for (const key of quality.missing) a.missing.set(key, (a.missing.get(key) ?? 0) + 1);
      for (const w of quality.warnings) a.warnings.set(w.code, (a.warnings.get(w.code) ?? 0) + 1);
    }
  }
  return summaryOf(acc);
}

/**
 * The same view from the match-quality rollups' counts (analytics/report-fold.ts): per
 * destination `conversions`, `tenths`, `missing|<key>` and `warning|<code>`, summed over the range.
 */
export function summarizeMatchCounts(
  counts: readonly { destination: string; item: string; count: number }[],
): Partial<Record<MatchDestination, DestinationSummary>> {
  const acc: Accumulated = new Map();
  for (const { destination, item, count } of counts) {
    if (!(destination in MATCH_WEIGHTS)) continue;
    const a = entryOf(acc, destination as MatchDestination);
    const cut = item.indexOf('|');
    const kind = cut === -1 ? item : item.slice(0, cut);
    const value = cut === -1 ? '' : item.slice(cut + 1);
    if (kind === 'conversions') a.count += count;
    else if (kind === 'tenths') a.tenths += count;
    else if (kind === 'missing') a.missing.set(value as MatchKey, (a.missing.get(value as MatchKey) ?? 0) + count);
    else if (kind === 'warning') a.warnings.set(value, (a.warnings.get(value) ?? 0) + count);
  }
  for (const [kind, a] of acc) {
    if (a.count === 0) acc.delete(kind);
    for (const [code, n] of a.warnings) if (n === 0) a.warnings.delete(code);
  }
  return summaryOf(acc);
}

function summaryOf(acc: Accumulated): Partial<Record<MatchDestination, DestinationSummary>> {
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
