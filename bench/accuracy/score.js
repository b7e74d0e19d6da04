// The figures of an accuracy run (docs/attribution.md): precision, recall, click-less purchases
// credited to a click, the calibration table (stated vs observed per 10-point band), two
// baselines computed from the same traffic, and the errors by mechanism.
import { WINDOW } from './generate.js';

const TOLERANCE = 5 * 60_000;
const fbclidOf = (fbc) => /^fb\.\d\.\d+\.(.+)$/.exec(fbc ?? '')?.[1];

/** Precision, recall and click-less credited of a list of `{ truth, credited }` (refs or null). */
export function rates(outcomes) {
  const credited = outcomes.filter((o) => o.credited !== null);
  const withTruth = outcomes.filter((o) => o.truth !== null);
  const clickless = outcomes.filter((o) => o.truth === null);
  const right = credited.filter((o) => o.credited === o.truth).length;
  return {
    orders: outcomes.length,
    credited: credited.length,
    precision: credited.length ? right / credited.length : 1,
    recall: withTruth.length ? right / withTruth.length : 1,
    clicklessCredited: clickless.length ? clickless.filter((o) => o.credited !== null).length / clickless.length : 0,
  };
}

/** The two baselines on the same traffic: click id only, and the last click with the same IP + user agent. */
export function baselines(traffic) {
  const clicks = traffic.events.filter((e) => e.kind === 'click');
  const byFbclid = new Map(clicks.map((c) => [c.body.fbclid, c]));
  const inWindow = (click, order) => click.at <= order.at + TOLERANCE && order.at - click.at <= WINDOW;
  const clickId = [];
  const ipUserAgent = [];
  const seen = [];
  let next = 0;
  for (const order of traffic.events.filter((e) => e.kind === 'order')) {
    while (next < clicks.length && clicks[next].at <= order.at) seen.push(clicks[next++]);
    const named = byFbclid.get(fbclidOf(order.body.fbc));
    clickId.push({ truth: order.truth, credited: named && inWindow(named, order) ? named.ref : null });
    let last = null;
    for (let i = seen.length - 1; i >= 0 && order.at - seen[i].at <= WINDOW; i--) {
      const c = seen[i];
      if (c.body.ipAddress === order.body.ipAddress && c.body.userAgent === order.body.userAgent) {
        last = c.ref;
        break;
      }
    }
    ipUserAgent.push({ truth: order.truth, credited: last });
  }
  return { clickId: rates(clickId), ipUserAgent: rates(ipUserAgent) };
}

/**
 * Waytrack's figures from a played run (drive.js): each order's attribution as answered, and its
 * best candidate's confidence as recorded (the stated probability, also below minConfidence).
 */
export function scoreRun(traffic, played) {
  const refOf = new Map([...played.clickIds].map(([ref, id]) => [id, ref]));
  const personOf = new Map(traffic.events.filter((e) => e.kind === 'click').map((c) => [c.ref, c.person]));
  const outcomes = played.orders.map(({ event, result, candidates }) => {
    const best = candidates[0];
    return {
      event,
      truth: event.truth,
      credited: result.attributed ? (refOf.get(result.attributedTo.clickId) ?? -1) : null,
      stated: best ? best.confidence : null,
      best: best ? (refOf.get(best.clickId) ?? -1) : null,
      kinds: best ? best.evidence.map((e) => e.kind) : [],
    };
  });
  // Calibration: every order with a best candidate, by the band of its stated confidence.
  const bands = new Map();
  for (const o of outcomes) {
    if (o.stated === null) continue;
    const band = o.stated === 100 ? 100 : Math.floor(o.stated / 10) * 10;
    const entry = bands.get(band) ?? { band, n: 0, stated: 0, right: 0 };
    entry.n++;
    entry.stated += o.stated;
    if (o.best === o.truth) entry.right++;
    bands.set(band, entry);
  }
  const calibration = [...bands.values()]
    .sort((a, b) => a.band - b.band)
    .map((b) => ({ band: b.band, n: b.n, stated: b.stated / b.n, observed: (100 * b.right) / b.n }));
  // Errors by mechanism (the order's own: organic, same browser, cookies lost, in-app → browser, cross-device).
  const mechanisms = new Map();
  for (const o of outcomes) {
    const key = o.event.mechanism;
    const m = mechanisms.get(key) ?? { mechanism: key, n: 0, right: 0, missed: 0, otherPerson: 0, ownOlder: 0, clickless: 0 };
    m.n++;
    if (o.truth === null) {
      if (o.credited !== null) m.clickless++;
      else m.right++;
    } else if (o.credited === o.truth) m.right++;
    else if (o.credited === null) m.missed++;
    else if (personOf.get(o.credited) === o.event.person) m.ownOlder++;
    else m.otherPerson++;
    mechanisms.set(key, m);
  }
  return { ...rates(outcomes), calibration, mechanisms: [...mechanisms.values()], outcomes };
}

/** The figures had the store's minConfidence been `threshold`: each order credited to its best candidate when stated ≥ it. */
export function atThreshold(run, threshold) {
  return rates(
    run.outcomes.map((o) => ({ truth: o.truth, credited: o.stated !== null && o.stated >= threshold ? o.best : null })),
  );
}

/** The targets (api.md §13): precision ≥ 0.95, every band within 8 points, recall above the click-id baseline's. */
export function targetsMet(run, base, { minBand = 0 } = {}) {
  const bands = run.calibration.filter((b) => b.n >= minBand);
  const worst = Math.max(0, ...bands.map((b) => Math.abs(b.observed - b.stated)));
  return {
    precision: run.precision >= 0.95,
    calibration: worst <= 8,
    worstBandGap: worst,
    recall: run.recall > base.clickId.recall,
  };
}
