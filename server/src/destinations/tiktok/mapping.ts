import { createHash } from 'node:crypto';
import { consentView } from '../../consent/consent.js';
import type { CustomerData } from '../../customer-data.js';
import type { ClicksTable, ConversionsTable } from '../../db/schema.js';
import { fromMinorUnits } from '../../money.js';
import type { Plan, PlanInput, RefundPlanInput } from '../adapter.js';
import { hashedPhone } from '../hashing.js';

/** TikTok Events API 2.0: `POST /open_api/v1.3/event/track/` with the pixel as the web event source. */
export interface TikTokSettings {
  pixelCode: string;
  testEventCode?: string;
  /** Opt-in: refunds are sent as this event with the negative amount (api.md §9). */
  refundEvent?: string;
}

export interface TikTokEvent {
  event: string;
  event_time: number;
  event_id: string;
  user: {
    ttclid?: string;
    ttp?: string;
    email?: string;
    phone?: string;
    ip?: string;
    user_agent?: string;
  };
  properties: {
    value: number;
    currency: string;
    order_id: string;
    content_type?: 'product';
    contents?: Array<{ content_id: string; quantity: number; price?: number }>;
  };
  page?: { url: string };
}

/** TikTok accepts web events up to 7 days old. */
export const TIKTOK_MAX_EVENT_AGE_MS = 7 * 86_400_000;
const SHA256_HEX = /^[a-f0-9]{64}$/i;
const sha256 = (value: string) => createHash('sha256').update(value, 'utf8').digest('hex');

/** Meta's standard event names → TikTok's; a name TikTok has too, or a custom one, is sent as it is. */
export const TIKTOK_EVENT_NAMES: Record<string, string> = {
  Purchase: 'CompletePayment',
  Lead: 'SubmitForm',
  SubmitApplication: 'SubmitForm',
  CompleteRegistration: 'CompleteRegistration',
  AddToCart: 'AddToCart',
  InitiateCheckout: 'InitiateCheckout',
  AddPaymentInfo: 'AddPaymentInfo',
  Subscribe: 'Subscribe',
  ViewContent: 'ViewContent',
  Search: 'Search',
  Contact: 'Contact',
  AddToWishlist: 'AddToWishlist',
  Schedule: 'Contact',
};

function email(raw: string): string | undefined {
  const value = raw.trim().toLowerCase();
  if (SHA256_HEX.test(value)) return value;
  return value ? sha256(value) : undefined;
}

function user(customerData: CustomerData | undefined) {
  const out: TikTokEvent['user'] = {};
  const hashedEmail = customerData?.email ? email(customerData.email) : undefined;
  if (hashedEmail) out.email = hashedEmail;
  // TikTok, like Google, hashes the phone number in E.164.
  const phone = customerData?.phone ? hashedPhone(customerData.phone, customerData.country) : undefined;
  if (phone) out.phone = phone;
  return out;
}

interface StoredProduct {
  productId: string;
  priceMinor?: number;
  quantity: number;
}

/** TikTok's ids of a conversion: the attributed click's ttclid (else one named), and the ttp. */
function tiktokIds(conversion: ConversionsTable, click: ClicksTable | undefined) {
  const refs = conversion.ref_ids ? (JSON.parse(conversion.ref_ids) as Record<string, string>) : {};
  return { ttclid: click?.ttclid || refs.ttclid || undefined, ttp: conversion.ttp || click?.ttp || undefined };
}

/** A conversion as TikTok's event (api.md §8): its ids, the hashed customer data, the value and products. */
export function planTikTok({
  settings,
  conversion: recorded,
  click: attributedClick,
  customerData: given,
  now,
}: PlanInput<TikTokSettings>): Plan | undefined {
  if (!tiktokIds(recorded, attributedClick).ttclid && !tiktokIds(recorded, attributedClick).ttp) return undefined;
  // Consent (api.md §10): the ids and identifiers below are only those the stored consent allows.
  const { conversion, click, customerData } = consentView(recorded, attributedClick, given);
  const { ttclid, ttp } = tiktokIds(conversion, click);
  if (!ttclid && !ttp) {
    return {
      skip: 'consent_denied',
      message:
        'Not sent to TikTok: the visitor’s consent allows neither of its TikTok ids (a ttclid needs adStorage granted, a ttp adUserData granted)',
    };
  }
  if (conversion.livemode === 0 && !settings.testEventCode) {
    return {
      skip: 'test_event_code_missing',
      message:
        'Not sent to TikTok: a test-mode conversion is sent only as a test event, and the tiktok destination had no testEventCode',
    };
  }
  const expiresAt = Math.min(conversion.event_time, now) + TIKTOK_MAX_EVENT_AGE_MS;
  if (expiresAt <= now) {
    return { skip: 'expired', message: 'Not sent to TikTok: TikTok accepts events up to 7 days old' };
  }
  const products = JSON.parse(conversion.products) as StoredProduct[];
  const ip = conversion.ip_address ?? click?.ip_address;
  const userAgent = conversion.user_agent ?? click?.user_agent;
  const url = conversion.event_source_url ?? click?.landing_page;
  const payload: TikTokEvent = {
    event: TIKTOK_EVENT_NAMES[conversion.event_type] ?? conversion.event_type,
    event_time: Math.floor(conversion.event_time / 1000),
    event_id: conversion.event_id,
    user: {
      ...(ttclid && { ttclid }),
      ...(ttp && { ttp }),
      ...user(customerData),
      ...(ip && { ip }),
      ...(userAgent && { user_agent: userAgent }),
    },
    properties: {
      value: fromMinorUnits(conversion.value_minor, conversion.currency),
      currency: conversion.currency,
      order_id: conversion.order_id,
      ...(products.length > 0 && {
        content_type: 'product' as const,
        contents: products.map((p) => ({
          content_id: p.productId,
          quantity: p.quantity,
          ...(p.priceMinor !== undefined && { price: fromMinorUnits(p.priceMinor, conversion.currency) }),
        })),
      }),
    },
    ...(url && { page: { url } }),
  };
  return { payload, expiresAt };
}

/** With `refundEvent` only: that event with the negative refunded amount, matched like the conversion. */
export function planTikTokRefund({
  settings,
  conversion,
  refund,
  conversionPayload,
  now,
}: RefundPlanInput<TikTokSettings>): Plan | undefined {
  if (!settings.refundEvent || !conversionPayload) return undefined;
  const original = conversionPayload as TikTokEvent;
  const at = Math.min(refund.refund_time, now);
  const expiresAt = at + TIKTOK_MAX_EVENT_AGE_MS;
  if (expiresAt <= now) return { skip: 'expired', message: 'Not sent to TikTok: TikTok accepts events up to 7 days old' };
  const payload: TikTokEvent = {
    event: settings.refundEvent,
    event_time: Math.floor(at / 1000),
    // From the refundId: a retried or resent refund is one event to TikTok.
    event_id: `refund_${refund.refund_id}`,
    user: original.user,
    properties: {
      value: -fromMinorUnits(refund.amount_minor, refund.currency),
      currency: refund.currency,
      order_id: conversion.order_id,
    },
    ...(original.page && { page: original.page }),
  };
  return { payload, expiresAt };
}
