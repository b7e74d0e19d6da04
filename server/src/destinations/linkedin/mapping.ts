import { consentView } from '../../consent/consent.js';
import type { CustomerData } from '../../customer-data.js';
import type { ClicksTable, ConversionsTable } from '../../db/schema.js';
import { currencyExponent } from '../../money.js';
import type { Plan, PlanInput } from '../adapter.js';
import { sha256 } from '../hashing.js';

/**
 * LinkedIn's Conversions API: `POST {LINKEDIN_API_URL}/rest/conversionEvents` with
 * `X-RestLi-Method: BATCH_CREATE`, `LinkedIn-Version: YYYYMM`, `X-Restli-Protocol-Version:
 * 2.0.0`, `Authorization: Bearer`, body `{elements: [{conversion, conversionHappenedAt (ms),
 * conversionValue: {currencyCode, amount: "12.34"}, eventId, user: {userIds: [{idType:
 * "SHA256_EMAIL" | "LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID", idValue}], userInfo?}}]}`; the
 * answer per element (`elements[i].status` 201, or an error). Sources: Microsoft Learn
 * "LinkedIn Conversions API" (learn.microsoft.com/en-us/linkedin/marketing/conversions/
 * conversions-overview, the payload builder), Adobe's LinkedIn CAPI extension docs
 * (AdobeDocs/experience-platform.en help/tags/extensions/server/linkedin/overview.md); events
 * older than 90 days are refused. Uncertainties are in README.md.
 */
export interface LinkedInSettings {
  /** `urn:lla:llaPartnerConversion:<digits>`. */
  conversionRuleId: string;
}

export interface LinkedInUserId {
  idType: 'SHA256_EMAIL' | 'LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID';
  idValue: string;
}

export interface LinkedInEvent {
  conversion: string;
  conversionHappenedAt: number;
  conversionValue: { currencyCode: string; amount: string };
  eventId: string;
  user: {
    userIds: LinkedInUserId[];
    userInfo?: { firstName: string; lastName: string; countryCode?: string };
  };
}

/** LinkedIn takes conversions up to 90 days old. */
export const LINKEDIN_MAX_EVENT_AGE_MS = 90 * 86_400_000;
const SHA256_HEX = /^[a-f0-9]{64}$/i;

function hashedEmail(raw: string | undefined): string | undefined {
  const value = raw?.trim().toLowerCase();
  if (!value) return undefined;
  return SHA256_HEX.test(value) ? value : sha256(value);
}

/** The attributed click's li_fat_id, else one the conversion named (`ref_ids.li_fat_id`). */
function liFatId(conversion: ConversionsTable, click: ClicksTable | undefined): string | undefined {
  const refs = conversion.ref_ids ? (JSON.parse(conversion.ref_ids) as Record<string, string>) : {};
  return click?.li_fat_id || refs.li_fat_id || undefined;
}

/** The amount as LinkedIn's decimal string, exact from the minor units ("12.34", "1200"). */
export function amountOf(minor: number, currency: string): string {
  const exponent = currencyExponent(currency);
  const sign = minor < 0 ? '-' : '';
  const digits = String(Math.abs(minor)).padStart(exponent + 1, '0');
  return exponent === 0 ? `${sign}${digits}` : `${sign}${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
}

function userInfo(customerData: CustomerData | undefined): LinkedInEvent['user']['userInfo'] {
  const firstName = customerData?.firstName?.trim();
  const lastName = customerData?.lastName?.trim();
  // LinkedIn requires both names when userInfo is sent.
  if (!firstName || !lastName) return undefined;
  const country = customerData?.country?.trim().toUpperCase();
  return { firstName, lastName, ...(country && /^[A-Z]{2}$/.test(country) && { countryCode: country }) };
}

/**
 * A conversion as LinkedIn's conversion event (api.md §12): sent when its credited click or an
 * explicit reference carries a li_fat_id; the conversion's eventId is LinkedIn's dedup id
 * (`eventId`, the Insight Tag's `event_id`).
 */
export function planLinkedIn({
  settings,
  conversion: recorded,
  click: attributedClick,
  customerData: given,
  now,
}: PlanInput<LinkedInSettings>): Plan | undefined {
  if (!liFatId(recorded, attributedClick)) return undefined;
  if (recorded.livemode === 0) {
    return {
      skip: 'test_mode_unsupported',
      message: 'Not sent to LinkedIn: LinkedIn’s Conversions API has no test mode, and a test-mode conversion must not count',
    };
  }
  // Consent (api.md §10): the ids and identifiers below are only those the stored consent allows.
  const { conversion, click, customerData } = consentView(recorded, attributedClick, given);
  const fatId = liFatId(conversion, click);
  const email = hashedEmail(customerData?.email);
  const userIds: LinkedInUserId[] = [
    ...(email ? [{ idType: 'SHA256_EMAIL' as const, idValue: email }] : []),
    ...(fatId ? [{ idType: 'LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID' as const, idValue: fatId }] : []),
  ];
  if (userIds.length === 0) {
    return {
      skip: 'consent_denied',
      message:
        'Not sent to LinkedIn: the visitor’s consent withholds its li_fat_id (adStorage denied) and no hashed email may be sent (adUserData denied); LinkedIn needs one of them',
    };
  }
  const expiresAt = Math.min(conversion.event_time, now) + LINKEDIN_MAX_EVENT_AGE_MS;
  if (expiresAt <= now) {
    return { skip: 'expired', message: 'Not sent to LinkedIn: LinkedIn accepts conversions up to 90 days old' };
  }
  const info = userInfo(customerData);
  const payload: LinkedInEvent = {
    conversion: settings.conversionRuleId,
    conversionHappenedAt: conversion.event_time,
    conversionValue: { currencyCode: conversion.currency, amount: amountOf(conversion.value_minor, conversion.currency) },
    eventId: conversion.event_id,
    user: { userIds, ...(info && { userInfo: info }) },
  };
  return { payload, expiresAt };
}
