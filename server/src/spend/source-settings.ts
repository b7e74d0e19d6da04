import { object, onlyFields, text } from '../destinations/fields.js';
import { ApiError, fieldError } from '../http/errors.js';

/**
 * A spend source's PUT body per kind (api.md §11 "Spend sources"): the accounts to pull, the
 * backfill, and optional secrets of its own. A secret left out keeps the one stored with the
 * source; with none stored, the store's destination of that kind lends its own (credentials.ts).
 */
export const SPEND_SOURCE_KINDS = ['meta', 'google_ads', 'tiktok'] as const;
export type SpendSourceKind = (typeof SPEND_SOURCE_KINDS)[number];

export const DEFAULT_BACKFILL_DAYS = 30;
export const MAX_BACKFILL_DAYS = 90;
const MAX_ACCOUNTS = 50;

/** The stored, non-secret settings. */
export interface SourceSettings {
  accounts: string[];
  /** Google Ads: the manager account the customers are reached through. */
  loginCustomerId?: string;
  /** Google Ads: the OAuth client of the source's own `oauth` (its secret is sealed). */
  oauthClientId?: string;
}

/** The source's own secrets (sealed); every one optional. */
export interface SourceSecrets {
  accessToken?: string;
  developerToken?: string;
  clientSecret?: string;
  refreshToken?: string;
}

export interface ParsedSource {
  settings: SourceSettings;
  secrets: SourceSecrets;
  backfillDays: number;
}

interface KindRules {
  label: string;
  /** The body field listing the accounts. */
  accountsField: 'adAccountIds' | 'customerIds' | 'advertiserIds';
  pattern: RegExp;
  hint: string;
  fields: string[];
}

export const KIND_RULES: Record<SpendSourceKind, KindRules> = {
  meta: {
    label: 'Meta',
    accountsField: 'adAccountIds',
    pattern: /^act_\d{1,20}$/,
    hint: 'an ad account id act_<digits>',
    fields: ['adAccountIds', 'accessToken', 'backfillDays'],
  },
  google_ads: {
    label: 'Google Ads',
    accountsField: 'customerIds',
    pattern: /^\d{10}$/,
    hint: 'a customer id of 10 digits, without dashes',
    fields: ['customerIds', 'loginCustomerId', 'developerToken', 'oauth', 'backfillDays'],
  },
  tiktok: {
    label: 'TikTok',
    accountsField: 'advertiserIds',
    pattern: /^\d{1,30}$/,
    hint: 'an advertiser id of digits',
    fields: ['advertiserIds', 'accessToken', 'backfillDays'],
  },
};

export function checkSourceKind(kind: string): SpendSourceKind {
  if ((SPEND_SOURCE_KINDS as readonly string[]).includes(kind)) return kind as SpendSourceKind;
  throw fieldError('invalid_request', 'kind', 'unknown_value', `kind must be one of ${SPEND_SOURCE_KINDS.join(', ')}`);
}

function accounts(body: Record<string, unknown>, rules: KindRules): string[] {
  const field = rules.accountsField;
  const value = body[field];
  if (value === undefined || value === null) {
    throw new ApiError('missing_required_field', `${field} is required`, { field, reason: 'required_field_missing' });
  }
  if (!Array.isArray(value)) throw fieldError('invalid_request', field, 'invalid_type', `${field} must be an array of strings`);
  if (value.length === 0 || value.length > MAX_ACCOUNTS) {
    throw fieldError('invalid_request', field, 'out_of_range', `${field} must list 1 to ${MAX_ACCOUNTS} accounts`);
  }
  const seen = new Set<string>();
  value.forEach((item, i) => {
    const path = `${field}[${i}]`;
    if (typeof item !== 'string') throw fieldError('invalid_request', path, 'invalid_type', `${path} must be a string`);
    if (!rules.pattern.test(item)) {
      throw fieldError('invalid_request', path, 'invalid_format', `${path} has an invalid format: ${rules.hint}`);
    }
    if (seen.has(item)) throw fieldError('invalid_request', path, 'duplicate_entry', `${path} lists ${item} twice`);
    seen.add(item);
  });
  return value as string[];
}

function backfillDays(body: Record<string, unknown>): number {
  const value = body.backfillDays;
  if (value === undefined || value === null) return DEFAULT_BACKFILL_DAYS;
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw fieldError('invalid_request', 'backfillDays', 'invalid_type', 'backfillDays must be an integer');
  }
  if (value < 1 || value > MAX_BACKFILL_DAYS) {
    throw fieldError('invalid_request', 'backfillDays', 'out_of_range', `backfillDays must be 1 to ${MAX_BACKFILL_DAYS}`);
  }
  return value;
}

const TOKEN = { max: 2000, required: false } as const;

/** Checks a PUT body of `kind`; `previous` are the source's stored secrets (kept when left out). */
export function parseSource(
  kind: SpendSourceKind,
  body: Record<string, unknown>,
  previous: SourceSecrets | undefined,
): ParsedSource {
  const rules = KIND_RULES[kind];
  for (const key of Object.keys(body)) {
    if (!rules.fields.includes(key)) {
      throw fieldError(
        'invalid_request',
        key,
        'unknown_field',
        `Unknown field ${key}; the ${kind} spend source takes ${rules.fields.join(', ')}`,
      );
    }
  }
  const settings: SourceSettings = { accounts: accounts(body, rules) };
  const secrets: SourceSecrets = {};
  const days = backfillDays(body);
  if (kind === 'google_ads') {
    const login = text(body, 'loginCustomerId', {
      required: false,
      pattern: /^\d{10}$/,
      hint: '10 digits, without dashes (the manager account)',
    });
    if (login) settings.loginCustomerId = login;
    const developerToken = text(body, 'developerToken', { ...TOKEN, previous: previous?.developerToken });
    if (developerToken) secrets.developerToken = developerToken;
    const oauth = object(body, 'oauth', false);
    if (oauth) {
      onlyFields(oauth, ['clientId', 'clientSecret', 'refreshToken'], 'oauth');
      settings.oauthClientId = text(oauth, 'clientId', { required: true, path: 'oauth.clientId' }) as string;
      secrets.clientSecret = text(oauth, 'clientSecret', {
        ...TOKEN,
        required: true,
        path: 'oauth.clientSecret',
        previous: previous?.clientSecret,
      }) as string;
      secrets.refreshToken = text(oauth, 'refreshToken', {
        ...TOKEN,
        required: true,
        path: 'oauth.refreshToken',
        previous: previous?.refreshToken,
      }) as string;
    }
  } else {
    const accessToken = text(body, 'accessToken', { ...TOKEN, previous: previous?.accessToken });
    if (accessToken) secrets.accessToken = accessToken;
  }
  return { settings, secrets, backfillDays: days };
}

/** The source's settings as the API shows them: never a secret, each own secret as `…Configured: true`. */
export function presentSettings(kind: SpendSourceKind, settings: SourceSettings, secrets: SourceSecrets, days: number) {
  const rules = KIND_RULES[kind];
  const shown: Record<string, unknown> = { [rules.accountsField]: settings.accounts, backfillDays: days };
  if (kind === 'google_ads') {
    shown.loginCustomerId = settings.loginCustomerId ?? null;
    shown.developerTokenConfigured = secrets.developerToken !== undefined;
    shown.oauth = settings.oauthClientId
      ? { clientId: settings.oauthClientId, clientSecretConfigured: true, refreshTokenConfigured: true }
      : null;
  } else {
    shown.accessTokenConfigured = secrets.accessToken !== undefined;
  }
  return shown;
}
