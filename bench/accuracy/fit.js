// Fits the constants of server/src/attribution/probability.ts by maximum likelihood on one seed's
// played run (bench/attribution-accuracy.js --fit): each order's recorded candidates (their
// evidence, how many browsers shared each piece, their click times) and its truth. The candidates
// and their evidence do not depend on the constants (only their order does), so one run of the
// server gives the data. The weight formula is the server's own (`weightOf`, loaded from the
// sources); only the numbers change. The same-browser confidence is the observed share of right
// same-browser winners, kept within §13's 90–99.
import { source } from '../lib.js';

const clamp = (p) => Math.min(1 - 1e-6, Math.max(1e-6, p));

/** The orders of a dump (attribution-accuracy.js `dumpOf`) as fitting data: candidates' evidence and age, and which one is the truth. */
function dataOf(dumped) {
  return dumped.orders.map((order) => {
    const { candidates } = order;
    const ipShared = Math.max(1, ...candidates.flatMap((c) => c.evidence.filter((e) => e.kind === 'ip').map((e) => e.sharedBy)));
    return {
      truth: candidates.findIndex((c) => c.ref === order.truth),
      ipShared,
      candidates: candidates.map((c) => ({ kinds: new Set(c.evidence.map((e) => e.kind)), evidence: c.evidence, age: c.age })),
    };
  });
}

/** Each candidate's probability of an order under the constants (as attribution/model.ts computes them). */
function probabilitiesOf(order, weightOf, params, sameBrowser) {
  const certain = order.candidates.some((c) => c.kinds.has('explicit'));
  const same = order.candidates.some((c) => !c.kinds.has('explicit') && c.kinds.has('same_browser'));
  const taken = certain ? 1 : same ? sameBrowser : 0;
  const weights = order.candidates.map((c) =>
    c.kinds.has('explicit') || c.kinds.has('same_browser') ? 0 : weightOf(c.evidence, order.ipShared, c.age, params),
  );
  const sum = 1 + weights.reduce((a, w) => a + w, 0);
  return order.candidates.map((c, i) => {
    if (c.kinds.has('explicit')) return 1;
    if (c.kinds.has('same_browser')) return certain ? 0 : sameBrowser;
    return ((weights[i] ?? 0) / sum) * (1 - taken);
  });
}

function logLikelihood(data, weightOf, params, sameBrowser) {
  let total = 0;
  for (const order of data) {
    const probabilities = probabilitiesOf(order, weightOf, params, sameBrowser);
    const none = 1 - probabilities.reduce((a, p) => a + p, 0);
    total += Math.log(clamp(order.truth >= 0 ? (probabilities[order.truth] ?? 0) : none));
  }
  return total;
}

/** Orders in a block of the calibration map at least: a block's observed share is then known to ±7 points or so. */
export const MIN_BLOCK = 40;

/**
 * The calibration map (probability.ts `CALIBRATION`): each order's most probable probabilistic
 * candidate, its probability under the fitted constants and whether it was the truth, sorted by
 * probability; made monotone by pool adjacent violators over every order (isotonic regression,
 * finest where orders are many), then neighbouring blocks smaller than MIN_BLOCK merged into the
 * neighbour closest in observed share, so no knot rests on a handful of orders; knots (mean
 * probability, observed share), rounded. (Ten groups of equal size put most knots below 0.1,
 * where most orders are, and left 0.3–0.6 to two knots: the 40–59 bands came out 15–20 points
 * under-confident.)
 */
function calibrationOf(data, weightOf, params, sameBrowser) {
  const points = [];
  for (const order of data) {
    const probabilities = probabilitiesOf(order, weightOf, params, sameBrowser);
    let best = -1;
    order.candidates.forEach((c, i) => {
      if (c.kinds.has('explicit') || c.kinds.has('same_browser')) return;
      if (best < 0 || (probabilities[i] ?? 0) > (probabilities[best] ?? 0)) best = i;
    });
    if (best >= 0) points.push({ p: probabilities[best] ?? 0, right: order.truth === best ? 1 : 0 });
  }
  points.sort((a, b) => a.p - b.p);
  const merge = (a, b) => {
    const n = a.n + b.n;
    return { p: (a.p * a.n + b.p * b.n) / n, y: (a.y * a.n + b.y * b.n) / n, n };
  };
  // Orders of equal probability are one block from the start (their order among themselves means nothing).
  const tied = [];
  for (const point of points) {
    const last = tied[tied.length - 1];
    if (last && point.p - last.p < 1e-9) tied[tied.length - 1] = merge(last, { p: point.p, y: point.right, n: 1 });
    else tied.push({ p: point.p, y: point.right, n: 1 });
  }
  // Pool adjacent violators: merge neighbours until the observed shares increase.
  let blocks = [];
  for (const block of tied) {
    blocks.push(block);
    while (blocks.length > 1 && blocks[blocks.length - 2].y >= blocks[blocks.length - 1].y) {
      const b = blocks.pop();
      blocks.push(merge(blocks.pop(), b));
    }
  }
  // Small blocks into their closest neighbour (merging monotone neighbours keeps the map monotone).
  while (blocks.length > 1) {
    const i = blocks.findIndex((b) => b.n < MIN_BLOCK);
    if (i < 0) break;
    const left = i > 0 ? Math.abs(blocks[i].y - blocks[i - 1].y) : Number.POSITIVE_INFINITY;
    const right = i < blocks.length - 1 ? Math.abs(blocks[i + 1].y - blocks[i].y) : Number.POSITIVE_INFINITY;
    const j = left <= right ? i - 1 : i;
    blocks = [...blocks.slice(0, j), merge(blocks[j], blocks[j + 1]), ...blocks.slice(j + 2)];
  }
  return blocks.map((g) => [Number(g.p.toFixed(3)), Number(g.y.toFixed(3))]);
}

/** The constants as a flat list of [path, value] (log-space steps keep each positive). */
function flatten(params) {
  const out = [];
  for (const [kind, odds] of Object.entries(params.odds)) {
    for (const [i, v] of odds.entries()) out.push([['odds', kind, i], v]);
  }
  out.push([['identity', 'factor'], params.identity.factor]);
  for (const [i, v] of params.identity.alone.entries()) out.push([['identity', 'alone', i], v]);
  out.push([['sharedNetwork'], params.sharedNetwork]);
  return out;
}

function withValue(params, path, value) {
  const copy = structuredClone(params);
  let at = copy;
  for (const step of path.slice(0, -1)) at = at[step];
  at[path[path.length - 1]] = value;
  return copy;
}

const round = (x) => Number(x.toPrecision(2));

/**
 * A weak prior keeps a constant that few orders inform near its starting value instead of letting
 * it run off to 0 or infinity (a cell with only right, or only wrong, answers): a normal prior on
 * its logarithm, standard deviation 2 (a factor of ~7).
 */
const PRIOR = 1 / (2 * 2 ** 2);
/**
 * Where the fit starts and what the prior is centred on: the constants as first written by hand,
 * before any run (per piece of evidence: odds within the hour, the day, three days, older), so a
 * fit does not depend on the constants the server has now.
 */
const START = {
  odds: {
    ip_user_agent: [30, 4, 1.2, 1.2],
    ip_device: [15, 2, 0.6, 0.6],
    ip: [8, 0.8, 0.25, 0.25],
    fingerprint: [2, 0.15, 0.05, 0.05],
  },
  identity: { factor: 10, alone: [20, 5, 2, 2] },
  sharedNetwork: 0.3,
};
function penalty(params, start) {
  const now = flatten(params);
  return flatten(start).reduce((sum, [, v], i) => sum + PRIOR * Math.log(now[i][1] / v) ** 2, 0);
}

/** Coordinate ascent of the penalized log-likelihood in log space; returns the rounded constants. */
export async function fitParams(dumped) {
  const { weightOf } = await source('attribution/probability.ts');
  const data = dataOf(dumped);
  // Same browser: how often the browser's click is the truth (a named click is its browser's too).
  const sameWinners = data.filter((o) => o.candidates[0]?.kinds.has('same_browser'));
  const observed = sameWinners.filter((o) => o.truth === 0).length / Math.max(1, sameWinners.length);
  const sameBrowser = Math.min(0.99, Math.max(0.9, observed));
  const start = structuredClone(START);
  let params = structuredClone(START);
  const objective = (p) => logLikelihood(data, weightOf, p, sameBrowser) - penalty(p, start);
  const before = logLikelihood(data, weightOf, params, sameBrowser);
  let best = objective(params);
  for (let round_ = 0; round_ < 60; round_++) {
    let improved = false;
    for (const [path] of flatten(params)) {
      for (const factor of [0.5, 0.8, 0.95, 1.05, 1.25, 2]) {
        const current = flatten(params).find(([p]) => p.join('.') === path.join('.'))[1];
        const candidate = withValue(params, path, current * factor);
        const ll = objective(candidate);
        if (ll > best + 1e-9) {
          best = ll;
          params = candidate;
          improved = true;
        }
      }
    }
    if (!improved) break;
  }
  for (const [path, value] of flatten(params)) params = withValue(params, path, round(value));
  return {
    params,
    calibration: calibrationOf(data, weightOf, params, sameBrowser),
    sameBrowser: Math.round(sameBrowser * 100),
    sameBrowserWinners: sameWinners.length,
    before,
    after: logLikelihood(data, weightOf, params, sameBrowser),
  };
}

// node bench/accuracy/fit.js DUMP: fits on every seed of a dump written by attribution-accuracy.js --dump.
if (import.meta.url === `file://${process.argv[1]}`) {
  const { readFileSync } = await import('node:fs');
  const dumps = JSON.parse(readFileSync(process.argv[2], 'utf8'));
  const fitted = await fitParams({ orders: dumps.flatMap((d) => d.orders) });
  console.log(JSON.stringify(fitted, null, 2));
}
