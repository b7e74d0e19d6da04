import { type AmbiguityKind, ambiguityKey, ambiguityValues, dayOf, isIpv6Network, networkKey } from '../ambiguity-keys.js';
import { sha256Hex } from '../customer-data.js';
import type { Reader } from '../db/database.js';
import { clicksByIds } from '../db/repositories/click-ids.js';
import { type EvidenceClick, evidenceClicks } from '../db/repositories/evidence.js';
import type { ClicksTable } from '../db/schema.js';
import {
  type Attribution,
  type AttributionPolicy,
  attribute,
  CLICK_AFTER_CONVERSION_TOLERANCE_MS,
  type ClickFacts,
  type ConversionFacts,
  countsRead,
  explainMiss,
  type Miss,
  scoreCandidates,
} from './model.js';

/** Per signal, at most this many of the most recent matching clicks are considered. */
export const CANDIDATES_PER_SIGNAL = 20;
/**
 * Per ambiguity count, at most this many (day, browser) rows are read: a value shared that much
 * (a busy CGNAT address, a campus) is worth next to nothing as evidence whatever its exact count.
 */
export const COUNT_ROWS = 128;
const DAY_MS = 86_400_000;

/** What a conversion tells about the visitor, as it was recorded. */
export interface ConversionClues {
  accountId: string;
  storeId: string;
  livemode: boolean;
  time: number;
  clickId?: string;
  fbclid?: string;
  fbc?: string;
  /** Other click ids the conversion names (gclid, gbraid, wbraid, ttclid, msclkid): explicit references. */
  clickIds?: Array<{ kind: string; value: string }>;
  fingerprint?: string;
  ipAddress?: string;
  userAgent?: string;
  /** The conversion's browser ids (same-browser evidence). */
  fbp?: string;
  ttp?: string;
  visitorId?: string;
  emailHash?: string;
  phoneHash?: string;
  /** When re-attributing a stored conversion: itself, which must not count as its own identity link. */
  conversionId?: string;
}

/** The fbclid inside an fbc value `fb.<subdomain>.<creation ms>.<fbclid>`. */
export function fbclidFromFbc(fbc: string): string | undefined {
  return /^fb\.\d\.\d+\.([A-Za-z0-9_.-]{1,500})$/.exec(fbc)?.[1];
}

export function toClickFacts(row: EvidenceClick): ClickFacts {
  return {
    id: row.id,
    fbclid: row.fbclid,
    storeId: row.store_id,
    livemode: row.livemode === 1,
    clickTime: row.click_time,
    isBot: row.is_bot === 1,
    fingerprint: row.fingerprint,
    derivedFingerprint: row.derived_fingerprint,
    ipAddress: row.ip_address,
    userAgent: row.user_agent,
    fbp: row.fbp,
    ttp: row.ttp ?? null,
    visitorId: row.visitor_id ?? null,
  };
}

/** The days of a window, newest first (the counts read one seek per day). */
function daysOf(from: number, to: number): number[] {
  const days: number[] = [];
  for (let day = dayOf(to); day >= dayOf(from); day--) days.push(day);
  return days;
}

/**
 * Loads the clicks that may explain a conversion (an index-backed lookup per signal, each an
 * exact key inside the window), and the conversion's facts for the pure scoring in model.ts.
 */
export async function gatherEvidence(
  db: Reader,
  clues: ConversionClues,
  windowDays: number,
  /** Filled with the clicks found, by id, when the engine read whole rows (`EvidenceClicks.whole`). */
  rows?: Map<string, ClicksTable>,
): Promise<{ conversion: ConversionFacts; clicks: ClickFacts[] }> {
  const livemode = clues.livemode ? 1 : 0;
  const scope = {
    storeId: clues.storeId,
    livemode,
    from: clues.time - windowDays * DAY_MS,
    to: clues.time + CLICK_AFTER_CONVERSION_TOLERANCE_MS,
  };
  const fbclids = [clues.fbclid, clues.fbc ? fbclidFromFbc(clues.fbc) : undefined].filter((f): f is string => Boolean(f));
  const derived = new Set(
    [
      clues.fingerprint,
      clues.ipAddress && clues.userAgent ? sha256Hex(`${clues.ipAddress}|${clues.userAgent}`) : undefined,
    ].filter((v): v is string => Boolean(v)),
  );
  const network = networkKey(clues.ipAddress);
  const values = ambiguityValues(clues);
  const keys: Partial<Record<AmbiguityKind, number>> = {};
  for (const [kind, value] of Object.entries(values) as Array<[AmbiguityKind, string]>) {
    keys[kind] = ambiguityKey(clues.storeId, livemode, kind, value);
  }
  // Named by another click id: looked up by its key only when the conversion has one.
  const named = clues.clickIds?.length ? await clicksByIds(db, clues.storeId, livemode, clues.clickIds) : [];
  const facts = {
    storeId: clues.storeId,
    livemode: clues.livemode,
    time: clues.time,
    fbclids,
    clickId: clues.clickId,
    fingerprint: clues.fingerprint,
    ipAddress: clues.ipAddress,
    userAgent: clues.userAgent,
    fbp: clues.fbp,
    ttp: clues.ttp,
    visitorId: clues.visitorId,
    ...(named.length > 0 && { explicitClickIds: new Set(named.map((c) => c.id)) }),
  };
  // The counts scoring can read (model.ts), from what the clicks show (identity evidence reads none).
  const needed = (rows: EvidenceClick[]) =>
    countsRead([...rows, ...named].map(toClickFacts), { ...facts, identityClickIds: new Set<string>() });
  const found = await evidenceClicks(db, {
    accountId: clues.accountId,
    scope,
    clickId: clues.clickId,
    fbclids: [...new Set(fbclids)],
    fingerprint: clues.fingerprint,
    derivedFingerprints: [...derived],
    // IPv4 by the address, IPv6 by its /64 (ambiguity-keys.ts).
    ...(network && (isIpv6Network(network) ? { ipNetwork: network } : { ipAddress: network })),
    browsers: { visitorId: clues.visitorId, fbp: clues.fbp, ttp: clues.ttp },
    identity: {
      emailHash: clues.emailHash,
      phoneHash: clues.phoneHash,
      // A conversion's click is at most the tolerance after it: so a conversion that named a
      // click of the window is at most that much earlier than the window.
      after: scope.from - CLICK_AFTER_CONVERSION_TOLERANCE_MS,
      before: clues.time,
      excludeId: clues.conversionId,
    },
    limit: CANDIDATES_PER_SIGNAL,
    counts: { days: daysOf(scope.from, scope.to), keys, limit: COUNT_ROWS, needed },
  });

  if (rows && found.whole) for (const row of found.clicks) rows.set(row.id, row as ClicksTable);
  const clicks = [...found.clicks, ...named].map(toClickFacts);
  // The buyer's browsers: those of the earlier conversions, those identify linked to the buyer
  // (POST /v1/track/identify), and those of the clicks the earlier conversions were attributed to.
  const identityBrowsers = new Set<string>();
  const link = (ids: { visitorId?: string | null; fbp?: string | null; ttp?: string | null }) => {
    if (ids.visitorId) identityBrowsers.add(`v:${ids.visitorId}`);
    if (ids.fbp) identityBrowsers.add(`f:${ids.fbp}`);
    if (ids.ttp) identityBrowsers.add(`t:${ids.ttp}`);
  };
  for (const browser of found.linkedBrowsers) link(browser);
  const identityClickIds = new Set(found.identityClickIds);
  for (const click of clicks) if (identityClickIds.has(click.id)) link(click);
  return {
    conversion: { ...facts, identityClickIds, identityBrowsers, shared: found.shared },
    clicks,
  };
}

/** Gathers the evidence for a conversion and scores it under the store's policy. */
export async function attributeConversion(
  db: Reader,
  clues: ConversionClues,
  policy: AttributionPolicy,
  /** See `gatherEvidence`. */
  rows?: Map<string, ClicksTable>,
): Promise<Attribution> {
  const { conversion, clicks } = await gatherEvidence(db, clues, policy.windowDays, rows);
  return attribute(conversion, clicks, policy);
}

/** Why a conversion has no winner under the store's policy, with the clicks known now. */
export async function explainUnattributed(db: Reader, clues: ConversionClues, policy: AttributionPolicy): Promise<Miss> {
  const { conversion, clicks } = await gatherEvidence(db, clues, policy.windowDays);
  return explainMiss(scoreCandidates(conversion, clicks, policy.windowDays), policy);
}
