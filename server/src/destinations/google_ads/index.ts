import { zoneOf } from '../../calendar/zone.js';
import { consentView } from '../../consent/consent.js';
import type { CustomerData } from '../../customer-data.js';
import { fieldError } from '../../http/errors.js';
import { fromMinorUnits } from '../../money.js';
import type { Adapter, SendRequest } from '../adapter.js';
import { object, onlyFields, text } from '../fields.js';
import { hashedEmail, hashedPhone } from '../hashing.js';
import { planAdjustment } from './adjustments.js';
import { sendGoogleAdsApi } from './ads-api.js';
import { checkGoogleAds } from './check.js';
import { DATA_MANAGER_MAX_EVENTS, sendDataManager } from './data-manager.js';
import {
  asGoogleAdsApi,
  type ClickConversion,
  dataManagerPayload,
  type GoogleConversion,
  isDataManagerPayload,
  planDataManagerRefund,
} from './data-manager-payloads.js';
import { GOOGLE_ADS_SETTINGS } from './settings-schema.js';

export type { ClickConversion } from './data-manager-payloads.js';
export { forgetGoogleTokens } from './oauth.js';

/**
 * Google Ads (api.md §8, §12), by one of two APIs (`api`):
 * - `data_manager` (the default for new settings): Google's Data Manager API `events:ingest`
 *   with the OAuth client only (data-manager.ts);
 * - `google_ads_api`: offline click conversions through
 *   `ConversionUploadService.UploadClickConversions` (REST: `POST
 *   /{version}/customers/{customerId}:uploadClickConversions`) with a developer token. Since
 *   2026-06-15 Google accepts these only from tokens that already used them; settings saved
 *   before `api` existed have none and keep this path.
 * Both exchange the store's OAuth refresh token for an access token (oauth.ts).
 */
export type GoogleApi = 'data_manager' | 'google_ads_api';
export const GOOGLE_APIS: readonly GoogleApi[] = ['data_manager', 'google_ads_api'];

export interface GoogleAdsSettings {
  /** Absent on settings saved before api.md §12: they are `google_ads_api` (apiOf). */
  api?: GoogleApi;
  customerId: string;
  loginCustomerId?: string;
  /** One conversion action for every eventType, or one per eventType (an eventType without one is not sent). */
  conversionAction: string | Record<string, string>;
  oauthClientId: string;
  /** Whether a developer token is stored (the secrets are not opened to show the settings). */
  developerTokenSet?: boolean;
}

export interface GoogleAdsSecrets {
  /** The Google Ads API path's; kept (unused) under Data Manager so switching back needs no new one. */
  developerToken?: string;
  clientSecret: string;
  refreshToken: string;
}

/** The API a store's settings use: stored settings without `api` predate Data Manager and keep the Google Ads API. */
export const apiOf = (settings: Pick<GoogleAdsSettings, 'api'>): GoogleApi => settings.api ?? 'google_ads_api';

const CUSTOMER_ID = /^\d{10}$/;
const CONVERSION_ACTION = /^customers\/\d{10}\/conversionActions\/\d+$/;
const EVENT_TYPE = /^[A-Za-z][A-Za-z0-9_]{0,49}$/;
/** Google keeps a click for 90 days: conversions of older clicks are refused. */
export const GOOGLE_MAX_CLICK_AGE_MS = 90 * 86_400_000;
/** UploadClickConversions and Data Manager's events:ingest each take at most 2000 per request. */
const MAX_BATCH = Math.min(2000, DATA_MANAGER_MAX_EVENTS);
/** `yyyy-mm-dd hh:mm:ss+hh:mm` in the store's time zone. */
export function conversionDateTime(ms: number, timezone: string): string {
  const offset = zoneOf(timezone).offset(ms);
  const local = new Date(ms + offset);
  const pad = (n: number) => String(n).padStart(2, '0');
  const sign = offset < 0 ? '-' : '+';
  const minutes = Math.abs(offset) / 60_000;
  return (
    `${local.getUTCFullYear()}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())} ` +
    `${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}:${pad(local.getUTCSeconds())}` +
    `${sign}${pad(Math.floor(minutes / 60))}:${pad(minutes % 60)}`
  );
}

/** The customer's hashed email and phone (Google's normalization), when given and allowed. */
function identifiersOf(data: CustomerData | undefined): { hashedEmail?: string; hashedPhone?: string } {
  const email = data?.email ? hashedEmail(data.email) : undefined;
  const phone = data?.phone ? hashedPhone(data.phone, data.country) : undefined;
  return { ...(email && { hashedEmail: email }), ...(phone && { hashedPhone: phone }) };
}

/** The Google Ads API's ClickConversion of a conversion (`conversionDateTime` in the store's time zone). */
function clickConversion(c: GoogleConversion, timezone: string): ClickConversion {
  const ids: NonNullable<ClickConversion['userIdentifiers']> = [];
  if (c.hashedEmail) ids.push({ hashedEmail: c.hashedEmail });
  if (c.hashedPhone) ids.push({ hashedPhoneNumber: c.hashedPhone });
  return {
    [c.id.kind]: c.id.value,
    conversionAction: c.conversionAction,
    conversionDateTime: conversionDateTime(c.eventTime, timezone),
    conversionValue: c.value,
    currencyCode: c.currency,
    orderId: c.orderId,
    // The Ads API accepts user identifiers with a gclid only (not with gbraid or wbraid).
    ...(c.id.kind === 'gclid' && ids.length > 0 && { userIdentifiers: ids }),
    consent: { adUserData: c.adUserData },
  };
}

/** `api` of a PUT body: given, else the stored settings' (old ones: google_ads_api), else data_manager for new settings. */
function apiFrom(body: Record<string, unknown>, previous: GoogleAdsSettings | undefined): GoogleApi {
  const value = body.api;
  if (value === undefined || value === null || value === '') return previous ? apiOf(previous) : 'data_manager';
  if (typeof value !== 'string' || !(GOOGLE_APIS as readonly string[]).includes(value)) {
    throw fieldError(
      'invalid_request',
      'api',
      'unknown_value',
      'api must be data_manager (Google’s Data Manager API: OAuth client only, works for every account) or google_ads_api (the Google Ads API: needs a developer token that already uploads click conversions)',
    );
  }
  return value as GoogleApi;
}

/** Whether a click, or a conversion's named ids, carried a gclid, gbraid or wbraid. */
function hasGoogleId(row: { gclid?: string | null; gbraid?: string | null; wbraid?: string | null; ref_ids?: string | null }) {
  if (row.gclid || row.gbraid || row.wbraid) return true;
  const refs = row.ref_ids ? (JSON.parse(row.ref_ids) as Record<string, string>) : {};
  return Boolean(refs.gclid || refs.gbraid || refs.wbraid);
}

function settingsFrom(body: Record<string, unknown>, previous: GoogleAdsSettings | undefined): GoogleAdsSettings {
  const customerId = text(body, 'customerId', {
    required: true,
    pattern: CUSTOMER_ID,
    hint: '10 digits, without dashes',
  }) as string;
  const loginCustomerId = text(body, 'loginCustomerId', {
    required: false,
    pattern: CUSTOMER_ID,
    hint: '10 digits, without dashes (the manager account)',
  });
  const raw = body.conversionAction;
  let conversionAction: GoogleAdsSettings['conversionAction'];
  const hint = 'a resource name customers/<10 digits>/conversionActions/<id>';
  if (raw && typeof raw === 'object' && !Array.isArray(raw)) {
    const map: Record<string, string> = {};
    for (const [eventType, action] of Object.entries(raw as Record<string, unknown>)) {
      const path = `conversionAction.${eventType}`;
      if (!EVENT_TYPE.test(eventType)) throw fieldError('invalid_request', path, 'invalid_format', `${path}: not an eventType`);
      map[eventType] = text({ v: action }, 'v', { required: true, pattern: CONVERSION_ACTION, path, hint }) as string;
    }
    if (Object.keys(map).length === 0) {
      throw fieldError('invalid_request', 'conversionAction', 'out_of_range', 'conversionAction maps no eventType');
    }
    conversionAction = map;
  } else {
    conversionAction = text(body, 'conversionAction', { required: true, pattern: CONVERSION_ACTION, hint }) as string;
  }
  const oauth = object(body, 'oauth', previous === undefined) ?? {};
  onlyFields(oauth, ['clientId', 'clientSecret', 'refreshToken'], 'oauth');
  const oauthClientId = text(oauth, 'clientId', {
    required: true,
    path: 'oauth.clientId',
    previous: previous?.oauthClientId,
  }) as string;
  return { customerId, ...(loginCustomerId && { loginCustomerId }), conversionAction, oauthClientId };
}

export const googleAds: Adapter<GoogleAdsSettings, GoogleAdsSecrets> = {
  kind: 'google_ads',
  label: 'Google Ads',
  maxBatch: MAX_BATCH,
  settingsSchema: GOOGLE_ADS_SETTINGS,

  parse(body, previous) {
    onlyFields(body, ['api', 'customerId', 'loginCustomerId', 'conversionAction', 'developerToken', 'oauth']);
    const api = apiFrom(body, previous?.settings);
    const settings = settingsFrom(body, previous?.settings);
    const oauth = (body.oauth ?? {}) as Record<string, unknown>;
    const given = body.developerToken;
    if (api === 'data_manager' && given !== undefined && given !== null && given !== '') {
      throw fieldError(
        'invalid_request',
        'developerToken',
        'unknown_field',
        'developerToken is for api google_ads_api only: the Data Manager API (api data_manager, the default) needs only the OAuth client. Leave it out, or set api to google_ads_api for a developer token that already uploads click conversions',
      );
    }
    const developerToken =
      api === 'google_ads_api'
        ? (text(body, 'developerToken', {
            required: true,
            previous: previous?.secrets.developerToken,
            hint: 'the Google Ads API needs a developer token; new tokens can no longer upload click conversions, so choose api data_manager unless yours already does',
          }) as string)
        : previous?.secrets.developerToken;
    const secrets: GoogleAdsSecrets = {
      ...(developerToken !== undefined && { developerToken }),
      clientSecret: text(oauth, 'clientSecret', {
        required: true,
        path: 'oauth.clientSecret',
        previous: previous?.secrets.clientSecret,
      }) as string,
      refreshToken: text(oauth, 'refreshToken', {
        required: true,
        max: 2000,
        path: 'oauth.refreshToken',
        previous: previous?.secrets.refreshToken,
      }) as string,
    };
    return { settings: { api, ...settings, developerTokenSet: developerToken !== undefined }, secrets };
  },

  present(settings) {
    const api = apiOf(settings);
    return {
      api,
      customerId: settings.customerId,
      loginCustomerId: settings.loginCustomerId ?? null,
      conversionAction: settings.conversionAction,
      oauth: { clientId: settings.oauthClientId, clientSecretConfigured: true, refreshTokenConfigured: true },
      // Settings saved before `api` always had one.
      developerTokenConfigured: settings.developerTokenSet ?? api === 'google_ads_api',
    };
  },

  plan({ store, settings, conversion: recorded, click: attributedClick, customerData: given }) {
    // Consent (api.md §10): the ids and identifiers below are only those the stored consent allows.
    const view = consentView(recorded, attributedClick, given);
    const { conversion, click, customerData } = view;
    const action =
      typeof settings.conversionAction === 'string'
        ? settings.conversionAction
        : settings.conversionAction[conversion.event_type];
    if (!action) return undefined; // this eventType is not one of the store's Google conversions
    const refs = conversion.ref_ids ? (JSON.parse(conversion.ref_ids) as Record<string, string>) : {};
    // The attributed click's Google id first; else one the conversion named.
    let id: { kind: 'gclid' | 'gbraid' | 'wbraid'; value: string; from: number } | undefined;
    for (const kind of ['gclid', 'gbraid', 'wbraid'] as const) {
      const value = click?.[kind];
      if (value && click) {
        id = { kind, value, from: click.click_time };
        break;
      }
    }
    if (!id) {
      for (const kind of ['gclid', 'gbraid', 'wbraid'] as const) {
        if (refs[kind]) {
          id = { kind, value: refs[kind], from: conversion.event_time };
          break;
        }
      }
    }
    if (!id) {
      // A Google id was there but its ad storage was denied: said, not silently dropped.
      const withheld = [attributedClick, recorded].some((row) => row && hasGoogleId(row));
      return withheld && view.clickIdsWithheld
        ? {
            skip: 'consent_denied',
            message:
              'Not sent to Google Ads: its only Google click id came with ad storage (adStorage) denied, so it is used for attribution but never sent',
          }
        : undefined;
    }
    const expiresAt = id.from + GOOGLE_MAX_CLICK_AGE_MS;
    if (expiresAt <= conversion.created_at) {
      return { skip: 'expired', message: 'Not sent to Google Ads: Google accepts conversions of clicks up to 90 days old' };
    }
    const google: GoogleConversion = {
      id,
      conversionAction: action,
      eventTime: conversion.event_time,
      value: fromMinorUnits(conversion.value_minor, conversion.currency),
      currency: conversion.currency,
      orderId: conversion.order_id,
      eventId: conversion.event_id,
      ...identifiersOf(customerData),
      adUserData: view.adUserData,
      adPersonalization: view.consent.adPersonalization === 'granted' ? 'GRANTED' : 'DENIED',
    };
    const payload = apiOf(settings) === 'data_manager' ? dataManagerPayload(google) : clickConversion(google, store.timezone);
    return { payload, expiresAt };
  },

  planRefund(input) {
    if (apiOf(input.settings) === 'data_manager') return planDataManagerRefund(input);
    const plan = planAdjustment(input, conversionDateTime);
    // A conversion uploaded through Data Manager (before a switch back) is known to Google by its transactionId.
    if (plan && 'payload' in plan && isDataManagerPayload(input.conversionPayload)) {
      (plan.payload as { orderId: string }).orderId = input.conversionPayload.event.transactionId;
    }
    return plan;
  },

  /** The credentials checked now without a live conversion (check.ts): OAuth, then a validateOnly upload. */
  check(request) {
    return checkGoogleAds(request, (checked) =>
      this.send(checked as typeof checked & SendRequest<GoogleAdsSettings, GoogleAdsSecrets>),
    );
  },

  async send(request) {
    // The payloads are translated when they were planned under the other api (the settings changed meanwhile).
    if (apiOf(request.settings) === 'data_manager')
      return sendDataManager(request as SendRequest<GoogleAdsSettings, Required<GoogleAdsSecrets>>);
    return sendGoogleAdsApi({ ...request, payloads: request.payloads.map(asGoogleAdsApi) });
  },
};
