/*
 * Snap Conversions API v3, as used here:
 * - developers.snap.com/api/marketing-api/Conversions-API/UsingTheAPI (web endpoint
 *   `POST https://tr.snapchat.com/v3/{PIXEL_ID}/events?access_token={TOKEN}`, body
 *   `{data: [{event_name: "PURCHASE", event_time (Unix seconds, e.g. 1705508777), event_id,
 *   action_source, event_source_url, user_data: {em: [sha256], ph: [sha256], …}, custom_data}]}`);
 * - …/Conversions-API/VerifySetUp (the Test Event Tool: `POST /v3/{asset_id}/events/validate`,
 *   same token and body, validates without recording);
 * - …/Conversions-API/Parameters (user_data `sc_click_id` = the ScCid click id, `sc_cookie1` =
 *   the `_scid` cookie, `client_ip_address`, `client_user_agent`; web events up to 7 days old).
 */
import { consentView } from '../../consent/consent.js';
import type { CustomerData } from '../../customer-data.js';
import type { ClicksTable, ConversionsTable } from '../../db/schema.js';
import { fromMinorUnits } from '../../money.js';
import type { Plan, PlanInput } from '../adapter.js';
import { e164, sha256 } from '../hashing.js';

export type SnapchatSettings = { pixelId: string };

export interface SnapchatEvent {
  event_name: string;
  action_source: 'WEB';
  event_time: number;
  event_id: string;
  event_source_url?: string;
  user_data: {
    em?: string[];
    ph?: string[];
    client_ip_address?: string;
    client_user_agent?: string;
    sc_click_id?: string;
    sc_cookie1?: string;
  };
  custom_data: {
    currency: string;
    value: number;
    order_id: string;
    num_items?: number;
    content_ids?: string[];
  };
}

/** Snap takes web events up to 7 days old. */
export const SNAPCHAT_MAX_EVENT_AGE_MS = 7 * 86_400_000;
const SHA256_HEX = /^[a-f0-9]{64}$/i;

/** Meta's standard event names → Snap's; anything else is Snap's `CUSTOM_EVENT_1`. */
export const SNAPCHAT_EVENT_NAMES: Record<string, string> = {
  Purchase: 'PURCHASE',
  AddToCart: 'ADD_CART',
  AddToWishlist: 'ADD_TO_WISHLIST',
  AddPaymentInfo: 'ADD_BILLING',
  InitiateCheckout: 'START_CHECKOUT',
  Lead: 'SIGN_UP',
  SubmitApplication: 'SIGN_UP',
  CompleteRegistration: 'SIGN_UP',
  ViewContent: 'VIEW_CONTENT',
  Search: 'SEARCH',
  Subscribe: 'SUBSCRIBE',
  StartTrial: 'START_TRIAL',
  Schedule: 'RESERVE',
  PageView: 'PAGE_VIEW',
};

function email(raw: string): string | undefined {
  const value = raw.trim().toLowerCase();
  if (SHA256_HEX.test(value)) return value;
  return value ? sha256(value) : undefined;
}

/** Snap's phone: digits with the country code, no "+" or leading zeros, then SHA-256. */
function phone(raw: string, country?: string): string | undefined {
  if (SHA256_HEX.test(raw.trim())) return raw.trim().toLowerCase();
  const number = e164(raw, country);
  return number ? sha256(number.replace(/^\+/, '')) : undefined;
}

/** Snap's ids of a conversion: the attributed click's ScCid (else one named), and the `_scid` cookie. */
export function snapIdsOf(conversion: ConversionsTable, click: ClicksTable | undefined) {
  const refs = conversion.ref_ids ? (JSON.parse(conversion.ref_ids) as Record<string, string>) : {};
  return { clickId: click?.ScCid || refs.ScCid || undefined, cookie: conversion.scid || undefined };
}

function userData(customerData: CustomerData | undefined) {
  const out: SnapchatEvent['user_data'] = {};
  const em = customerData?.email ? email(customerData.email) : undefined;
  if (em) out.em = [em];
  const ph = customerData?.phone ? phone(customerData.phone, customerData.country) : undefined;
  if (ph) out.ph = [ph];
  return out;
}

interface StoredProduct {
  productId: string;
  quantity: number;
}

/**
 * A conversion as Snap's event (api.md §12). Routed by the ScCid only (a conversion's credited
 * click or an explicit reference); the `_scid` browser id goes along as `sc_cookie1` for matching.
 */
export function planSnapchat({
  conversion: recorded,
  click: attributedClick,
  customerData: given,
  now,
}: PlanInput<SnapchatSettings>): Plan | undefined {
  if (!snapIdsOf(recorded, attributedClick).clickId) return undefined;
  // Consent (api.md §10): the ids and identifiers below are only those the stored consent allows.
  const view = consentView(recorded, attributedClick, given);
  const { conversion, click, customerData } = view;
  const { clickId, cookie } = snapIdsOf(conversion, click);
  if (!clickId) {
    return {
      skip: 'consent_denied',
      message: 'Not sent to Snapchat: the visitor’s consent does not allow its Snapchat click id (ScCid needs adStorage granted)',
    };
  }
  const expiresAt = Math.min(conversion.event_time, now) + SNAPCHAT_MAX_EVENT_AGE_MS;
  if (expiresAt <= now) {
    return { skip: 'expired', message: 'Not sent to Snapchat: Snap accepts web events up to 7 days old' };
  }
  // The `_scid` browser id is user data: withheld when adUserData is denied, like fbp and ttp.
  const scCookie = view.adUserData === 'GRANTED' ? cookie : undefined;
  const products = JSON.parse(conversion.products) as StoredProduct[];
  const ip = conversion.ip_address ?? click?.ip_address;
  const userAgent = conversion.user_agent ?? click?.user_agent;
  const url = conversion.event_source_url ?? click?.landing_page;
  const payload: SnapchatEvent = {
    event_name: SNAPCHAT_EVENT_NAMES[conversion.event_type] ?? 'CUSTOM_EVENT_1',
    action_source: 'WEB',
    event_time: Math.floor(conversion.event_time / 1000),
    event_id: conversion.event_id,
    ...(url && { event_source_url: url }),
    user_data: {
      ...userData(customerData),
      ...(ip && { client_ip_address: ip }),
      ...(userAgent && { client_user_agent: userAgent }),
      sc_click_id: clickId,
      ...(scCookie && { sc_cookie1: scCookie }),
    },
    custom_data: {
      currency: conversion.currency,
      value: fromMinorUnits(conversion.value_minor, conversion.currency),
      order_id: conversion.order_id,
      ...(products.length > 0 && {
        num_items: products.reduce((sum, p) => sum + p.quantity, 0),
        content_ids: products.map((p) => p.productId),
      }),
    },
  };
  return { payload, expiresAt };
}
