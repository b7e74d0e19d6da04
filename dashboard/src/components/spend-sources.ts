// Spend sources (api.md §11): what GET /v1/stores/:id/spend-sources lists, and the form's fields
// per platform as the PUT body names them. The API checks every value and names a bad one in
// `details.field`; the form shows that message beside the field.
import { api } from '../api.js';

export type SpendKind = 'meta' | 'google_ads' | 'tiktok';
export const SPEND_KINDS: SpendKind[] = ['meta', 'google_ads', 'tiktok'];
export const SPEND_NAMES: Record<SpendKind, string> = { meta: 'Meta', google_ads: 'Google Ads', tiktok: 'TikTok' };

export interface SpendSource {
  kind: SpendKind;
  configured: boolean;
  accounts: string[];
  status: 'never' | 'ok' | 'failing';
  lastSyncedAt?: string | null;
  syncedThrough?: string | null;
  lastError?: string | null;
  /** The non-secret settings (`backfillDays`, the accounts' field, `loginCustomerId`, `oauth.clientId`); null when not configured. */
  settings?: Record<string, unknown> | null;
}

export interface SpendField {
  /** The PUT body's field (a dotted path for nested ones). */
  path: string;
  label: string;
  hint?: string;
  secret?: boolean;
  /** A list: one value per line or comma. */
  list?: boolean;
}

const REUSE = 'Optional: leave blank to use the store’s destination of this platform.';

export const SPEND_FIELDS: Record<SpendKind, SpendField[]> = {
  meta: [
    {
      path: 'adAccountIds',
      label: 'Ad account IDs',
      list: true,
      hint: 'act_ followed by digits, one per line (Business settings → Ad accounts).',
    },
    { path: 'accessToken', label: 'Access token', secret: true, hint: `${REUSE} Needs the ads_read permission.` },
  ],
  google_ads: [
    { path: 'customerIds', label: 'Customer IDs', list: true, hint: '10 digits without dashes, one per line.' },
    { path: 'loginCustomerId', label: 'Login customer ID', hint: 'Optional: the manager account, 10 digits.' },
    { path: 'developerToken', label: 'Developer token', secret: true, hint: REUSE },
    { path: 'oauth.clientId', label: 'OAuth client ID', hint: REUSE },
    { path: 'oauth.clientSecret', label: 'OAuth client secret', secret: true, hint: REUSE },
    { path: 'oauth.refreshToken', label: 'OAuth refresh token', secret: true, hint: REUSE },
  ],
  tiktok: [
    { path: 'advertiserIds', label: 'Advertiser IDs', list: true, hint: 'Digits, one per line (TikTok Ads Manager, top right).' },
    { path: 'accessToken', label: 'Access token', secret: true, hint: `${REUSE} Needs the Reporting scope.` },
  ],
};

/** The PUT body of a submitted form: lists split, blank fields (kept secrets) left out, nested paths nested. */
export function spendBodyOf(kind: SpendKind, form: FormData): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const field of SPEND_FIELDS[kind]) {
    const raw = String(form.get(field.path) ?? '').trim();
    if (raw === '') continue;
    const value = field.list
      ? raw
          .split(/[\s,]+/)
          .map((v) => v.trim())
          .filter(Boolean)
      : raw;
    const [head, tail] = field.path.split('.') as [string, string | undefined];
    if (tail) body[head] = { ...(body[head] as Record<string, unknown> | undefined), [tail]: value };
    else body[head] = value;
  }
  const days = String(form.get('backfillDays') ?? '').trim();
  if (days !== '') body.backfillDays = Number(days);
  return body;
}

/** How many days the first sync fetches (the API's default 30). */
export const backfillDaysOf = (source: SpendSource) => (source.settings?.backfillDays as number | undefined) ?? 30;

/** A stored (non-secret) setting as the form shows it. */
export function spendShown(source: SpendSource, field: SpendField): string {
  if (field.path === 'adAccountIds' || field.path === 'customerIds' || field.path === 'advertiserIds')
    return source.accounts.join('\n');
  const [head, tail] = field.path.split('.') as [string, string | undefined];
  const value = tail ? (source.settings?.[head] as Record<string, unknown> | undefined)?.[tail] : source.settings?.[head];
  return typeof value === 'string' ? value : '';
}

export const loadSpendSources = (storeId: string) =>
  api.get<{ spendSources: SpendSource[] }>(`/stores/${storeId}/spend-sources`).then((d) => d.spendSources);
