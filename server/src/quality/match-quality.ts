import type { CustomerData } from '../customer-data.js';
import type { ClicksTable, ConversionsTable } from '../db/schema.js';

/**
 * Match quality (api.md §10; docs/api.md "Match quality"): for each destination a conversion
 * goes to, which match keys it will send, which it lacks, a score 0–10 and warnings a merchant
 * can act on. Computed locally, once, when the conversion is recorded (the raw customer data is
 * in hand only then); pure — no database, no HTTP.
 *
 * The score is the sum of the weights of the keys sent (each destination's weights add up to
 * 10), so "which key is missing" translates directly into "how many points it would add".
 */

export type MatchDestination = 'meta' | 'google_ads' | 'tiktok' | 'microsoft' | 'pinterest' | 'snapchat' | 'reddit' | 'linkedin';
export type MatchKey = 'clickId' | 'email' | 'phone' | 'ipUserAgent' | 'fbp' | 'ttp' | 'scid' | 'address';

export interface MatchWarning {
  code:
    | 'fbc_stale'
    | 'fbc_malformed'
    | 'email_invalid'
    | 'phone_without_country_code'
    | 'ip_user_agent_missing'
    | 'user_data_denied'
    | 'ad_storage_denied';
  key: MatchKey;
  message: string;
}

export interface MatchQuality {
  score: number;
  keys: MatchKey[];
  missing: MatchKey[];
  warnings: MatchWarning[];
}

/**
 * Points per key. Meta's ordering follows its Event Match Quality guidance (click id and email
 * weigh most, then phone, then IP + user agent, then the browser id and the address fields);
 * Google Ads matches on the click id and, with a gclid, on hashed email and phone only; TikTok
 * on ttclid, email, phone, IP + user agent and its `_ttp` cookie; Microsoft Advertising's
 * Conversions API on the msclkid, hashed email and phone, and IP + user agent; Pinterest on the epik, email,
 * phone and IP + user agent (it has no browser id in the Conversions API); Snapchat on the ScCid,
 * email, phone, IP + user agent and its `_scid` cookie (`sc_cookie1`).
 */
export const MATCH_WEIGHTS: Record<MatchDestination, Partial<Record<MatchKey, number>>> = {
  meta: { clickId: 3, email: 3, phone: 1.5, ipUserAgent: 1.5, fbp: 0.5, address: 0.5 },
  google_ads: { clickId: 6, email: 2.5, phone: 1.5 },
  tiktok: { clickId: 3, email: 2.5, phone: 1.5, ipUserAgent: 1.5, ttp: 1.5 },
  microsoft: { clickId: 5, email: 2.5, phone: 1.5, ipUserAgent: 1 },
  // Reddit matches on the rdt_cid, the hashed email and IP + user agent (its `_rdt_uuid` is sent, not scored).
  reddit: { clickId: 4.5, email: 3, ipUserAgent: 2.5 },
  // LinkedIn matches on the li_fat_id and the hashed email (userInfo's names are sent, not scored).
  linkedin: { clickId: 6, email: 4 },
  pinterest: { clickId: 3, email: 3, phone: 1.5, ipUserAgent: 2.5 },
  snapchat: { clickId: 3, email: 2.5, phone: 1.5, ipUserAgent: 1.5, scid: 1.5 },
};

/** What a conversion carries towards one destination, before weighing (see `signalsFor`). */
export interface MatchSignals {
  /** The destination's click id that will be sent (Meta: the fbc; Google: gclid/gbraid/wbraid; TikTok: ttclid). */
  clickId?: string;
  /** Google accepts user identifiers with a gclid only; false drops email and phone for Google. */
  userIdentifiersAccepted?: boolean;
  /** Meta only: an fbc the store sent that is not in `fb.1.<ms>.<fbclid>` format (Meta drops it). */
  malformedFbc?: string;
  customerData?: CustomerData;
  ipAddress?: string;
  userAgent?: string;
  /** Meta's `_fbp` / TikTok's `_ttp` browser id. */
  browserId?: string;
  eventTime: number;
}

export interface MatchOptions {
  /**
   * Whether customer data may be sent (api.md §10 consent: `adUserData: denied` → no hashed
   * customer data, IP, user agent, fbp or ttp). Default true.
   */
  userDataAllowed?: boolean;
}

const FBC = /^fb\.\d\.(\d+)\.[A-Za-z0-9_.-]{1,500}$/;
const SHA256_HEX = /^[a-f0-9]{64}$/i;
const EMAIL = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;
const FBC_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;
const USER_DATA_KEYS: MatchKey[] = ['email', 'phone', 'ipUserAgent', 'fbp', 'ttp', 'scid', 'address'];

function present(value: string | undefined): value is string {
  return value !== undefined && value.trim() !== '';
}

/** An email that can match: a pre-hashed value counts (it cannot be checked), else it must look like an address. */
function emailState(raw: string | undefined): 'absent' | 'ok' | 'invalid' {
  if (!present(raw)) return 'absent';
  const value = raw.trim();
  return SHA256_HEX.test(value) || EMAIL.test(value) ? 'ok' : 'invalid';
}

/** A phone that can match carries its country code (`+…`, `00…`) or comes with a `country` to add it from. */
function phoneState(raw: string | undefined, country: string | undefined): 'absent' | 'ok' | 'no_country_code' {
  if (!present(raw)) return 'absent';
  const value = raw.trim();
  if (SHA256_HEX.test(value) || value.startsWith('+') || value.startsWith('00')) return 'ok';
  return present(country) ? 'ok' : 'no_country_code';
}

function hasAddress(data: CustomerData | undefined): boolean {
  if (!data) return false;
  return [data.firstName, data.lastName, data.city, data.state, data.zipCode, data.country].some(present);
}

/** Rounds to one decimal without binary noise (weights are multiples of 0.5). */
function tenth(value: number): number {
  return Math.round(value * 10) / 10;
}

/** The match quality of one conversion towards one destination. */
export function scoreMatch(destination: MatchDestination, signals: MatchSignals, options: MatchOptions = {}): MatchQuality {
  const weights = MATCH_WEIGHTS[destination];
  const allowed = options.userDataAllowed ?? true;
  const warnings: MatchWarning[] = [];
  const sent = new Set<MatchKey>();
  const data = signals.customerData;

  if (present(signals.clickId)) {
    sent.add('clickId');
    const fbc = destination === 'meta' ? FBC.exec(signals.clickId) : null;
    if (fbc && signals.eventTime - Number(fbc[1]) > FBC_MAX_AGE_MS) {
      warnings.push({
        code: 'fbc_stale',
        key: 'clickId',
        message: 'fbc older than 7 days: Meta gives old click ids less weight; send the fbc of the latest click',
      });
    }
  } else if (destination === 'meta' && present(signals.malformedFbc)) {
    warnings.push({
      code: 'fbc_malformed',
      key: 'clickId',
      message: 'fbclid not in fbc format: send fbc as fb.1.<click time in ms>.<fbclid> (or send the fbclid as fbclid)',
    });
  }

  const identifiers = destination !== 'google_ads' || (signals.userIdentifiersAccepted ?? true);
  const email = emailState(data?.email);
  if (email === 'ok' && identifiers) sent.add('email');
  if (email === 'invalid') {
    warnings.push({ code: 'email_invalid', key: 'email', message: 'email not a valid address: it cannot match anyone' });
  }
  const phone = phoneState(data?.phone, data?.country);
  if (phone === 'ok' && identifiers) sent.add('phone');
  if (phone === 'no_country_code') {
    warnings.push({
      code: 'phone_without_country_code',
      key: 'phone',
      message: 'phone without country code: send it with +<country code>, or send customerData.country',
    });
  }
  if ('ipUserAgent' in weights) {
    if (present(signals.ipAddress) && present(signals.userAgent)) sent.add('ipUserAgent');
    else {
      warnings.push({
        code: 'ip_user_agent_missing',
        key: 'ipUserAgent',
        message: "no IP address and user agent: a server-side integration should send the buyer's ipAddress and userAgent",
      });
    }
  }
  if (present(signals.browserId)) sent.add(destination === 'tiktok' ? 'ttp' : destination === 'snapchat' ? 'scid' : 'fbp');
  if (hasAddress(data)) sent.add('address');

  if (!allowed) {
    const withheld = USER_DATA_KEYS.filter((key) => sent.has(key) && key in weights);
    for (const key of withheld) sent.delete(key);
    if (withheld.length > 0) {
      warnings.push({
        code: 'user_data_denied',
        key: withheld[0] as MatchKey,
        message: `consent adUserData is denied: ${withheld.join(', ')} not sent`,
      });
    }
  }

  const all = Object.keys(weights) as MatchKey[];
  const keys = all.filter((key) => sent.has(key));
  const missing = all.filter((key) => !sent.has(key));
  const score = tenth(keys.reduce((sum, key) => sum + (weights[key] ?? 0), 0));
  return { score, keys, missing, warnings };
}

/**
 * The signals of a conversion towards one destination, mirroring what each sends: Meta the
 * click's fbc (or a well-formed fbc the store sent), IP and user agent of the conversion or else
 * its click, fbp; Google the gclid/gbraid/wbraid of the click or named explicitly; TikTok the
 * ttclid and ttp likewise; Microsoft the msclkid, Pinterest the epik, Snapchat the ScCid and the
 * scid cookie, Reddit the rdt_cid, LinkedIn the li_fat_id (each platform's folder under
 * destinations/: meta/event.ts, google_ads/, tiktok/, microsoft/mapping.ts, …).
 */
export function signalsFor(
  destination: MatchDestination,
  conversion: ConversionsTable,
  click: ClicksTable | undefined,
  customerData: CustomerData | undefined,
): MatchSignals {
  const refs = conversion.ref_ids ? (JSON.parse(conversion.ref_ids) as Record<string, string>) : {};
  const common = {
    customerData,
    ipAddress: conversion.ip_address ?? click?.ip_address ?? undefined,
    userAgent: conversion.user_agent ?? click?.user_agent ?? undefined,
    eventTime: conversion.event_time,
  };
  if (destination === 'meta') {
    const ref = conversion.ref_fbc ?? undefined;
    const refOk = ref !== undefined && FBC.test(ref);
    const clickId = click ? click.fbc || undefined : refOk ? ref : undefined;
    return {
      ...common,
      clickId,
      ...(ref !== undefined && !refOk && { malformedFbc: ref }),
      browserId: conversion.fbp ?? click?.fbp ?? undefined,
    };
  }
  if (destination === 'google_ads') {
    const kinds = ['gclid', 'gbraid', 'wbraid'] as const;
    const kind = kinds.find((k) => click?.[k]) ?? kinds.find((k) => refs[k]);
    const clickId = kind ? (click?.[kind] ?? refs[kind] ?? undefined) : undefined;
    return { ...common, clickId, userIdentifiersAccepted: kind === 'gclid' };
  }
  if (destination === 'microsoft') return { ...common, clickId: click?.msclkid || refs.msclkid || undefined };
  if (destination === 'reddit') return { ...common, clickId: click?.rdt_cid ?? refs.rdt_cid };
  if (destination === 'linkedin') return { ...common, clickId: click?.li_fat_id ?? refs.li_fat_id };
  if (destination === 'pinterest') return { ...common, clickId: click?.epik ?? refs.epik };
  if (destination === 'snapchat')
    return { ...common, clickId: click?.ScCid ?? refs.ScCid, browserId: conversion.scid ?? undefined };
  return {
    ...common,
    clickId: click?.ttclid ?? refs.ttclid,
    browserId: conversion.ttp ?? click?.ttp ?? undefined,
  };
}

/** Match quality for each destination the conversion goes to (`matchQuality` of the API). */
export function matchQualityOf(
  destinations: MatchDestination[],
  conversion: ConversionsTable,
  click: ClicksTable | undefined,
  customerData: CustomerData | undefined,
  options: MatchOptions = {},
): Partial<Record<MatchDestination, MatchQuality>> {
  const out: Partial<Record<MatchDestination, MatchQuality>> = {};
  for (const destination of destinations) {
    out[destination] = scoreMatch(destination, signalsFor(destination, conversion, click, customerData), options);
  }
  return out;
}
