/*
 * Pinterest Conversions API (API v5), as used here:
 * - developers.pinterest.com/docs/api/v5/events-create (and Pinterest's OpenAPI "Events API"
 *   5.13: `POST /v5/ad_accounts/{ad_account_id}/events`, `?test=true` validates without
 *   recording, `Authorization: Bearer <conversion token>`, 5,000 calls a minute per ad account);
 * - developers.pinterest.com/docs/conversions/event/ (event names: checkout, add_to_cart, lead,
 *   signup, page_visit, search, … and `custom`);
 * - Segment action-destinations "pinterest-conversions" (user_data em/ph SHA-256 arrays,
 *   click_id = the `_epik` value, custom_data.value as a string, at most 1000 events a request).
 */
import { consentView } from '../../consent/consent.js';
import type { CustomerData } from '../../customer-data.js';
import type { ClicksTable, ConversionsTable } from '../../db/schema.js';
import { currencyExponent, fromMinorUnits } from '../../money.js';
import type { Plan, PlanInput } from '../adapter.js';
import { e164, sha256 } from '../hashing.js';

export interface PinterestSettings {
  adAccountId: string;
  /** Every event goes with `test=true` (test-mode conversions always do). */
  testMode?: boolean;
}

export interface PinterestEvent {
  event_name: string;
  action_source: 'web';
  event_time: number;
  event_id: string;
  event_source_url?: string;
  user_data: {
    em?: string[];
    ph?: string[];
    client_ip_address?: string;
    client_user_agent?: string;
    click_id?: string;
  };
  custom_data: {
    currency: string;
    value: string;
    order_id: string;
    num_items?: number;
    content_ids?: string[];
    contents?: Array<{ id: string; quantity: number; item_price?: string }>;
  };
}

/** Pinterest takes events up to 7 days old (its Conversions API guide). */
export const PINTEREST_MAX_EVENT_AGE_MS = 7 * 86_400_000;
const SHA256_HEX = /^[a-f0-9]{64}$/i;

/** Meta's standard event names → Pinterest's; anything else is Pinterest's `custom`. */
export const PINTEREST_EVENT_NAMES: Record<string, string> = {
  Purchase: 'checkout',
  AddToCart: 'add_to_cart',
  AddToWishlist: 'add_to_wishlist',
  AddPaymentInfo: 'add_payment_info',
  InitiateCheckout: 'initiate_checkout',
  Lead: 'lead',
  SubmitApplication: 'lead',
  CompleteRegistration: 'signup',
  ViewContent: 'page_visit',
  Search: 'search',
  Contact: 'contact',
  Subscribe: 'subscribe',
  Schedule: 'contact',
};

/** An amount as the decimal string Pinterest takes ("12.34"), exact to the currency's minor unit. */
export function decimalString(minor: number, currency: string): string {
  return fromMinorUnits(minor, currency).toFixed(currencyExponent(currency));
}

/** Pinterest hashes the email lower-cased and trimmed (no Gmail dot rule). */
function email(raw: string): string | undefined {
  const value = raw.trim().toLowerCase();
  if (SHA256_HEX.test(value)) return value;
  return value ? sha256(value) : undefined;
}

/** Pinterest's phone: the number's digits with its country code, no "+" (its docs' normalization). */
function phone(raw: string, country?: string): string | undefined {
  if (SHA256_HEX.test(raw.trim())) return raw.trim().toLowerCase();
  const number = e164(raw, country);
  return number ? sha256(number.replace(/^\+/, '')) : undefined;
}

/** The epik of the attributed click, else one the conversion named explicitly. */
export function epikOf(conversion: ConversionsTable, click: ClicksTable | undefined): string | undefined {
  const refs = conversion.ref_ids ? (JSON.parse(conversion.ref_ids) as Record<string, string>) : {};
  return click?.epik || refs.epik || undefined;
}

function userData(customerData: CustomerData | undefined) {
  const out: PinterestEvent['user_data'] = {};
  const em = customerData?.email ? email(customerData.email) : undefined;
  if (em) out.em = [em];
  const ph = customerData?.phone ? phone(customerData.phone, customerData.country) : undefined;
  if (ph) out.ph = [ph];
  return out;
}

interface StoredProduct {
  productId: string;
  priceMinor?: number;
  quantity: number;
}

/** A conversion as Pinterest's event (api.md §12): its epik, the hashed customer data, the value and items. */
export function planPinterest({
  conversion: recorded,
  click: attributedClick,
  customerData: given,
  now,
}: PlanInput<PinterestSettings>): Plan | undefined {
  if (!epikOf(recorded, attributedClick)) return undefined;
  // Consent (api.md §10): the ids and identifiers below are only those the stored consent allows.
  const { conversion, click, customerData } = consentView(recorded, attributedClick, given);
  const epik = epikOf(conversion, click);
  if (!epik) {
    return {
      skip: 'consent_denied',
      message:
        'Not sent to Pinterest: the visitor’s consent does not allow its Pinterest click id (epik needs adStorage granted)',
    };
  }
  const expiresAt = Math.min(conversion.event_time, now) + PINTEREST_MAX_EVENT_AGE_MS;
  if (expiresAt <= now) {
    return { skip: 'expired', message: 'Not sent to Pinterest: Pinterest accepts events up to 7 days old' };
  }
  const products = JSON.parse(conversion.products) as StoredProduct[];
  const ip = conversion.ip_address ?? click?.ip_address;
  const userAgent = conversion.user_agent ?? click?.user_agent;
  const url = conversion.event_source_url ?? click?.landing_page;
  const payload: PinterestEvent = {
    event_name: PINTEREST_EVENT_NAMES[conversion.event_type] ?? 'custom',
    action_source: 'web',
    event_time: Math.floor(conversion.event_time / 1000),
    event_id: conversion.event_id,
    ...(url && { event_source_url: url }),
    user_data: {
      ...userData(customerData),
      ...(ip && { client_ip_address: ip }),
      ...(userAgent && { client_user_agent: userAgent }),
      click_id: epik,
    },
    custom_data: {
      currency: conversion.currency,
      value: decimalString(conversion.value_minor, conversion.currency),
      order_id: conversion.order_id,
      ...(products.length > 0 && {
        num_items: products.reduce((sum, p) => sum + p.quantity, 0),
        content_ids: products.map((p) => p.productId),
        contents: products.map((p) => ({
          id: p.productId,
          quantity: p.quantity,
          ...(p.priceMinor !== undefined && { item_price: decimalString(p.priceMinor, conversion.currency) }),
        })),
      }),
    },
  };
  return { payload, expiresAt };
}
