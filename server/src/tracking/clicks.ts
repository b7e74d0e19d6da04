import { isbot } from 'isbot';
import { isIpv6Network, networkKey } from '../ambiguity-keys.js';
import { presentConsent } from '../consent/consent.js';
import { sha256Hex } from '../customer-data.js';
import type { Database } from '../db/database.js';
import { insertMultiIdClickOnce } from '../db/repositories/click-ids.js';
import { findClick, listClicks, writeClickOnce } from '../db/repositories/clicks.js';
import type { Page } from '../db/repositories/keyset.js';
import type { ClicksTable } from '../db/schema.js';
import { fieldError } from '../http/errors.js';
import { clickNotFound } from '../http/not-found.js';
import { newId } from '../ids.js';
import { requireActiveStoreCached, requireStore } from '../stores/lookup.js';
import { modeFlag, type Tenant } from '../tenancy.js';
import {
  type ClickIds,
  clickIdsOf,
  keyOfClickWithoutFbclid,
  OTHER_CLICK_ID_KINDS,
  type OtherClickIdKind,
  realFbclid,
} from './click-ids.js';
import { type ConsentFields, checkLimitedDataUse, consentColumns } from './consent-input.js';
import { checkHttpUrl, checkIpAddress, parseEventTime } from './input.js';

export const CLICK_MAX_AGE_MS = 90 * 24 * 60 * 60 * 1000;

export interface ClickInput extends ConsentFields {
  /** At least one of fbclid, gclid, gbraid, wbraid, ttclid, msclkid, epik, ScCid, rdt_cid, li_fat_id (here or in landingPage's query). */
  fbclid?: string;
  gclid?: string;
  gbraid?: string;
  wbraid?: string;
  ttclid?: string;
  msclkid?: string;
  epik?: string;
  ScCid?: string;
  rdt_cid?: string;
  li_fat_id?: string;
  /** TikTok's `_ttp` browser id. */
  ttp?: string;
  /** The tag's first-party visitor id (`_wt_vid`): same-browser evidence (api.md §13). */
  visitorId?: string;
  storeId: string;
  landingPage: string;
  referrer?: string;
  ipAddress?: string;
  userAgent?: string;
  timestamp?: string;
  fingerprint?: string;
  fbp?: string;
}

export interface ClickResult extends ClickIds {
  clickId: string;
  tracked: true;
  timestamp: string;
  duplicate: boolean;
}

/** The fbc Meta expects for a click: `fb.1.<click time ms>.<fbclid>` with the fbclid verbatim. */
export function fbcOf(clickTimeMs: number, fbclid: string): string {
  return `fb.1.${clickTimeMs}.${fbclid}`;
}

/** `sha256_hex(ip + "|" + userAgent)`: the fingerprint a store backend can compute from an order. */
export function derivedFingerprint(ipAddress: string | undefined, userAgent: string | undefined): string | null {
  return ipAddress && userAgent ? sha256Hex(`${ipAddress}|${userAgent}`) : null;
}

/** An IPv6 address's /64, the key its candidates are found by (ambiguity-keys.ts); null for IPv4. */
function ipNetworkOf(ipAddress: string | undefined): string | null {
  const network = networkKey(ipAddress);
  return isIpv6Network(network) ? network : null;
}

/**
 * isbot's one large regular expression costs ~20 µs per user agent; real traffic repeats a few
 * thousand user agents, so the answers are kept (a bounded map, emptied when full).
 */
const botAnswers = new Map<string, boolean>();
function isBot(userAgent: string): boolean {
  let answer = botAnswers.get(userAgent);
  if (answer === undefined) {
    answer = isbot(userAgent);
    if (botAnswers.size >= 10_000) botAnswers.clear();
    botAnswers.set(userAgent, answer);
  }
  return answer;
}

const UTM_KEYS = ['utm_source', 'utm_medium', 'utm_campaign', 'utm_content', 'utm_term'] as const;
const AD_KEYS = ['campaign_id', 'adset_id', 'ad_id'] as const;

function campaignParams(params: URLSearchParams): Pick<ClicksTable, (typeof UTM_KEYS)[number] | (typeof AD_KEYS)[number]> {
  const read = (key: string) => {
    const value = params.get(key);
    return value ? value.slice(0, 500) : null;
  };
  return {
    utm_source: read('utm_source'),
    utm_medium: read('utm_medium'),
    utm_campaign: read('utm_campaign'),
    utm_content: read('utm_content'),
    utm_term: read('utm_term'),
    campaign_id: read('campaign_id'),
    adset_id: read('adset_id'),
    ad_id: read('ad_id'),
  };
}

function validate(input: ClickInput, now: number): { clickTime: number; ids: ClickIds; params: URLSearchParams } {
  // The landing page is parsed once: its query gives the click ids it carries and the campaign.
  const params = checkHttpUrl('landingPage', input.landingPage).searchParams;
  const ids = clickIdsOf(input, params);
  if (input.referrer !== undefined) checkHttpUrl('referrer', input.referrer);
  if (input.ipAddress !== undefined) checkIpAddress('ipAddress', input.ipAddress);
  checkLimitedDataUse(input.limitedDataUse);
  const clickTime = parseEventTime('timestamp', input.timestamp, now);
  if (now - clickTime > CLICK_MAX_AGE_MS) {
    if (ids.fbclid) {
      throw fieldError('invalid_fbclid', 'timestamp', 'expired', 'The click is older than 90 days; its fbclid has expired');
    }
    throw fieldError('invalid_click_id', 'timestamp', 'expired', 'The click is older than 90 days; its click id has expired');
  }
  return { clickTime, ids, params };
}

/** The ids a click answers with: each id it carried (its fbclid when it had one). */
function echoIds(ids: ClickIds): ClickIds {
  const echo: ClickIds = {};
  for (const [kind, value] of Object.entries(ids)) if (value) echo[kind as keyof ClickIds] = value;
  return echo;
}

/** Records an ad click once per (account, mode, store, fbclid). */
export async function trackClick(database: Database, tenant: Tenant, input: ClickInput, now = Date.now()): Promise<ClickResult> {
  return recordClick(database, await prepareClick(database, tenant, input, now));
}

/** A click ready to be written: its row, and the ids that key it. */
export interface PreparedClick {
  row: ClicksTable;
  ids: ClickIds;
}

/**
 * The checks and reads of `trackClick`, up to the row it writes: none depends on another click,
 * so a batch prepares its clicks and then hands their writes over together, in order
 * (tracking/batch.ts), and they share a commit.
 */
export async function prepareClick(database: Database, tenant: Tenant, input: ClickInput, now: number): Promise<PreparedClick> {
  const { clickTime, ids, params } = validate(input, now);
  const store = await requireActiveStoreCached(database.read, tenant, input.storeId);
  const fbclid = ids.fbclid;
  const row: ClicksTable = {
    id: newId('click', now),
    account_id: tenant.accountId,
    store_id: store.id,
    livemode: modeFlag(tenant),
    fbclid: fbclid ?? keyOfClickWithoutFbclid(ids),
    click_time: clickTime,
    created_at: now,
    landing_page: input.landingPage,
    referrer: input.referrer ?? null,
    ip_address: input.ipAddress ?? null,
    user_agent: input.userAgent ?? null,
    fingerprint: input.fingerprint ?? null,
    derived_fingerprint: derivedFingerprint(input.ipAddress, input.userAgent),
    fbp: input.fbp ?? null,
    fbc: fbclid ? fbcOf(clickTime, fbclid) : '',
    // Always present (null when absent), as the consent columns below: one column list per batch.
    visitor_id: input.visitorId ?? null,
    ip_network: ipNetworkOf(input.ipAddress),
    ...campaignParams(params),
    is_bot: input.userAgent !== undefined && isBot(input.userAgent) ? 1 : 0,
    // Always present (null when all granted): clicks batched into one statement share one column list.
    ...consentColumns(input, store),
  };
  for (const kind of OTHER_CLICK_ID_KINDS) if (ids[kind]) row[kind] = ids[kind] as string;
  if (input.ttp !== undefined) row.ttp = input.ttp;
  return { row, ids };
}

/** Writes a prepared click once per (account, mode, store, click id); durable when it resolves. */
export async function recordClick(database: Database, { row, ids }: PreparedClick): Promise<ClickResult> {
  const others = OTHER_CLICK_ID_KINDS.filter((kind) => ids[kind]);
  // An fbclid alone takes the batched one-statement path; other ids need their own keys too.
  const { row: stored, duplicate } =
    others.length === 0 && row.ttp == null
      ? await writeClickOnce(database, row)
      : await insertMultiIdClickOnce(database, {
          click: row,
          ids: others.map((kind: OtherClickIdKind) => ({ kind, value: ids[kind] as string })),
          ...(ids.fbclid && { fbclid: ids.fbclid }),
        });
  return {
    clickId: stored.id,
    ...echoIds(ids),
    tracked: true,
    timestamp: new Date(stored.created_at).toISOString(),
    duplicate,
  };
}

export async function getClick(database: Database, tenant: Tenant, clickId: string): Promise<ClicksTable> {
  const row = await findClick(database.read, tenant.accountId, modeFlag(tenant), clickId);
  if (!row) throw await clickNotFound(database.read, tenant, clickId);
  return row;
}

/** One page of the tenant's clicks, newest first; `storeId` must be one of the account's stores. */
export async function listClicksOf(
  database: Database,
  tenant: Tenant,
  filter: { storeId?: string },
  page: Page,
): Promise<ClicksTable[]> {
  if (filter.storeId) await requireStore(database.read, tenant, filter.storeId);
  return listClicks(database.read, tenant.accountId, modeFlag(tenant), filter, page);
}

/** The API view of a stored click. */
export function presentClick(row: ClicksTable) {
  return {
    clickId: row.id,
    storeId: row.store_id,
    fbclid: realFbclid(row.fbclid) ?? null,
    fbc: row.fbc || null,
    fbp: row.fbp,
    gclid: row.gclid ?? null,
    gbraid: row.gbraid ?? null,
    wbraid: row.wbraid ?? null,
    ttclid: row.ttclid ?? null,
    msclkid: row.msclkid ?? null,
    epik: row.epik ?? null,
    ScCid: row.ScCid ?? null,
    rdt_cid: row.rdt_cid ?? null,
    li_fat_id: row.li_fat_id ?? null,
    ttp: row.ttp ?? null,
    visitorId: row.visitor_id ?? null,
    landingPage: row.landing_page,
    referrer: row.referrer,
    ipAddress: row.ip_address,
    userAgent: row.user_agent,
    fingerprint: row.fingerprint,
    utm: {
      source: row.utm_source,
      medium: row.utm_medium,
      campaign: row.utm_campaign,
      content: row.utm_content,
      term: row.utm_term,
    },
    campaignId: row.campaign_id,
    adsetId: row.adset_id,
    adId: row.ad_id,
    isBot: row.is_bot === 1,
    ...presentConsent(row),
    livemode: row.livemode === 1,
    timestamp: new Date(row.click_time).toISOString(),
    recordedAt: new Date(row.created_at).toISOString(),
  };
}
