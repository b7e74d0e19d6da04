import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { playTraffic, type Send } from '../../../bench/accuracy/drive.js';
import { generateTraffic } from '../../../bench/accuracy/generate.js';
import { atThreshold, baselines, type Run, scoreRun } from '../../../bench/accuracy/score.js';
import { call, createTestContext, makeStore, type TestContext } from '../helpers.js';

// bench/attribution-accuracy.js in small (docs/attribution.md): a store's month of generated
// traffic with known truth, played through the app in time order, scored against the truth.
// The seed is neither a calibration seed (1, 5, 6, 8, 9, 10) nor a report seed (2–4, 7): the
// constants were not fitted on it. A few thousand people make a few hundred orders — enough to catch a model that
// credits strangers, too few for 10-point calibration bands, which are checked where they hold
// enough orders to mean something.
const SEED = 11;
const PEOPLE = 2500;
const HOUR = 3_600_000;
const WEEK = 7 * 24 * HOUR;
/**
 * The traffic's end: the latest Monday 00:00 UTC at least an hour ago. The generator places the
 * month's events relative to its end (days of the week, hours of the day), so a fixed weekday and
 * hour make every run play the same traffic (a run's figures no longer depend on when it runs).
 * 1970-01-05 was a Monday.
 */
const END = (() => {
  const monday = Date.UTC(1970, 0, 5);
  return monday + Math.floor((Date.now() - HOUR - monday) / WEEK) * WEEK;
})();

describe('attribution accuracy on generated traffic (api.md §13)', () => {
  let ctx: TestContext;
  let run: Run;
  let base: ReturnType<typeof baselines>;
  beforeAll(async () => {
    ctx = await createTestContext();
    const key = ctx.a.live;
    const storeId = await makeStore(ctx.app, key);
    const send: Send = (method, path, body) =>
      call(ctx.app, method as 'GET' | 'POST', path, { key, ...(body !== undefined && { body }) });
    const traffic = generateTraffic({ seed: SEED, people: PEOPLE, end: END });
    run = scoreRun(traffic, await playTraffic(traffic, send, storeId));
    base = baselines(traffic);
  }, 120_000);
  afterAll(async () => ctx?.close());

  it('plays a few hundred orders, about half of them without an ad click', () => {
    expect(run.orders).toBeGreaterThan(150);
    const clickless = run.outcomes.filter((o) => o.truth === null).length / run.orders;
    expect(clickless).toBeGreaterThan(0.3);
    expect(clickless).toBeLessThan(0.6);
  });

  it('recall above the click-id baseline, and almost no click-less purchase credited', () => {
    expect(run.recall).toBeGreaterThan(base.clickId.recall);
    // 2.8–3.5 % on the report seeds; here about a hundred click-less orders: consistent with at most 5 %, within 2
    // standard errors. The contract's ladder credited 47 %.
    const clickless = run.outcomes.filter((o) => o.truth === null).length;
    expect(run.clicklessCredited).toBeLessThanOrEqual(0.05 + 2 * Math.sqrt((0.05 * 0.95) / clickless));
  });

  it('precision: about 0.95 from minConfidence 80; at the default 50 below the §13 target (docs/attribution.md says why)', () => {
    // Measured on the report seeds: 0.915–0.928 at 50. The evidence cannot tell a buyer's own
    // cross-device purchase from a housemate's click-less one on the same home network, so an
    // honest estimate of such a match is 55–75 %, and 50 credits it: the credits without an
    // explicit reference or the same browser were right 77 % of the time, and 0.95 overall would
    // need 89 % (docs/attribution.md, "Against the targets"). A regression floor here:
    expect(run.precision).toBeGreaterThanOrEqual(0.85);
    // From 80 the report seeds reach 0.964; here a few dozen orders are credited, so the check is
    // that the figure is consistent with 0.95: at most 2 standard errors below it.
    const strict = atThreshold(run, 80);
    const standardError = Math.sqrt((0.95 * 0.05) / strict.credited);
    expect(strict.precision, JSON.stringify(strict)).toBeGreaterThanOrEqual(0.95 - 2 * standardError);
    expect(strict.recall).toBeGreaterThan(base.clickId.recall);
  });

  it('every band with enough orders within 8 points of its stated confidence (within 2 standard errors where fewer)', () => {
    for (const band of run.calibration) {
      if (band.n < 20) continue;
      const p = band.stated / 100;
      const standardError = 100 * Math.sqrt((p * (1 - p)) / band.n);
      expect(Math.abs(band.observed - band.stated), JSON.stringify(band)).toBeLessThanOrEqual(Math.max(8, 2 * standardError));
    }
  });
});
