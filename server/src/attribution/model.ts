/**
 * Attribution as pure functions (api.md §13): which clicks may be credited for a conversion, the
 * evidence linking each to it, the probability that a candidate is the buyer's own most recent ad
 * click in the window (attribution/probability.ts), and which click wins. No I/O here: the
 * database narrows the clicks worth looking at and counts how ambiguous each piece of evidence is
 * in the store's data (attribution/evidence.ts).
 */
import { type AmbiguityKind, browserOf, networkKey } from '../ambiguity-keys.js';
import {
  ageBucket,
  confidenceOf,
  type Evidence,
  SAME_BROWSER_CONFIDENCE,
  SIGNALS,
  type Signal,
  shareOf,
  weightOf,
} from './probability.js';

/**
 * Kinds of evidence, strongest first (api.md §13). The first three say whose click it is (the
 * conversion named it, came from its browser, or from a browser its buyer was linked to); the
 * others only make it probable, as much as the store's data says the value is rare. `ip_device`
 * (the same network and the same device, another browser: the user agents' platform parts agree,
 * e.g. Meta's in-app browser and Safari on one iPhone) refines IP evidence (docs/api.md).
 */
export { type Evidence, SIGNALS, type Signal } from './probability.js';

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
  fbp?: string | null;
  ttp?: string | null;
  visitorId?: string | null;
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
  /** The conversion's browser ids: same-browser evidence. */
  fbp?: string;
  ttp?: string;
  visitorId?: string;
  /** Clicks that earlier conversions with the same hashed email or phone were attributed to. */
  identityClickIds: ReadonlySet<string>;
  /** Browsers (`browserOf` keys: `v:…`, `f:…`, `t:…`) earlier conversions of the same buyer came from. */
  identityBrowsers?: ReadonlySet<string>;
  /** Clicks the conversion names by another click id (gclid, gbraid, wbraid, ttclid, msclkid). */
  explicitClickIds?: ReadonlySet<string>;
  /** Distinct browsers with a click in the window sharing the conversion's IP, IP + user agent, fingerprint (the store's counts). */
  shared?: Partial<Record<AmbiguityKind, number>>;
}

export interface AttributionPolicy {
  windowDays: number;
  minConfidence: number;
}

/** One piece of evidence about a candidate, and how many distinct browsers in the window share it (the candidate's included). */
export interface Touchpoint {
  clickId: string;
  fbclid: string;
  /** The strongest piece of evidence. */
  signal: Signal;
  /** Confidence 0–100: the estimated probability that this is the buyer's most recent ad click in the window. */
  score: number;
  clickTime: number;
  /** Every piece of evidence, strongest first. */
  evidence: Evidence[];
  /** The browser the click came from (`browserOf`). */
  browser: string;
}

export interface Attribution {
  winner: Touchpoint | null;
  /** The winner and the buyer's other clicks in the window (its browser's), for the multi-touch models. */
  touchpoints: Touchpoint[];
  /** Every candidate (one per browser), best first: the winner and the runners-up of the explanation. */
  candidates: Touchpoint[];
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

const browserOfClick = (click: ClickFacts) => browserOf(click.id, click);

/** What a conversion shows of its network and device, worked out once per conversion, not per click. */
interface Seen {
  network: string | null;
  ipv6: boolean;
  platform: string | null;
}
const seenOf = new WeakMap<ConversionFacts, Seen>();
function seen(conversion: ConversionFacts): Seen {
  let facts = seenOf.get(conversion);
  if (!facts) {
    const network = networkKey(conversion.ipAddress);
    facts = { network, ipv6: network?.endsWith('/64') ?? false, platform: platformOf(conversion.userAgent) };
    seenOf.set(conversion, facts);
  }
  return facts;
}

/** Whether a click's address is on the conversion's network (an IPv4 address compared as text, without parsing). */
function onNetwork(ip: string | null, conversion: ConversionFacts, facts: Seen): boolean {
  if (!ip || !facts.network) return false;
  if (ip === conversion.ipAddress || ip === facts.network) return true;
  // An IPv4 network is one address: another IPv4 address is not on it (an IPv4-mapped one has a colon).
  if (!facts.ipv6 && !ip.includes(':')) return false;
  return networkKey(ip) === facts.network;
}

/** The kinds of evidence linking a click to a conversion, strongest first (empty when nothing does). */
export function evidenceKinds(click: ClickFacts, conversion: ConversionFacts): Signal[] {
  const kinds: Signal[] = [];
  if (
    click.id === conversion.clickId ||
    conversion.fbclids.includes(click.fbclid) ||
    conversion.explicitClickIds?.has(click.id)
  ) {
    kinds.push('explicit');
  }
  const same = (a: string | null | undefined, b: string | undefined) => Boolean(a && b && a === b);
  if (same(click.visitorId, conversion.visitorId) || same(click.fbp, conversion.fbp) || same(click.ttp, conversion.ttp)) {
    kinds.push('same_browser');
  }
  const linked = conversion.identityBrowsers;
  if (
    conversion.identityClickIds.has(click.id) ||
    (linked &&
      linked.size > 0 &&
      ((click.visitorId && linked.has(`v:${click.visitorId}`)) ||
        (click.fbp && linked.has(`f:${click.fbp}`)) ||
        (click.ttp && linked.has(`t:${click.ttp}`))))
  ) {
    kinds.push('identity');
  }
  const fp = conversion.fingerprint;
  const facts = seen(conversion);
  const sameNetwork = onNetwork(click.ipAddress, conversion, facts);
  const sameAgent = Boolean(conversion.userAgent) && click.userAgent === conversion.userAgent;
  if ((fp && click.derivedFingerprint === fp) || (sameNetwork && sameAgent)) kinds.push('ip_user_agent');
  else if (sameNetwork && facts.platform !== null && platformOf(click.userAgent) === facts.platform) kinds.push('ip_device');
  if (fp && click.fingerprint === fp) kinds.push('fingerprint');
  if (sameNetwork) kinds.push('ip');
  return kinds;
}

/**
 * The ambiguity counts the scoring of these clicks can read (`sharing`): a kind's count when some
 * click shows that kind, and the IP's also for IP + user agent and IP + device, whose weight it
 * divides (probability.ts). A superset of what is read: counting only these changes no score.
 */
export function countsRead(clicks: ClickFacts[], conversion: ConversionFacts): Set<AmbiguityKind> {
  const read = new Set<AmbiguityKind>();
  for (const click of clicks) {
    for (const kind of evidenceKinds(click, conversion)) {
      if (kind === 'ip' || kind === 'ip_user_agent' || kind === 'ip_device') read.add('ip');
      if (kind === 'ip_user_agent' || kind === 'fingerprint') read.add(kind);
    }
  }
  return read;
}

/**
 * The platform part of a user agent, its first parenthesized group (`iPhone; CPU iPhone OS 18_1
 * like Mac OS X`): the same in every browser of one device that shows it, Meta's and Instagram's
 * in-app browsers included. Null when there is none.
 */
export function platformOf(userAgent: string | null | undefined): string | null {
  return userAgent ? (/\(([^)]+)\)/.exec(userAgent)?.[1] ?? null) : null;
}

/** A candidate browser: its clicks in the window that the evidence found, most recent first. */
interface Group {
  browser: string;
  clicks: Array<{ click: ClickFacts; kinds: Signal[] }>;
  kinds: Set<Signal>;
}

const byRecency = (a: { clickTime: number; id: string }, b: { clickTime: number; id: string }) =>
  b.clickTime - a.clickTime || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

/** A click's browser ids as keys (`browserOf`'s forms); a click without any is a browser of its own. */
function browserKeys(click: ClickFacts): string[] {
  const keys = [click.visitorId && `v:${click.visitorId}`, click.fbp && `f:${click.fbp}`, click.ttp && `t:${click.ttp}`];
  const present = keys.filter((k): k is string => Boolean(k));
  return present.length > 0 ? present : [browserOfClick(click)];
}

/**
 * The candidates' browsers, each with the evidence of all its clicks. Clicks that share any
 * browser id are one browser (a click from before the tag set its visitor id carries only the
 * fbp), and so are all the clicks the conversion's own ids name: one browser, the buyer's.
 */
function groupsOf(conversion: ConversionFacts, clicks: ClickFacts[], windowDays: number): Group[] {
  const seen = new Set<string>();
  const found: Array<{ click: ClickFacts; kinds: Signal[] }> = [];
  for (const click of [...clicks].sort(byRecency)) {
    if (seen.has(click.id) || !isCandidate(click, conversion, windowDays)) continue;
    seen.add(click.id);
    const kinds = evidenceKinds(click, conversion);
    if (kinds.length > 0) found.push({ click, kinds });
  }
  // Union-find over browser keys; the conversion's own browser is the key 'conversion'.
  const parent = new Map<string, string>();
  const root = (key: string): string => {
    let at = key;
    while (parent.has(at) && parent.get(at) !== at) at = parent.get(at) as string;
    return at;
  };
  const join = (a: string, b: string) => {
    const [ra, rb] = [root(a), root(b)];
    // The smaller key is the root: the grouping never depends on the order clicks came in.
    if (ra === rb) return;
    const [low, high] = [ra, rb].sort();
    parent.set(high as string, low as string);
  };
  for (const { click, kinds } of found) {
    const keys = browserKeys(click);
    for (const key of keys) join(keys[0] as string, key);
    if (kinds.includes('same_browser')) join('conversion', keys[0] as string);
  }
  const groups = new Map<string, Group>();
  for (const entry of found) {
    const browser = root(browserKeys(entry.click)[0] as string);
    const group = groups.get(browser) ?? { browser, clicks: [], kinds: new Set<Signal>() };
    group.clicks.push(entry);
    for (const kind of entry.kinds) group.kinds.add(kind);
    groups.set(browser, group);
  }
  return [...groups.values()];
}

/** How many distinct browsers share each piece: the store's count, never fewer than the candidates that show it. */
function sharing(conversion: ConversionFacts, groups: Group[]): (kind: Signal) => number {
  const among = new Map<Signal, number>();
  for (const group of groups) for (const kind of group.kinds) among.set(kind, (among.get(kind) ?? 0) + 1);
  return (kind) => {
    // ip_device has no count of its own: the candidates found by IP show who shares it.
    const counted = kind === 'ip' || kind === 'ip_user_agent' || kind === 'fingerprint' ? (conversion.shared?.[kind] ?? 0) : 0;
    return Math.max(1, counted, among.get(kind) ?? 0);
  };
}

/**
 * Every candidate (one per browser: the click that stands for it) scored, best first: highest
 * confidence, ties to the most recent click, then the larger id, so the order never depends on
 * the order clicks were found in. No threshold: the store's `minConfidence` is applied by `attribute`.
 *
 * An explicit reference is 100 for the click it names. Otherwise a browser with same-browser
 * evidence has its most recent click at SAME_BROWSER_CONFIDENCE (≥ 90). Every other browser gets
 * its share of the probability the rest leaves (probability.ts), at most 100 ÷ k when k browsers
 * show exactly the same evidence (the same kinds, from clicks of the same age bucket).
 */
export function scoreCandidates(conversion: ConversionFacts, clicks: ClickFacts[], windowDays: number): Touchpoint[] {
  return scored(groupsOf(conversion, clicks, windowDays), conversion);
}

function scored(groups: Group[], conversion: ConversionFacts): Touchpoint[] {
  const sharedBy = sharing(conversion, groups);
  const present = (group: Group, click: ClickFacts, score: number): Touchpoint => {
    const evidence = SIGNALS.filter((k) => group.kinds.has(k)).map((kind) => ({ kind, sharedBy: sharedBy(kind) }));
    return {
      clickId: click.id,
      fbclid: click.fbclid,
      signal: evidence[0]?.kind as Signal,
      score,
      clickTime: click.clickTime,
      evidence,
      browser: group.browser,
    };
  };
  // The click a browser is represented by: the one named explicitly, else its most recent.
  const representative = (group: Group) =>
    (group.clicks.find((c) => c.kinds.includes('explicit')) ?? (group.clicks[0] as Group['clicks'][number])).click;
  const certain = groups.filter((g) => g.kinds.has('explicit'));
  const sameBrowser = groups.filter((g) => !g.kinds.has('explicit') && g.kinds.has('same_browser'));
  const rest = groups.filter((g) => !g.kinds.has('explicit') && !g.kinds.has('same_browser'));
  // What the evidence that says whose click it is leaves to the others.
  const taken = certain.length > 0 ? 1 : sameBrowser.length > 0 ? SAME_BROWSER_CONFIDENCE / 100 : 0;
  const weights = rest.map((g) => {
    const age = conversion.time - representative(g).clickTime;
    return weightOf(
      SIGNALS.filter((k) => g.kinds.has(k)).map((kind) => ({ kind, sharedBy: sharedBy(kind) })),
      sharedBy('ip'),
      age,
    );
  });
  const shares = shareOf(weights, taken);
  // Evidence is shared equally when the kinds are the same and so is the click's age bucket: the
  // time since the click is evidence too (§13), and the most recent of two otherwise equal clicks
  // was the truth about two times in three on the calibration seeds (capped at 50 it was stated
  // 15 points too low).
  const bucketOf = (g: Group) => ageBucket(conversion.time - representative(g).clickTime);
  const sameEvidence = (g: Group) =>
    rest.filter((o) => o.kinds.size === g.kinds.size && [...g.kinds].every((k) => o.kinds.has(k)) && bucketOf(o) === bucketOf(g))
      .length;
  const all = [
    ...certain.map((g) => present(g, representative(g), 100)),
    // An explicit reference leaves nothing to another browser's id.
    ...sameBrowser.map((g) => present(g, representative(g), certain.length > 0 ? 0 : SAME_BROWSER_CONFIDENCE)),
    ...rest.map((g, i) =>
      present(g, representative(g), Math.min(confidenceOf(shares[i] as number), Math.floor(100 / sameEvidence(g)))),
    ),
  ];
  return all.sort((a, b) => b.score - a.score || b.clickTime - a.clickTime || (a.clickId < b.clickId ? 1 : -1));
}

/**
 * Scores every candidate and picks the winner, the most probable (`scoreCandidates`), when it
 * reaches the store's threshold. Its touchpoints are the winner and the other clicks in the window
 * from its browser, or that the conversion names or comes from the browser of: the buyer's clicks.
 */
export function attribute(conversion: ConversionFacts, clicks: ClickFacts[], policy: AttributionPolicy): Attribution {
  const groups = groupsOf(conversion, clicks, policy.windowDays);
  const candidates = scored(groups, conversion);
  const best = candidates[0];
  if (!best || best.score < policy.minConfidence) return { winner: null, touchpoints: [], candidates };
  const touchpoints: Touchpoint[] = [best];
  for (const group of groups) {
    for (const { click, kinds } of group.clicks) {
      if (click.id === best.clickId) continue;
      const buyers = group.browser === best.browser || kinds.includes('explicit') || kinds.includes('same_browser');
      if (!buyers) continue;
      const evidence = kinds.map((kind) => ({ kind, sharedBy: 1 }));
      touchpoints.push({
        ...best,
        clickId: click.id,
        fbclid: click.fbclid,
        clickTime: click.clickTime,
        signal: kinds[0] as Signal,
        evidence,
        browser: group.browser,
      });
    }
  }
  return { winner: best, touchpoints, candidates };
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
