import { zoneOf } from '../calendar/zone.js';
import type { CustomerData } from '../capi/pii.js';
import { consentView } from '../consent/consent.js';
import { fieldError } from '../http/errors.js';
import { fromMinorUnits } from '../money.js';
import { type Adapter, all, clip, type Outcome, parseJson, post, retryAfterMs } from './adapter.js';
import { object, onlyFields, text } from './fields.js';
import { planAdjustment } from './google-ads-adjustments.js';
import { hashedEmail, hashedPhone, sha256 } from './hashing.js';
import { GOOGLE_ADS_SETTINGS } from './settings-schemas.js';

/**
 * Google Ads: offline click conversions through `ConversionUploadService.UploadClickConversions`
 * (REST: `POST /{version}/customers/{customerId}:uploadClickConversions`), after exchanging the
 * store's OAuth refresh token for an access token (cached until it expires). Google's newer Data
 * Manager API is not used yet (docs/api.md).
 */
export interface GoogleAdsSettings {
  customerId: string;
  loginCustomerId?: string;
  /** One conversion action for every eventType, or one per eventType (an eventType without one is not sent). */
  conversionAction: string | Record<string, string>;
  oauthClientId: string;
}

export interface GoogleAdsSecrets {
  developerToken: string;
  clientSecret: string;
  refreshToken: string;
}

/** A ClickConversion as the REST API reads it (camelCase JSON of the proto). */
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

const CUSTOMER_ID = /^\d{10}$/;
const CONVERSION_ACTION = /^customers\/\d{10}\/conversionActions\/\d+$/;
const EVENT_TYPE = /^[A-Za-z][A-Za-z0-9_]{0,49}$/;
/** Google keeps a click for 90 days: conversions of older clicks are refused. */
export const GOOGLE_MAX_CLICK_AGE_MS = 90 * 86_400_000;
/** UploadClickConversions takes at most 2000 conversions per request. */
const MAX_BATCH = 2000;
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

function userIdentifiers(data: CustomerData | undefined): ClickConversion['userIdentifiers'] {
  if (!data) return undefined;
  const ids: NonNullable<ClickConversion['userIdentifiers']> = [];
  const email = data.email ? hashedEmail(data.email) : undefined;
  if (email) ids.push({ hashedEmail: email });
  const phone = data.phone ? hashedPhone(data.phone, data.country) : undefined;
  if (phone) ids.push({ hashedPhoneNumber: phone });
  return ids.length > 0 ? ids : undefined;
}

/** Whether a click, or a conversion's named ids, carried a gclid, gbraid or wbraid. */
function hasGoogleId(row: { gclid?: string | null; gbraid?: string | null; wbraid?: string | null; ref_ids?: string | null }) {
  if (row.gclid || row.gbraid || row.wbraid) return true;
  const refs = row.ref_ids ? (JSON.parse(row.ref_ids) as Record<string, string>) : {};
  return Boolean(refs.gclid || refs.gbraid || refs.wbraid);
}

/** Access tokens per OAuth client and refresh token, until shortly before they expire. */
const tokens = new Map<string, { token: string; expiresAt: number }>();
const tokenKey = (settings: GoogleAdsSettings, secrets: GoogleAdsSecrets) =>
  sha256(`${settings.oauthClientId}\n${secrets.clientSecret}\n${secrets.refreshToken}`);

async function accessToken(
  url: string,
  settings: GoogleAdsSettings,
  secrets: GoogleAdsSecrets,
  timeoutMs: number,
): Promise<{ token: string } | { outcome: Outcome }> {
  const key = tokenKey(settings, secrets);
  const cached = tokens.get(key);
  if (cached && cached.expiresAt > Date.now()) return { token: cached.token };
  const answer = await post(
    url,
    {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        client_id: settings.oauthClientId,
        client_secret: secrets.clientSecret,
        refresh_token: secrets.refreshToken,
      }).toString(),
    },
    timeoutMs,
    "Google's OAuth server",
  );
  const hide = [secrets.clientSecret, secrets.refreshToken];
  if ('error' in answer) return { outcome: { outcome: 'retry', error: clip(answer.error, hide) } };
  const body = parseJson(answer.text) as
    | { access_token?: unknown; expires_in?: unknown; error?: unknown; error_description?: unknown }
    | undefined;
  if (answer.response.ok && typeof body?.access_token === 'string') {
    const seconds = typeof body.expires_in === 'number' ? body.expires_in : 3600;
    // Refreshed a minute early: a token must not expire between the check and Google's.
    tokens.set(key, { token: body.access_token, expiresAt: Date.now() + Math.max(seconds - 60, 1) * 1000 });
    return { token: body.access_token };
  }
  const status = answer.response.status;
  const detail = `${typeof body?.error === 'string' ? body.error : `HTTP ${status}`}${
    typeof body?.error_description === 'string' ? `: ${body.error_description}` : ''
  }`;
  if (status >= 500 || status === 429) {
    return { outcome: { outcome: 'retry', error: clip(`Google OAuth error (${detail})`, hide) } };
  }
  // invalid_grant (refresh token revoked or expired), invalid_client: only the merchant can fix it.
  return {
    outcome: {
      outcome: 'failed',
      error: clip(`Google OAuth refused the refresh token (${detail}); set the google_ads destination's oauth again`, hide),
    },
  };
}

interface GoogleAdsError {
  errorCode?: Record<string, unknown>;
  message?: unknown;
  location?: { fieldPathElements?: Array<{ fieldName?: unknown; index?: unknown }> };
}

function failureErrors(status: { details?: unknown } | undefined): GoogleAdsError[] {
  const details = Array.isArray(status?.details) ? status.details : [];
  const errors: GoogleAdsError[] = [];
  for (const detail of details as Array<{ errors?: unknown }>) {
    if (Array.isArray(detail?.errors)) errors.push(...(detail.errors as GoogleAdsError[]));
  }
  return errors;
}

function describeError(error: GoogleAdsError): string {
  const code = error.errorCode ? Object.entries(error.errorCode).map(([k, v]) => `${k}: ${String(v)}`)[0] : undefined;
  return `${typeof error.message === 'string' ? error.message : 'no message'}${code ? ` (${code})` : ''}`;
}

/** Errors Google marks as its own or as quota: trying again later may succeed. */
function isTransient(error: GoogleAdsError): boolean {
  const code = error.errorCode ?? {};
  return 'internalError' in code || 'quotaError' in code || code.databaseError === 'CONCURRENT_MODIFICATION';
}

function rowIndex(error: GoogleAdsError): number | undefined {
  const first = error.location?.fieldPathElements?.find(
    (e) => e.fieldName === 'conversions' || e.fieldName === 'conversion_adjustments' || e.fieldName === 'conversionAdjustments',
  );
  return typeof first?.index === 'number' ? first.index : undefined;
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
    onlyFields(body, ['customerId', 'loginCustomerId', 'conversionAction', 'developerToken', 'oauth']);
    const settings = settingsFrom(body, previous?.settings);
    const oauth = (body.oauth ?? {}) as Record<string, unknown>;
    const secrets: GoogleAdsSecrets = {
      developerToken: text(body, 'developerToken', { required: true, previous: previous?.secrets.developerToken }) as string,
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
    return { settings, secrets };
  },

  present(settings) {
    return {
      customerId: settings.customerId,
      loginCustomerId: settings.loginCustomerId ?? null,
      conversionAction: settings.conversionAction,
      oauth: { clientId: settings.oauthClientId, clientSecretConfigured: true, refreshTokenConfigured: true },
      developerTokenConfigured: true,
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
    const payload: ClickConversion = {
      [id.kind]: id.value,
      conversionAction: action,
      conversionDateTime: conversionDateTime(conversion.event_time, store.timezone),
      conversionValue: fromMinorUnits(conversion.value_minor, conversion.currency),
      currencyCode: conversion.currency,
      orderId: conversion.order_id,
      // Google accepts user identifiers with a gclid only (not with gbraid or wbraid).
      ...(id.kind === 'gclid' && { userIdentifiers: userIdentifiers(customerData) }),
      consent: { adUserData: view.adUserData },
    };
    if (!payload.userIdentifiers) delete payload.userIdentifiers;
    return { payload, expiresAt };
  },

  planRefund: (input) => planAdjustment(input, conversionDateTime),

  async send({ settings, secrets, live, kind, payloads, env, timeoutMs }) {
    const hide = [secrets.developerToken, secrets.clientSecret, secrets.refreshToken];
    const auth = await accessToken(env.googleOauthTokenUrl, settings, secrets, timeoutMs);
    if ('outcome' in auth) return all(payloads.length, auth.outcome);
    // A refund is an adjustment of the uploaded conversion (google-ads-adjustments.ts).
    const method = kind === 'refund' ? 'uploadConversionAdjustments' : 'uploadClickConversions';
    const url = `${env.googleAdsApiUrl}/${env.googleAdsApiVersion}/customers/${settings.customerId}:${method}`;
    const answer = await post(
      url,
      {
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${auth.token}`,
          'developer-token': secrets.developerToken,
          ...(settings.loginCustomerId && { 'login-customer-id': settings.loginCustomerId }),
        },
        body: JSON.stringify({
          [kind === 'refund' ? 'conversionAdjustments' : 'conversions']: payloads,
          partialFailure: true,
          ...(!live && { validateOnly: true }),
        }),
      },
      timeoutMs,
      'Google Ads',
    );
    hide.push(auth.token);
    if ('error' in answer) return all(payloads.length, { outcome: 'retry', error: clip(answer.error, hide) });
    const { response, text: raw } = answer;
    const body = parseJson(raw) as
      | { results?: unknown; partialFailureError?: { code?: unknown; message?: unknown; details?: unknown }; jobId?: unknown }
      | { error?: { code?: unknown; message?: unknown; status?: unknown; details?: unknown } }
      | undefined;
    if (response.ok && body && !('error' in body && body.error)) {
      const ok = body as { partialFailureError?: { details?: unknown; message?: unknown }; jobId?: unknown };
      const outcomes: Outcome[] = payloads.map(() => ({ outcome: 'sent' }));
      const failure = ok.partialFailureError;
      if (failure && (failure as { code?: unknown }).code !== 0) {
        const errors = failureErrors(failure);
        const unplaced: string[] = [];
        for (const error of errors) {
          const index = rowIndex(error);
          const message = clip(`Google Ads error: ${describeError(error)}`, hide);
          if (index === undefined || index >= outcomes.length) {
            unplaced.push(message);
            continue;
          }
          const previous = outcomes[index];
          // A row with several errors: a permanent one decides.
          if (previous?.outcome === 'failed') continue;
          outcomes[index] = isTransient(error) ? { outcome: 'retry', error: message } : { outcome: 'failed', error: message };
        }
        if (errors.length === 0 || unplaced.length === errors.length) {
          // Not placed on a row: the whole request's problem.
          const message = clip(
            `Google Ads error: ${unplaced[0] ?? (typeof failure.message === 'string' ? failure.message : 'partial failure')}`,
            hide,
          );
          return all(payloads.length, { outcome: 'failed', error: message });
        }
      }
      return { outcomes, ...(ok.jobId !== undefined && { traceId: String(ok.jobId) }) };
    }
    const error = body && 'error' in body ? body.error : undefined;
    const status = response.status;
    const errors = failureErrors(error as { details?: unknown } | undefined);
    const message = clip(
      `Google Ads error (HTTP ${status}${typeof error?.status === 'string' ? ` ${error.status}` : ''}): ${
        errors.length > 0
          ? errors.map(describeError).join('; ')
          : typeof error?.message === 'string'
            ? error.message
            : 'no message'
      }`,
      hide,
    );
    if (status === 401) {
      // The cached token expired early or was revoked: the next attempt exchanges the refresh token again.
      tokens.delete(tokenKey(settings, secrets));
      return all(payloads.length, { outcome: 'retry', error: message });
    }
    const hint = retryAfterMs(response.headers);
    if (status === 429 || status >= 500 || (errors.length > 0 && errors.every(isTransient))) {
      return all(payloads.length, { outcome: 'retry', error: message, ...(hint !== undefined && { retryAfterMs: hint }) });
    }
    return all(payloads.length, { outcome: 'failed', error: message });
  },
};

/** Tests: forget cached access tokens. */
export function forgetGoogleTokens(): void {
  tokens.clear();
}
