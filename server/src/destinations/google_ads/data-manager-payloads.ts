import { fromMinorUnits } from '../../money.js';
import type { Plan, RefundPlanInput } from '../adapter.js';
import { GOOGLE_ADJUSTMENT_MAX_AGE_MS } from './adjustments.js';

/**
 * What a google_ads job carries for Google's Data Manager API (api.md §12), and the translation
 * between it and the Google Ads API's shapes (§8), so a job planned under one `api` is sent by the
 * other when the merchant switches while it waits. Field names are those of the REST API
 * (camelCase JSON of google.ads.datamanager.v1: Event, AdIdentifiers, UserData, Consent).
 */
export type DataManagerConsentStatus = 'CONSENT_GRANTED' | 'CONSENT_DENIED';

export interface DataManagerEvent {
  /** The conversion's eventId: Google deduplicates the tag's and the upload's conversion by it, and adjusts by it. */
  transactionId: string;
  /** RFC 3339 (google.protobuf.Timestamp in JSON). */
  eventTimestamp: string;
  /** A refund's time (an adjustment restates the conversion as of then). */
  lastUpdatedTimestamp?: string;
  adIdentifiers: { gclid?: string; gbraid?: string; wbraid?: string };
  conversionValue: number;
  currency: string;
  /** SHA-256 hex of the normalized email and phone (the request's `encoding: HEX`); only with adUserData granted. */
  userData?: { userIdentifiers: Array<{ emailAddress: string } | { phoneNumber: string }> };
  consent: { adUserData: DataManagerConsentStatus; adPersonalization: DataManagerConsentStatus };
  eventSource: 'WEB';
}

export interface DataManagerPayload {
  /** The conversion action's resource name; its id is the request's `productDestinationId`. */
  conversionAction: string;
  /** Refunds only: what the adjustment amounts to (Data Manager has no type: a full refund restates the value to 0). */
  adjustmentType?: 'RETRACTION' | 'RESTATEMENT';
  event: DataManagerEvent;
}

/** The Google Ads API's ClickConversion as index.ts plans it (REST JSON). */
export interface ClickConversion {
  gclid?: string;
  gbraid?: string;
  wbraid?: string;
  conversionAction: string;
  conversionDateTime: string;
  conversionValue: number;
  currencyCode: string;
  orderId: string;
  userIdentifiers?: Array<{ hashedEmail: string } | { hashedPhoneNumber: string }>;
  consent: { adUserData: 'GRANTED' | 'DENIED' };
}

/** What both APIs are planned from (index.ts `plan`). */
export interface GoogleConversion {
  id: { kind: 'gclid' | 'gbraid' | 'wbraid'; value: string };
  conversionAction: string;
  eventTime: number;
  value: number;
  currency: string;
  orderId: string;
  eventId: string;
  hashedEmail?: string;
  hashedPhone?: string;
  adUserData: 'GRANTED' | 'DENIED';
  adPersonalization: 'GRANTED' | 'DENIED';
}

const status = (value: 'GRANTED' | 'DENIED'): DataManagerConsentStatus => `CONSENT_${value}`;

export function dataManagerPayload(c: GoogleConversion): DataManagerPayload {
  const identifiers: NonNullable<DataManagerEvent['userData']>['userIdentifiers'] = [];
  if (c.hashedEmail) identifiers.push({ emailAddress: c.hashedEmail });
  if (c.hashedPhone) identifiers.push({ phoneNumber: c.hashedPhone });
  return {
    conversionAction: c.conversionAction,
    event: {
      transactionId: c.eventId,
      eventTimestamp: new Date(c.eventTime).toISOString(),
      adIdentifiers: { [c.id.kind]: c.id.value },
      conversionValue: c.value,
      currency: c.currency,
      ...(identifiers.length > 0 && { userData: { userIdentifiers: identifiers } }),
      consent: { adUserData: status(c.adUserData), adPersonalization: status(c.adPersonalization) },
      eventSource: 'WEB',
    },
  };
}

export const isDataManagerPayload = (payload: unknown): payload is DataManagerPayload =>
  typeof payload === 'object' && payload !== null && 'event' in payload;

/** `yyyy-mm-dd hh:mm:ss±hh:mm` (the Google Ads API's date-time) → epoch ms. */
function googleDateTime(text: string): number {
  return Date.parse(text.replace(' ', 'T'));
}

/** epoch ms → the Google Ads API's date-time, in UTC (Google takes any offset). */
function utcDateTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')}+00:00`;
}

/**
 * A job's payload as Data Manager takes it. A ClickConversion planned for the Google Ads API
 * translates (its orderId becomes the transactionId: adjustments must name what the upload
 * named); an Ads API adjustment does not (it lacks the click id Data Manager requires).
 */
export function asDataManager(payload: unknown): DataManagerPayload | { error: string } {
  if (isDataManagerPayload(payload)) return payload;
  const p = payload as Partial<ClickConversion> & { adjustmentType?: unknown };
  if (typeof p?.conversionDateTime !== 'string' || typeof p.conversionAction !== 'string') {
    return {
      error:
        'This refund was queued for the Google Ads API before the destination switched to the Data Manager API, which cannot adjust it without the conversion’s click id; switch api back to google_ads_api to send it',
    };
  }
  const kind = (['gclid', 'gbraid', 'wbraid'] as const).find((k) => typeof p[k] === 'string');
  const identifiers = (p.userIdentifiers ?? []).map((u) =>
    'hashedEmail' in u ? { emailAddress: u.hashedEmail } : { phoneNumber: u.hashedPhoneNumber },
  );
  const adUserData = p.consent?.adUserData === 'DENIED' ? 'DENIED' : 'GRANTED';
  return {
    conversionAction: p.conversionAction,
    event: {
      transactionId: String(p.orderId),
      eventTimestamp: new Date(googleDateTime(p.conversionDateTime)).toISOString(),
      adIdentifiers: kind ? { [kind]: p[kind] } : {},
      conversionValue: Number(p.conversionValue),
      currency: String(p.currencyCode),
      ...(identifiers.length > 0 && { userData: { userIdentifiers: identifiers } }),
      // The Ads API's ClickConversion has no adPersonalization: Data Manager is told it as adUserData.
      consent: { adUserData: status(adUserData), adPersonalization: status(adUserData) },
      eventSource: 'WEB',
    },
  };
}

/**
 * A job's payload as the Google Ads API takes it: a Data Manager event becomes a ClickConversion
 * (or, with `adjustmentType`, a ConversionAdjustment by its transactionId as orderId).
 */
export function asGoogleAdsApi(payload: unknown): unknown {
  if (!isDataManagerPayload(payload)) return payload;
  const { event, conversionAction, adjustmentType } = payload;
  if (adjustmentType) {
    return {
      conversionAction,
      adjustmentType,
      adjustmentDateTime: utcDateTime(Date.parse(event.lastUpdatedTimestamp ?? event.eventTimestamp)),
      orderId: event.transactionId,
      ...(adjustmentType === 'RESTATEMENT' && {
        restatementValue: { adjustedValue: event.conversionValue, currencyCode: event.currency },
      }),
    };
  }
  const kind = (['gclid', 'gbraid', 'wbraid'] as const).find((k) => event.adIdentifiers[k]);
  const conversion: ClickConversion = {
    ...(kind && { [kind]: event.adIdentifiers[kind] }),
    conversionAction,
    conversionDateTime: utcDateTime(Date.parse(event.eventTimestamp)),
    conversionValue: event.conversionValue,
    currencyCode: event.currency,
    orderId: event.transactionId,
    consent: { adUserData: event.consent.adUserData === 'CONSENT_DENIED' ? 'DENIED' : 'GRANTED' },
  };
  // The Ads API takes user identifiers with a gclid only.
  const ids = event.userData?.userIdentifiers ?? [];
  if (kind === 'gclid' && ids.length > 0) {
    conversion.userIdentifiers = ids.map((u) =>
      'emailAddress' in u ? { hashedEmail: u.emailAddress } : { hashedPhoneNumber: u.phoneNumber },
    );
  }
  return conversion;
}

/**
 * A refund through Data Manager (api.md §9, §12): Data Manager adjusts a conversion when an event
 * comes again with the same transactionId, destination and conversion action; its
 * `conversionValue` and `currency` replace the recorded ones. So the refund job is the
 * conversion's event again with the value left after this refund (0 when fully refunded: Data
 * Manager has no retraction) and the refund's time as `lastUpdatedTimestamp`.
 */
export function planDataManagerRefund(input: RefundPlanInput<unknown>): Plan | undefined {
  const { conversion, refund, conversionPayload, now } = input;
  if (conversionPayload === undefined) {
    return {
      skip: 'not_adjustable',
      message:
        'Not sent to Google Ads: the Data Manager API adjusts a conversion by the identifiers it was uploaded with, and this conversion’s upload is no longer kept',
    };
  }
  const original = asDataManager(conversionPayload);
  if ('error' in original) return { skip: 'not_adjustable', message: `Not sent to Google Ads: ${original.error}` };
  const remaining = conversion.value_minor - refund.refunded_after_minor;
  const at = Math.max(refund.refund_time, conversion.event_time + 1000);
  const payload: DataManagerPayload = {
    conversionAction: original.conversionAction,
    adjustmentType: remaining > 0 ? 'RESTATEMENT' : 'RETRACTION',
    event: {
      ...original.event,
      lastUpdatedTimestamp: new Date(at).toISOString(),
      conversionValue: fromMinorUnits(Math.max(remaining, 0), conversion.currency),
      currency: conversion.currency,
    },
  };
  return { payload, expiresAt: now + GOOGLE_ADJUSTMENT_MAX_AGE_MS };
}
