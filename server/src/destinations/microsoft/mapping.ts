import { createHash } from 'node:crypto';
import { consentView } from '../../consent/consent.js';
import type { CustomerData } from '../../customer-data.js';
import type { ClicksTable, ConversionsTable } from '../../db/schema.js';
import { fromMinorUnits } from '../../money.js';
import type { Plan, PlanInput } from '../adapter.js';
import { hashedPhone } from '../hashing.js';

/** Microsoft Advertising: the UET Conversions API (CAPI), `POST /v1/{tagId}/events`. */
export interface MicrosoftSettings {
  tagId: string;
}

export interface MicrosoftSecrets {
  accessToken: string;
}

/** One event of CAPI's `data` array (the documented field names). */
export interface MicrosoftEvent {
  eventType: 'custom';
  eventId: string;
  eventName: string;
  /** Unix seconds. */
  eventTime: number;
  eventSourceUrl?: string;
  /** UET's ad storage consent: G granted, D denied. */
  adStorageConsent: 'G' | 'D';
  userData: {
    msclkid?: string;
    em?: string;
    ph?: string;
    clientIpAddress?: string;
    clientUserAgent?: string;
  };
  customData: {
    value: number;
    currency: string;
    transactionId: string;
    itemIds?: string[];
  };
}

/**
 * How old a conversion Microsoft takes: its offline conversion window, 90 days after the click
 * (the CAPI guide states no shorter limit for server events; README.md).
 */
export const MICROSOFT_MAX_EVENT_AGE_MS = 90 * 86_400_000;

/** Meta's standard event names → UET's recommended event names (UET's `event_action`); others as they are. */
export const MICROSOFT_EVENT_NAMES: Record<string, string> = {
  Purchase: 'purchase',
  Lead: 'generate_lead',
  SubmitApplication: 'generate_lead',
  CompleteRegistration: 'sign_up',
  AddToCart: 'add_to_cart',
  InitiateCheckout: 'begin_checkout',
  AddPaymentInfo: 'add_payment_info',
  Subscribe: 'subscribe',
  ViewContent: 'view_item',
  Search: 'search',
  Contact: 'contact',
  AddToWishlist: 'add_to_wishlist',
  Schedule: 'book_appointment',
};

interface StoredProduct {
  productId: string;
}

/** The msclkid of a conversion: its attributed click's, else one the request named (`attributedTo.msclkid`). */
export function msclkidOf(conversion: ConversionsTable, click: ClicksTable | undefined): string | undefined {
  const refs = conversion.ref_ids ? (JSON.parse(conversion.ref_ids) as Record<string, string>) : {};
  return click?.msclkid || refs.msclkid || undefined;
}

const SHA256_HEX = /^[a-f0-9]{64}$/i;

/** UET's email rule: trimmed and lower-cased, then SHA-256 (no provider-specific rewriting). */
function hashedEmail(raw: string): string | undefined {
  const value = raw.trim().toLowerCase();
  if (SHA256_HEX.test(value)) return value;
  return value ? createHash('sha256').update(value, 'utf8').digest('hex') : undefined;
}

function user(customerData: CustomerData | undefined): MicrosoftEvent['userData'] {
  const out: MicrosoftEvent['userData'] = {};
  const em = customerData?.email ? hashedEmail(customerData.email) : undefined;
  if (em) out.em = em;
  const ph = customerData?.phone ? hashedPhone(customerData.phone, customerData.country) : undefined;
  if (ph) out.ph = ph;
  return out;
}

/**
 * Routing (api.md §12): a conversion goes to Microsoft when its credited click, or an explicit
 * reference, carries an msclkid; consent (§10) decides what of it is sent.
 */
export function planMicrosoft({
  conversion: recorded,
  click: attributedClick,
  customerData: given,
  now,
}: PlanInput<MicrosoftSettings>): Plan | undefined {
  if (!msclkidOf(recorded, attributedClick)) return undefined;
  // Consent (§10): the msclkid needs adStorage; identifiers, IP and user agent need adUserData.
  const { conversion, click, customerData } = consentView(recorded, attributedClick, given);
  const msclkid = msclkidOf(conversion, click);
  if (!msclkid) {
    return {
      skip: 'consent_denied',
      message: 'Not sent to Microsoft Advertising: the visitor’s consent does not allow its msclkid (adStorage denied)',
    };
  }
  if (conversion.livemode === 0) {
    return {
      skip: 'test_mode_unsupported',
      message:
        'Not sent to Microsoft Advertising: the UET Conversions API has no test channel, so test-mode conversions are never sent to it',
    };
  }
  const clickTime = click?.click_time ?? conversion.event_time;
  const expiresAt = Math.min(clickTime, conversion.event_time, now) + MICROSOFT_MAX_EVENT_AGE_MS;
  if (expiresAt <= now) {
    return { skip: 'expired', message: 'Not sent to Microsoft Advertising: it takes conversions up to 90 days after the click' };
  }
  const products = JSON.parse(conversion.products) as StoredProduct[];
  const ip = conversion.ip_address ?? click?.ip_address;
  const userAgent = conversion.user_agent ?? click?.user_agent;
  const url = conversion.event_source_url ?? click?.landing_page;
  const payload: MicrosoftEvent = {
    eventType: 'custom',
    // The conversion's eventId: the UET tag's event with the same id is counted once (§12).
    eventId: conversion.event_id,
    eventName: MICROSOFT_EVENT_NAMES[conversion.event_type] ?? conversion.event_type,
    eventTime: Math.floor(conversion.event_time / 1000),
    ...(url && { eventSourceUrl: url }),
    adStorageConsent: 'G',
    userData: {
      msclkid,
      ...user(customerData),
      ...(ip && { clientIpAddress: ip }),
      ...(userAgent && { clientUserAgent: userAgent }),
    },
    customData: {
      value: fromMinorUnits(conversion.value_minor, conversion.currency),
      currency: conversion.currency,
      transactionId: conversion.order_id,
      ...(products.length > 0 && { itemIds: products.map((p) => p.productId) }),
    },
  };
  return { payload, expiresAt };
}
