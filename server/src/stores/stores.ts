import { checkTimeZone } from '../calendar/time-zones.js';
import { type ConsentInput, consentColumn, resolveConsent, storeDefaultOf } from '../consent/consent.js';
import type { Database } from '../db/database.js';
import type { Page } from '../db/repositories/keyset.js';
import { insertStore, listStores as listStoreRows, updateStore as updateStoreRow } from '../db/repositories/stores.js';
import type { StoresTable } from '../db/schema.js';
import { fieldError, invalid } from '../http/errors.js';
import { newId } from '../ids.js';
import { normalizeCurrency } from '../money.js';
import type { SecretBox } from '../secrets.js';
import type { Tenant } from '../tenancy.js';
import { storeUpdatedEvent, webhookEvents } from '../webhooks/events.js';
import { forgetStore, requireStore } from './lookup.js';

export const PLATFORMS = ['shopify', 'woocommerce', 'bigcommerce', 'magento', 'wix', 'squarespace', 'custom'] as const;
export const DEFAULT_ATTRIBUTION_WINDOW_DAYS = 7;
export const DEFAULT_MIN_CONFIDENCE = 50;

export interface StoreInput {
  name: string;
  domain: string;
  platform: (typeof PLATFORMS)[number];
  pixelId?: string | null;
  capiAccessToken?: string | null;
  capiTestEventCode?: string | null;
  /** Shop webhook signing secrets (api.md §9): write-only, sealed at rest. */
  shopifyWebhookSecret?: string | null;
  woocommerceWebhookSecret?: string | null;
  /** The meta destination's opt-in refund event (set by PUT /destinations/meta only). */
  capiRefundEvent?: string | null;
  currency?: string;
  timezone?: string;
  attributionWindowDays?: number;
  minConfidence?: number;
  /** The consent of events that leave a field out (api.md §10); null on PATCH: all granted again. */
  defaultConsent?: ConsentInput | null;
}

export type StorePatch = Partial<StoreInput> & { status?: 'active' | 'inactive' };

const HOSTNAME = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

function checkDomain(domain: string): string {
  const host = domain.trim().toLowerCase().replace(/\.$/, '');
  if (!HOSTNAME.test(host)) {
    throw invalid('domain', 'invalid_format', 'domain must be a hostname like shop.example.com (no scheme or path)');
  }
  return host;
}

function checkCurrency(currency: string): string {
  const code = normalizeCurrency(currency);
  if (!code) throw fieldError('invalid_currency', 'currency', 'invalid_format', `"${currency}" is not an ISO 4217 currency code`);
  return code;
}

/**
 * A zone's own name is stored under IANA's current name; a legacy alias (US/Eastern, GB, EST) is
 * refused with the zone to use, so a store never silently lives in a zone its owner did not mean.
 */
function checkStoreTimeZone(timezone: string): string {
  const checked = checkTimeZone(timezone);
  if (checked.kind === 'zone') return checked.zone;
  if (checked.kind === 'legacy_alias') {
    throw fieldError('invalid_request', 'timezone', 'legacy_alias', checked.message, { suggestion: checked.suggestion });
  }
  throw invalid('timezone', 'unknown_value', `"${timezone}" is not an IANA time zone like America/New_York`);
}

/** Stored as the resolved default (null: all granted): a field left out of the body is granted. */
function defaultConsentColumn(value: ConsentInput | null): string | null {
  return value === null ? null : consentColumn(resolveConsent(value, undefined));
}

/** Store fields from a create or update body; only the fields present are returned. */
function columnsOf(input: StorePatch): Partial<StoresTable> {
  const columns: Partial<StoresTable> = {};
  if (input.name !== undefined) columns.name = input.name;
  if (input.domain !== undefined) columns.domain = checkDomain(input.domain);
  if (input.platform !== undefined) columns.platform = input.platform;
  if (input.pixelId !== undefined) columns.pixel_id = input.pixelId;
  if (input.capiAccessToken !== undefined) columns.capi_access_token = input.capiAccessToken;
  if (input.capiTestEventCode !== undefined) columns.capi_test_event_code = input.capiTestEventCode;
  if (input.shopifyWebhookSecret !== undefined) columns.shopify_webhook_secret = input.shopifyWebhookSecret;
  if (input.woocommerceWebhookSecret !== undefined) columns.woocommerce_webhook_secret = input.woocommerceWebhookSecret;
  if (input.capiRefundEvent !== undefined) columns.capi_refund_event = input.capiRefundEvent;
  if (input.currency !== undefined) columns.currency = checkCurrency(input.currency);
  if (input.timezone !== undefined) columns.timezone = checkStoreTimeZone(input.timezone);
  if (input.attributionWindowDays !== undefined) columns.attribution_window_days = input.attributionWindowDays;
  if (input.minConfidence !== undefined) columns.min_confidence = input.minConfidence;
  if (input.status !== undefined) columns.status = input.status;
  if (input.defaultConsent !== undefined) columns.default_consent = defaultConsentColumn(input.defaultConsent);
  return columns;
}

/** The sealing context of a shop webhook secret: bound to the store and to the field, so neither can be swapped. */
export const webhookSecretContext = (storeId: string, platform: 'shopify' | 'woocommerce') => `${storeId}/${platform}-webhook`;

/**
 * The access token is stored sealed (AES-256-GCM, bound to the store id); it is opened only to
 * send to Meta. The shop webhook secrets likewise, opened only to check a webhook's signature.
 */
function sealToken(columns: Partial<StoresTable>, secrets: SecretBox, storeId: string): Partial<StoresTable> {
  const sealed = { ...columns };
  if (columns.capi_access_token) sealed.capi_access_token = secrets.seal(columns.capi_access_token, storeId);
  if (columns.shopify_webhook_secret) {
    sealed.shopify_webhook_secret = secrets.seal(columns.shopify_webhook_secret, webhookSecretContext(storeId, 'shopify'));
  }
  if (columns.woocommerce_webhook_secret) {
    sealed.woocommerce_webhook_secret = secrets.seal(
      columns.woocommerce_webhook_secret,
      webhookSecretContext(storeId, 'woocommerce'),
    );
  }
  return sealed;
}

export async function createStore(database: Database, tenant: Tenant, input: StoreInput, secrets: SecretBox, now = Date.now()) {
  const id = newId('store', now);
  const columns = sealToken(columnsOf(input), secrets, id);
  const row: StoresTable = {
    id,
    account_id: tenant.accountId,
    name: input.name,
    domain: columns.domain as string,
    platform: input.platform,
    pixel_id: columns.pixel_id ?? null,
    capi_access_token: columns.capi_access_token ?? null,
    capi_test_event_code: columns.capi_test_event_code ?? null,
    shopify_webhook_secret: columns.shopify_webhook_secret ?? null,
    woocommerce_webhook_secret: columns.woocommerce_webhook_secret ?? null,
    capi_refund_event: null,
    status: 'active',
    currency: columns.currency ?? 'USD',
    timezone: columns.timezone ?? 'UTC',
    attribution_window_days: columns.attribution_window_days ?? DEFAULT_ATTRIBUTION_WINDOW_DAYS,
    min_confidence: columns.min_confidence ?? DEFAULT_MIN_CONFIDENCE,
    default_consent: columns.default_consent ?? null,
    created_at: now,
    updated_at: now,
  };
  await database.write((trx) => insertStore(trx, row));
  return presentStore(row);
}

export async function updateStore(
  database: Database,
  tenant: Tenant,
  storeId: string,
  patch: StorePatch,
  secrets: SecretBox,
  now = Date.now(),
  /** What the store.updated event names as changed (default: the fields of the patch). */
  changes?: string[],
) {
  const columns = sealToken(columnsOf(patch), secrets, storeId);
  const updated = await database.write(async (trx) => {
    await requireStore(trx, tenant, storeId);
    const row = await updateStoreRow(trx, tenant.accountId, storeId, { ...columns, updated_at: now });
    // store.updated (api.md §9), in the transaction of the change.
    if (row)
      await webhookEvents.emit(trx, storeUpdatedEvent(tenant.accountId, presentStore(row), changes ?? Object.keys(patch), now));
    return row;
  });
  forgetStore(database.read, tenant.accountId, storeId);
  return presentStore(updated as StoresTable);
}

export async function getStore(database: Database, tenant: Tenant, storeId: string) {
  return presentStore(await requireStore(database.read, tenant, storeId));
}

export async function listStores(
  database: Database,
  tenant: Tenant,
  filter: { status?: 'active' | 'inactive' },
  page: Page,
): Promise<StoresTable[]> {
  return listStoreRows(database.read, tenant.accountId, filter, page);
}

/** The API view of a store. The access token is write-only: only whether forwarding is configured shows. */
export function presentStore(row: StoresTable) {
  return {
    id: row.id,
    name: row.name,
    domain: row.domain,
    platform: row.platform,
    pixelId: row.pixel_id,
    status: row.status,
    currency: row.currency,
    timezone: row.timezone,
    attributionWindowDays: row.attribution_window_days,
    minConfidence: row.min_confidence,
    capiConfigured: Boolean(row.pixel_id && row.capi_access_token),
    ...(row.capi_test_event_code !== null && { capiTestEventCode: row.capi_test_event_code }),
    shopifyWebhookConfigured: Boolean(row.shopify_webhook_secret),
    woocommerceWebhookConfigured: Boolean(row.woocommerce_webhook_secret),
    defaultConsent: resolveConsent(undefined, storeDefaultOf(row.default_consent)),
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}
