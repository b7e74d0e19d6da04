import { createHash } from 'node:crypto';
import { consentView } from '../../consent/consent.js';
import type { CustomerData } from '../../customer-data.js';
import type { ClicksTable, ConversionsTable } from '../../db/schema.js';
import { fromMinorUnits } from '../../money.js';
import { CREDENTIAL_HINTS } from '../../network-errors.js';
import { type Adapter, all, clip, parseJson, post, retryAfterMs } from '../adapter.js';
import { onlyFields, REFUND_EVENT, text } from '../fields.js';
import { hashedPhone } from '../hashing.js';
import { TIKTOK_SETTINGS } from './settings-schema.js';

/** TikTok Events API 2.0: `POST /open_api/v1.3/event/track/` with the pixel as the web event source. */
export interface TikTokSettings {
  pixelCode: string;
  testEventCode?: string;
  /** Opt-in: refunds are sent as this event with the negative amount (api.md §9). */
  refundEvent?: string;
}

export interface TikTokSecrets {
  accessToken: string;
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
/** Events per request: TikTok's limit for event/track is 1000. */
const MAX_BATCH = 1000;
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

/**
 * TikTok answers HTTP 200 with its own `code`: 0 is success. 40100 is its rate limit ("too many
 * requests") and 5xxxx its server errors: retried; any other code is about the request or its
 * events (token, pixel, parameters): failed with TikTok's message.
 */
/** TikTok's answers refusing the access token (no permission, expired, missing, revoked). */
const TIKTOK_AUTH_CODES = new Set([40001, 40102, 40104, 40105]);

export function isRetryableTikTokCode(code: number): boolean {
  return code === 40100 || (code >= 50000 && code < 60000);
}

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

export const tiktok: Adapter<TikTokSettings, TikTokSecrets> = {
  kind: 'tiktok',
  label: 'TikTok',
  maxBatch: MAX_BATCH,
  settingsSchema: TIKTOK_SETTINGS,

  parse(body, previous) {
    onlyFields(body, ['pixelCode', 'accessToken', 'testEventCode', 'refundEvent']);
    const pixelCode = text(body, 'pixelCode', {
      required: true,
      pattern: /^[A-Z0-9]{10,40}$/,
      max: 40,
      hint: 'the pixel code from TikTok Events Manager (capital letters and digits)',
    }) as string;
    const testEventCode = text(body, 'testEventCode', { required: false, max: 100, pattern: /^[A-Za-z0-9_-]+$/ });
    const accessToken = text(body, 'accessToken', {
      required: true,
      max: 2000,
      previous: previous?.secrets.accessToken,
    }) as string;
    const refundEvent = text(body, 'refundEvent', { required: false, ...REFUND_EVENT });
    return {
      settings: { pixelCode, ...(testEventCode && { testEventCode }), ...(refundEvent && { refundEvent }) },
      secrets: { accessToken },
    };
  },

  present(settings) {
    return {
      pixelCode: settings.pixelCode,
      testEventCode: settings.testEventCode ?? null,
      refundEvent: settings.refundEvent ?? null,
      accessTokenConfigured: true,
    };
  },

  plan({ settings, conversion: recorded, click: attributedClick, customerData: given, now }) {
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
  },

  /** With `refundEvent` only: that event with the negative refunded amount, matched like the conversion. */
  planRefund({ settings, conversion, refund, conversionPayload, now }) {
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
  },

  async send({ settings, secrets, live, payloads, env, timeoutMs }) {
    const hide = [secrets.accessToken];
    const answer = await post(
      `${env.tiktokApiUrl}/open_api/v1.3/event/track/`,
      {
        headers: { 'content-type': 'application/json', 'access-token': secrets.accessToken },
        body: JSON.stringify({
          event_source: 'web',
          event_source_id: settings.pixelCode,
          ...(!live && settings.testEventCode && { test_event_code: settings.testEventCode }),
          data: payloads,
        }),
      },
      timeoutMs,
      'TikTok',
    );
    if ('error' in answer) return all(payloads.length, { outcome: 'retry', error: clip(answer.error, hide) });
    const { response, text: raw } = answer;
    const body = parseJson(raw) as { code?: unknown; message?: unknown; request_id?: unknown } | undefined;
    const traceId = typeof body?.request_id === 'string' ? body.request_id : undefined;
    const hint = retryAfterMs(response.headers);
    if (typeof body?.code !== 'number') {
      const error = `Unexpected answer from TikTok: HTTP ${response.status}`;
      const outcome =
        response.status >= 500 || response.status === 429 || response.ok
          ? { outcome: 'retry' as const, error, ...(hint !== undefined && { retryAfterMs: hint }) }
          : { outcome: 'failed' as const, error };
      return { ...all(payloads.length, outcome), ...(traceId && { traceId }) };
    }
    if (body.code === 0 && response.ok) return { ...all(payloads.length, { outcome: 'sent' }), ...(traceId && { traceId }) };
    let message = clip(
      `TikTok error (code ${body.code}): ${typeof body.message === 'string' ? body.message : 'no message'}${
        traceId ? ` (request_id ${traceId})` : ''
      }`,
      hide,
    );
    const retry = isRetryableTikTokCode(body.code) || response.status >= 500 || response.status === 429;
    if (!retry && (TIKTOK_AUTH_CODES.has(body.code) || response.status === 401)) message += ` — ${CREDENTIAL_HINTS.tiktok}`;
    return {
      ...all(
        payloads.length,
        retry
          ? { outcome: 'retry', error: message, ...(hint !== undefined && { retryAfterMs: hint }) }
          : { outcome: 'failed', error: message },
      ),
      ...(traceId && { traceId }),
    };
  },

  /**
   * TikTok's documented test channel: one test event with the destination's testEventCode (it
   * shows in Events Manager → Test events, never in reports). Without a testEventCode there is
   * no way to check without a live event, and the answer says how to get one.
   */
  async check({ settings, secrets, env, timeoutMs }) {
    if (!settings.testEventCode) {
      return {
        ok: false,
        message:
          'TikTok is checked with a test event: set the tiktok destination’s testEventCode (TikTok Events Manager → your pixel → Test events) and test again',
      };
    }
    const now = Math.floor(Date.now() / 1000);
    const event: TikTokEvent = {
      event: 'ViewContent',
      event_time: now,
      event_id: `waytrack_check_${now}`,
      user: { user_agent: 'Waytrack destination check' },
      properties: { value: 0, currency: 'USD', order_id: `waytrack_check_${now}` },
    };
    const result = await this.send({
      settings,
      secrets,
      live: false,
      kind: 'conversion',
      route: '',
      payloads: [event],
      env,
      timeoutMs,
    });
    const outcome = result.outcomes[0];
    if (outcome?.outcome === 'sent') {
      return {
        ok: true,
        message: `TikTok accepted a test event for pixel ${settings.pixelCode} (test event code ${settings.testEventCode})`,
      };
    }
    const error = outcome && 'error' in outcome ? outcome.error : 'TikTok gave no answer';
    const platform = /^TikTok error \(code \d+\): (.*?)(?: \(request_id [^)]*\))?(?: — .*)?$/s.exec(error)?.[1];
    return { ok: false, message: error, ...(platform && { platformMessage: platform }) };
  },
};
