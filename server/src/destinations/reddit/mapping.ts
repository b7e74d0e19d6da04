import { consentView } from '../../consent/consent.js';
import type { CustomerData } from '../../customer-data.js';
import type { ClicksTable, ConversionsTable } from '../../db/schema.js';
import { fromMinorUnits } from '../../money.js';
import type { Plan, PlanInput } from '../adapter.js';
import { sha256 } from '../hashing.js';

/**
 * Reddit's Conversions API v2.0 for an ad account:
 * `POST {REDDIT_API_URL}/api/v2.0/conversions/events/{adAccountId}`, `Authorization: Bearer`,
 * `{test_mode, events: [{event_at, event_type: {tracking_type}, click_id, event_metadata:
 * {conversion_id, currency, value_decimal, item_count}, user: {email, ip_address, user_agent,
 * uuid}}]}` (at most 1000 events; the email SHA-256 of the trimmed, lower-cased address).
 * Sources: Reddit's Ads API docs (ads-api.reddit.com/docs/v2, "Conversions API"), checked
 * against Segment's actions-reddit-conversions-api (segmentio/action-destinations:
 * reddit-conversions-api/index.ts, the same endpoint with `test_mode: true` as its credential
 * test). Uncertainties are in README.md.
 */
export interface RedditSettings {
  /** The ad account id: `t2_…` (older accounts) or `a2_…`. */
  adAccountId: string;
}

export interface RedditEvent {
  event_at: string;
  event_type: { tracking_type: string; custom_event_name?: string };
  click_id?: string;
  event_metadata: {
    conversion_id: string;
    currency: string;
    value_decimal: number;
    item_count?: number;
  };
  user: { email?: string; ip_address?: string; user_agent?: string; uuid?: string };
}

/** Reddit takes conversions up to 7 days old. */
export const REDDIT_MAX_EVENT_AGE_MS = 7 * 86_400_000;
const SHA256_HEX = /^[a-f0-9]{64}$/i;

/** Meta's standard event names → Reddit's tracking types; any other name is a Custom event. */
export const REDDIT_TRACKING_TYPES: Record<string, string> = {
  Purchase: 'Purchase',
  AddToCart: 'AddToCart',
  AddToWishlist: 'AddToWishlist',
  Lead: 'Lead',
  SubmitApplication: 'Lead',
  CompleteRegistration: 'SignUp',
  ViewContent: 'ViewContent',
  Search: 'Search',
  PageView: 'PageVisit',
};

function hashedEmail(raw: string | undefined): string | undefined {
  const value = raw?.trim().toLowerCase();
  if (!value) return undefined;
  return SHA256_HEX.test(value) ? value : sha256(value);
}

/** The attributed click's rdt_cid, else one the conversion named (`ref_ids.rdt_cid`). */
function redditClickId(conversion: ConversionsTable, click: ClicksTable | undefined): string | undefined {
  const refs = conversion.ref_ids ? (JSON.parse(conversion.ref_ids) as Record<string, string>) : {};
  return click?.rdt_cid || refs.rdt_cid || undefined;
}

interface StoredProduct {
  quantity: number;
}

function user(
  conversion: ConversionsTable,
  click: ClicksTable | undefined,
  customerData: CustomerData | undefined,
  userData: boolean,
): RedditEvent['user'] {
  const email = hashedEmail(customerData?.email);
  const ip = conversion.ip_address ?? click?.ip_address;
  const userAgent = conversion.user_agent ?? click?.user_agent;
  // `_rdt_uuid` is a browser id: like fbp and ttp, only with adUserData granted.
  const uuid = userData ? conversion.rdt_uuid || undefined : undefined;
  return {
    ...(email && { email }),
    ...(ip && { ip_address: ip }),
    ...(userAgent && { user_agent: userAgent }),
    ...(uuid && { uuid }),
  };
}

/**
 * A conversion as Reddit's event (api.md §12): sent when its credited click or an explicit
 * reference carries an rdt_cid; the conversion's eventId is Reddit's dedup id
 * (`event_metadata.conversion_id`, the same as the pixel's `conversionId`).
 */
export function planReddit({
  conversion: recorded,
  click: attributedClick,
  customerData: given,
  now,
}: PlanInput<RedditSettings>): Plan | undefined {
  if (!redditClickId(recorded, attributedClick)) return undefined;
  // Consent (api.md §10): the ids and identifiers below are only those the stored consent allows.
  const view = consentView(recorded, attributedClick, given);
  const { conversion, click, customerData } = view;
  const clickId = redditClickId(conversion, click);
  if (!clickId) {
    return {
      skip: 'consent_denied',
      message: 'Not sent to Reddit: the visitor’s consent withholds its rdt_cid (a click id needs adStorage granted)',
    };
  }
  const expiresAt = Math.min(conversion.event_time, now) + REDDIT_MAX_EVENT_AGE_MS;
  if (expiresAt <= now) {
    return { skip: 'expired', message: 'Not sent to Reddit: Reddit accepts conversions up to 7 days old' };
  }
  const products = JSON.parse(conversion.products) as StoredProduct[];
  const itemCount = products.reduce((sum, p) => sum + p.quantity, 0);
  const trackingType = REDDIT_TRACKING_TYPES[conversion.event_type];
  const payload: RedditEvent = {
    event_at: new Date(conversion.event_time).toISOString(),
    event_type: trackingType
      ? { tracking_type: trackingType }
      : { tracking_type: 'Custom', custom_event_name: conversion.event_type },
    click_id: clickId,
    event_metadata: {
      conversion_id: conversion.event_id,
      currency: conversion.currency,
      value_decimal: fromMinorUnits(conversion.value_minor, conversion.currency),
      ...(itemCount > 0 && { item_count: itemCount }),
    },
    user: user(conversion, click, customerData, view.consent.adUserData === 'granted'),
  };
  return { payload, expiresAt };
}
