/**
 * The probability behind a confidence (api.md §13; docs/attribution.md says what it means and how
 * it was measured). Each candidate browser that no explicit reference or same-browser id links
 * to the conversion gets a weight: the odds, against "the buyer's last ad click is none of
 * these", that it is the buyer's, for its most telling piece of evidence —
 *
 *   weight = ODDS[kind][age] ÷ sharedBy            (ip + user agent also ÷ the shared-network factor)
 *
 * where `sharedBy` is how many distinct browsers with a click in the window show the same value
 * in this store's data (so k browsers with one shared IP split one piece of evidence k ways), and
 * `age` is how long before the conversion the click was (most purchases that follow a click follow
 * it within the hour). Identity evidence (a browser the buyer's email or phone was seen with)
 * multiplies the odds. The probability of each candidate is its weight ÷ (1 + the sum of all
 * weights), scaled to what explicit or same-browser evidence left; the confidence is that
 * probability in percent, rounded down, at most 99.
 *
 * The constants were fitted by penalized maximum likelihood on the calibration seeds (1, 5, 6, 8, 9, 10) of
 * bench/attribution-accuracy.js (`node bench/attribution-accuracy.js --fit`), and are reported on
 * other seeds (docs/attribution.md, "Guarding against fitting").
 */
/** Kinds of evidence, strongest first (model.ts says what each means). */
export const SIGNALS = ['explicit', 'same_browser', 'identity', 'ip_user_agent', 'ip_device', 'fingerprint', 'ip'] as const;
export type Signal = (typeof SIGNALS)[number];

/** One piece of evidence about a candidate, and how many browsers in the window share it. */
export interface Evidence {
  kind: Signal;
  sharedBy: number;
}

/** Age buckets of a click before the conversion: within the hour, the day, three days, older. */
const HOUR_MS = 3_600_000;
export const AGE_BUCKETS_MS = [HOUR_MS, 24 * HOUR_MS, 72 * HOUR_MS] as const;
type Bucket = 0 | 1 | 2 | 3;
type PerBucket = readonly [number, number, number, number];
export function ageBucket(ageMs: number): Bucket {
  const bucket = AGE_BUCKETS_MS.findIndex((limit) => ageMs < limit);
  return (bucket === -1 ? AGE_BUCKETS_MS.length : bucket) as Bucket;
}

/** The model's constants (fitted: see the file's comment). */
export interface ProbabilityParams {
  /** Odds per piece of evidence and age bucket (`AGE_BUCKETS_MS`), for one browser sharing it. */
  odds: Record<'ip_user_agent' | 'ip_device' | 'ip' | 'fingerprint', PerBucket>;
  /** The odds multiplier of identity evidence, and its odds alone, per age bucket. */
  identity: { factor: number; alone: PerBucket };
  /**
   * How much each other browser on the same IP lowers the odds of an IP + user agent (or IP +
   * device) match: on a shared network (CGNAT, an office, a campus) many visitors who never
   * clicked share the device model too, so a unique match among the clickers means less there.
   */
  sharedNetwork: number;
}

export const PARAMS: ProbabilityParams = {
  odds: {
    ip_user_agent: [2.1, 0.97, 2.8, 1.5],
    ip_device: [19, 20, 2.4, 1.4],
    ip: [0.61, 2.2, 0.5, 0.47],
    fingerprint: [0.05, 0.0023, 0.034, 0.017],
  },
  identity: { factor: 12, alone: [24, 30, 9, 2.9] },
  sharedNetwork: 0.35,
};

/** Same-browser evidence for that browser's most recent click in the window (api.md §13: at least 90). */
export const SAME_BROWSER_CONFIDENCE = 97;

type Probabilistic = keyof ProbabilityParams['odds'];
const PROBABILISTIC: Probabilistic[] = ['ip_user_agent', 'ip_device', 'ip', 'fingerprint'];

/**
 * The odds of one candidate browser from its evidence (`sharedBy` each), the number of browsers
 * on the conversion's IP, and the age of its click.
 */
export function weightOf(evidence: Evidence[], ipShared: number, ageMs: number, params: ProbabilityParams = PARAMS): number {
  const bucket = ageBucket(ageMs);
  let weight = 0;
  for (const { kind, sharedBy } of evidence) {
    if (!PROBABILISTIC.includes(kind as Probabilistic)) continue;
    let odds = params.odds[kind as Probabilistic][bucket] / sharedBy;
    if (kind === 'ip_user_agent' || kind === 'ip_device') odds /= 1 + params.sharedNetwork * Math.max(0, ipShared - sharedBy);
    weight = Math.max(weight, odds);
  }
  const identity = evidence.find((e) => e.kind === 'identity');
  if (!identity) return weight;
  return weight > 0 ? weight * params.identity.factor : params.identity.alone[bucket] / identity.sharedBy;
}

/** Each weight's probability: weight ÷ (1 + the sum), of the part `taken` (0–1) leaves. */
export function shareOf(weights: number[], taken: number): number[] {
  const total = 1 + weights.reduce((a, b) => a + b, 0);
  return weights.map((w) => (w / total) * (1 - taken));
}

/**
 * The calibration map: knots (probability from the weights, share observed right), monotone,
 * fitted on the calibration seeds after the constants (isotonic regression over every order, each
 * knot resting on at least 40 orders: bench/accuracy/fit.js). Between knots the map is linear;
 * below the first it runs to (0, 0), above the last to (1, 1).
 */
export const CALIBRATION: ReadonlyArray<readonly [number, number]> = [
  [0.003, 0.013],
  [0.017, 0.018],
  [0.035, 0.025],
  [0.122, 0.15],
  [0.174, 0.214],
  [0.311, 0.324],
  [0.326, 0.331],
  [0.362, 0.415],
  [0.444, 0.446],
  [0.468, 0.532],
  [0.522, 0.611],
  [0.583, 0.62],
  [0.658, 0.644],
  [0.684, 0.645],
  [0.692, 0.674],
  [0.742, 0.758],
  [0.843, 0.881],
  [0.926, 0.913],
  [0.967, 0.978],
];

function calibrated(probability: number): number {
  const knots: ReadonlyArray<readonly [number, number]> = [[0, 0], ...CALIBRATION, [1, 1]];
  for (let i = 1; i < knots.length; i++) {
    const [x1, y1] = knots[i] as readonly [number, number];
    if (probability > x1 && i < knots.length - 1) continue;
    const [x0, y0] = knots[i - 1] as readonly [number, number];
    return x1 === x0 ? y1 : y0 + ((y1 - y0) * (probability - x0)) / (x1 - x0);
  }
  return probability;
}

/** A probability as a confidence: calibrated, in percent, rounded down, 0–99 (100 is for explicit references only). */
export function confidenceOf(probability: number): number {
  return Math.max(0, Math.min(99, Math.floor(calibrated(probability) * 100)));
}
