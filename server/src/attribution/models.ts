/**
 * Multi-touch attribution models: how one attributed conversion's credit is shared among its
 * touchpoints. Pure functions. A conversion's value is always split exactly: the credits are
 * integer minor units that sum to the value, remainders assigned deterministically.
 */

export const MODELS = ['last_click', 'first_click', 'linear', 'time_decay', 'position_based'] as const;
export type Model = (typeof MODELS)[number];

/** Half-life of the time_decay model: a click 7 days older than another gets half its weight. */
export const TIME_DECAY_HALF_LIFE_MS = 7 * 24 * 60 * 60 * 1000;

export interface CreditTouchpoint {
  clickId: string;
  clickTime: number;
}

export interface Credit {
  clickId: string;
  /** Fraction of the conversion credited to this click (the fractions sum to 1). */
  share: number;
  /** Exact part of the conversion's value, in minor units (the parts sum to the value). */
  valueMinor: number;
}

/** Oldest first; equal times by id, so every model is independent of input order. */
function chronological(touchpoints: CreditTouchpoint[]): CreditTouchpoint[] {
  return [...touchpoints].sort(
    (a, b) => a.clickTime - b.clickTime || (a.clickId < b.clickId ? -1 : a.clickId > b.clickId ? 1 : 0),
  );
}

/** Relative weight of each touchpoint (chronological order) under a model. */
function weights(model: Model, ordered: CreditTouchpoint[], winnerClickId: string, conversionTime: number): number[] {
  const n = ordered.length;
  switch (model) {
    case 'last_click':
      // The attributed click (strongest evidence, most recent on ties) takes all the credit.
      return ordered.map((t) => (t.clickId === winnerClickId ? 1 : 0));
    case 'first_click':
      return ordered.map((_, i) => (i === 0 ? 1 : 0));
    case 'linear':
      return ordered.map(() => 1);
    case 'time_decay':
      return ordered.map((t) => 2 ** (-Math.max(0, conversionTime - t.clickTime) / TIME_DECAY_HALF_LIFE_MS));
    case 'position_based':
      // 40 % first, 40 % last, 20 % shared by the ones between; two touchpoints split 50/50.
      if (n === 1) return [1];
      if (n === 2) return [1, 1];
      return ordered.map((_, i) => (i === 0 || i === n - 1 ? 40 : 20 / (n - 2)));
  }
}

/**
 * Splits `valueMinor` among the touchpoints. Each part is the floor of its exact share; the
 * cents left over go one each to the largest fractional remainders, ties to the later click.
 */
export function allocateCredit(
  model: Model,
  touchpoints: CreditTouchpoint[],
  winnerClickId: string,
  valueMinor: number,
  conversionTime: number,
): Credit[] {
  if (touchpoints.length === 0) return [];
  const ordered = chronological(touchpoints);
  const raw = weights(model, ordered, winnerClickId, conversionTime);
  const total = raw.reduce((a, b) => a + b, 0);
  // A winner missing from the touchpoints (never expected) falls back to the most recent click.
  const w = total > 0 ? raw.map((x) => x / total) : ordered.map((_, i) => (i === ordered.length - 1 ? 1 : 0));
  const exact = w.map((share) => share * valueMinor);
  const parts = exact.map((x) => Math.floor(x));
  let left = valueMinor - parts.reduce((a, b) => a + b, 0);
  const byRemainder = exact
    .map((x, i) => ({ i, remainder: x - Math.floor(x) }))
    .sort((a, b) => b.remainder - a.remainder || b.i - a.i);
  for (const { i } of byRemainder) {
    if (left <= 0) break;
    parts[i] = (parts[i] as number) + 1;
    left--;
  }
  return ordered.map((t, i) => ({ clickId: t.clickId, share: w[i] as number, valueMinor: parts[i] as number }));
}
