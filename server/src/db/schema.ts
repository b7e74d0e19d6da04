import type { CustomersTable } from './schema-customers.js';
import type { RollupTables } from './schema-rollups.js';
import type { ShopOrdersTable, ShopWebhookDeliveriesTable } from './schema-shops.js';
import type { AdSpendTable, RollupSpendMonthsTable, SpendSourcesTable } from './schema-spend.js';
import type { WebhookDeliveriesTable, WebhookMessagesTable, WebhooksTable, WebhookTimeoutsTable } from './schema-webhooks.js';

export type * from './schema-customers.js';
export type * from './schema-rollups.js';
export type * from './schema-shops.js';
export type * from './schema-spend.js';
export type * from './schema-webhooks.js';

/**
 * Row types of every table. Times are integer milliseconds since the epoch (UTC); money is
 * integer minor units; booleans are 0/1 so the same queries run on SQLite and PostgreSQL.
 */
export interface AccountsTable {
  id: string;
  email: string;
  password_hash: string | null;
  created_at: number;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  mode: 'live' | 'test';
  name: string;
  key_hash: string;
  hint: string;
  scopes: string; // JSON array
  rate_limit_rps: number | null;
  rate_limit_burst: number | null;
  created_at: number;
  revoked_at: number | null;
  /** Migration 0009: when the key last authenticated a request (to the minute); null if never. */
  last_used_at?: number | null;
  /** Migration 0008: `secret` (the default) or `publishable` (a browser tag's key). */
  kind?: 'secret' | 'publishable';
  /** Migration 0008: the one store a publishable key records clicks for; null for secret keys. */
  store_id?: string | null;
  /** Migration 0008: JSON array of a publishable key's extra allowed origins; null for secret keys. */
  origins?: string | null;
}

export interface StoresTable {
  id: string;
  account_id: string;
  name: string;
  domain: string;
  platform: string;
  pixel_id: string | null;
  capi_access_token: string | null;
  capi_test_event_code: string | null;
  /** Shop webhook secrets (migration 0012), sealed (secrets.ts). */
  shopify_webhook_secret: string | null;
  woocommerce_webhook_secret: string | null;
  /** Meta's opt-in refund event name (`refundEvent`, api.md §9); null: refunds are not sent to Meta. */
  capi_refund_event: string | null;
  status: 'active' | 'inactive';
  currency: string;
  timezone: string;
  attribution_window_days: number;
  min_confidence: number;
  created_at: number;
  updated_at: number;
  /** Migration 0016: JSON of the consent fields the store sets for events that leave them out; null = all granted. */
  default_consent?: string | null;
}

export interface ClicksTable {
  id: string;
  account_id: string;
  store_id: string;
  livemode: number;
  fbclid: string;
  click_time: number;
  created_at: number;
  landing_page: string;
  referrer: string | null;
  ip_address: string | null;
  user_agent: string | null;
  fingerprint: string | null;
  derived_fingerprint: string | null;
  fbp: string | null;
  fbc: string;
  utm_source: string | null;
  utm_medium: string | null;
  utm_campaign: string | null;
  utm_content: string | null;
  utm_term: string | null;
  campaign_id: string | null;
  adset_id: string | null;
  ad_id: string | null;
  is_bot: number;
  /** Migration 0010: the other platforms' click ids and TikTok's browser id (absent on rows written without them). */
  gclid?: string | null;
  gbraid?: string | null;
  wbraid?: string | null;
  ttclid?: string | null;
  msclkid?: string | null;
  ttp?: string | null;
  /** Migration 0030: Pinterest's, Snapchat's, Reddit's and LinkedIn's click ids (api.md §12). */
  epik?: string | null;
  ScCid?: string | null;
  rdt_cid?: string | null;
  li_fat_id?: string | null;
  /** Migration 0016: the click's resolved consent as JSON (consent/consent.ts); null = all granted. */
  consent?: string | null;
  /** Migration 0016: limited data use asked for with the click: `true` or JSON `{country, state}`; null = not asked. */
  limited_data_use?: string | null;
  /** Migration 0024: the tag's first-party visitor id (`_wt_vid`): same-browser evidence (api.md §13). */
  visitor_id?: string | null;
  /** Migration 0024: an IPv6 click's /64 prefix (ambiguity-keys.ts `networkKey`), null for IPv4: IPv6 candidates are found by it. */
  ip_network?: string | null;
}

export interface ConversionsTable {
  id: string;
  account_id: string;
  store_id: string;
  livemode: number;
  event_type: string;
  order_id: string;
  event_id: string;
  event_time: number;
  created_at: number;
  value_minor: number;
  currency: string;
  products: string; // JSON array
  user_data: string; // JSON object of Meta-normalized SHA-256 hashes
  email_hash: string | null;
  phone_hash: string | null;
  ip_address: string | null;
  user_agent: string | null;
  fingerprint: string | null;
  ref_click_id: string | null;
  ref_fbclid: string | null;
  ref_fbc: string | null;
  fbp: string | null;
  event_source_url: string | null;
  attributed: number;
  attributed_click_id: string | null;
  attributed_fbclid: string | null;
  confidence: number | null;
  attribution_signal: string | null;
  capi_status: 'pending' | 'sent' | 'failed' | 'skipped';
  capi_attempts: number;
  /**
   * Despite its name, one of two things: for a `skipped` conversion its skip reason (a
   * `SkipReason`: destinations/meta/forwarding.ts `skippedColumns`), otherwise Meta's (or the network's) last
   * error while sending it, or null.
   */
  capi_last_error: string | null;
  capi_sent_at: number | null;
  /** Migration 0010: JSON of the explicit click ids named ({gclid?, gbraid?, …}); null when none. */
  ref_ids?: string | null;
  /** Migration 0010: TikTok's `_ttp` browser id, when sent. */
  ttp?: string | null;
  /** Migration 0030: Snapchat's `_scid` and Reddit's `_rdt_uuid` browser ids, when sent. */
  scid?: string | null;
  rdt_uuid?: string | null;
  /** Migration 0010: JSON of the state per destination other than Meta ({google_ads?, tiktok?}); null when none. */
  forwarding?: string | null;
  /** Sum of the conversion's refunds, in its minor units (migration 0011); left out on insert (default 0). */
  refunded_minor?: number;
  /** Migration 0016: the conversion's resolved consent as JSON (consent/consent.ts); null = all granted. */
  consent?: string | null;
  /** Migration 0016: limited data use asked for with the conversion; null = not asked. */
  limited_data_use?: string | null;
  /** Migration 0015: the store currency a foreign-currency conversion was converted to, the rate's date, the rate, the value. */
  fx_currency?: string | null;
  fx_rate_date?: string | null;
  fx_rate?: string | null;
  fx_value_minor?: number | null;
  /** Migration 0015: JSON of the match quality per destination (quality/match-quality.ts). */
  match_quality?: string | null;
  /** Migration 0024: the tag's first-party visitor id (`_wt_vid`) the conversion came with. */
  visitor_id?: string | null;
  /** Migration 0024: JSON of the attribution's candidates and their evidence as scored (tracking/attribution-explanation.ts). */
  attribution_evidence?: string | null;
  /** Migration 0027: `pixel` while its money is the Shopify checkout pixel's, `pixel_confirmed` once the order webhook's; null otherwise. */
  source?: 'pixel' | 'pixel_confirmed' | null;
  /** Migration 0029: JSON of the credited click's ids by kind ({fbclid?, gclid?, …}); null when not attributed or attributed before it. */
  attributed_click_ids?: string | null;
  /** Migration 0033: `em:<hashed email>`, else `ph:<hashed phone>`; absent when neither (customers/identity.ts). */
  customer_key?: string | null;
}

/** Migration 0026: a hashed email or phone linked to a browser by POST /v1/track/identify ('' for an absent id). */
export interface IdentityLinksTable {
  store_id: string;
  livemode: number;
  kind: 'email' | 'phone';
  hash: string;
  visitor_id: string;
  fbp: string;
  ttp: string;
  account_id: string;
  created_at: number;
  seen_at: number;
}

/**
 * Migration 0024: the ambiguity counts' rows (ambiguity-keys.ts): a browser (53-bit hash) seen
 * on a day with a key (53-bit hash of store, mode, kind and value). Keyed by day first, so
 * retention deletes whole days and a day's inserts stay together.
 */
export interface AttributionKeysTable {
  day: number;
  k: number;
  browser: number;
}

/** Migration 0015: a dated exchange rate, `rate` units of `currency` per one `base`. */
export interface FxRatesTable {
  currency: string;
  date: string;
  base: string;
  rate: string;
  loaded_at: number;
}

/** A refund of a conversion (api.md §9; migration 0011). */
export interface RefundsTable {
  /** Internal id (`rfd_…`, migration 0014): the refund's key in `rollup_queue`. */
  id: string;
  store_id: string;
  livemode: number;
  refund_id: string;
  account_id: string;
  conversion_id: string;
  conversion_time: number;
  order_id: string;
  amount_minor: number;
  currency: string;
  refunded_after_minor: number;
  refund_time: number;
  created_at: number;
  reason: string | null;
}

export interface TouchpointsTable {
  conversion_id: string;
  click_id: string;
  signal: string;
  score: number;
  click_time: number;
}

export interface IdempotencyKeysTable {
  account_id: string;
  livemode: number;
  key: string;
  request_hash: string;
  status_code: number | null; // null while the first request is in flight
  response: string | null;
  created_at: number;
}

/** Migration 0010: one row per click id other than fbclid (dedup and explicit references). */
export interface ClickIdsTable {
  store_id: string;
  livemode: number;
  kind: string;
  value: string;
  click_id: string;
  click_time: number;
}

/** Migration 0010: a store's destination other than Meta (whose settings stay in `stores`). */
export interface StoreDestinationsTable {
  store_id: string;
  kind: string;
  config: string; // JSON, no secrets
  secrets: string; // SecretBox-sealed JSON of the destination's secrets
  created_at: number;
  updated_at: number;
}

/**
 * Migration 0010: the outbox of every destination (Meta's too since 0020), one job per
 * (conversion, destination, job_key).
 */
export interface DestinationJobsTable {
  conversion_id: string;
  destination: string;
  /** '' for the conversion itself; a refund's job: the refund's row id (refunds.id). */
  job_key: string;
  /** What the job sends: the conversion, or a refund of it (an adjustment, a refund event). */
  kind: 'conversion' | 'refund';
  account_id: string;
  store_id: string;
  livemode: number;
  /** What one request's jobs share beyond the group (Meta: `<pixelId>:<testEventCode>`); '' for the others. */
  route: string;
  payload: string; // the adapter's event, JSON, built at enqueue time (never a secret)
  status: 'pending' | 'sent' | 'failed' | 'skipped';
  attempts: number;
  next_attempt_at: number; // also the lease expiry while a dispatcher holds the job
  expires_at: number;
  claimed_by: string | null;
  last_error: string | null;
  trace_id: string | null;
  created_at: number;
  updated_at: number;
  sent_at: number | null;
}

export interface DestinationHealthTable {
  store_id: string;
  kind: string;
  account_id: string;
  status: 'ok' | 'failing';
  consecutive_failures: number;
  last_success_at: number | null;
  last_failure_at: number | null;
  last_error: string | null;
  /** Why it is failing: 'failures' (attempts in a row) or 'stale' (a job pending too long); null while ok. */
  failing_reason: 'failures' | 'stale' | null;
  failing_since: number | null;
  updated_at: number;
}

export interface SettingsTable {
  name: string;
  value: string;
}

/** A signed-in dashboard owner (migration 0009); `id` is the SHA-256 of the cookie's token. */
export interface DashboardSessionsTable {
  id: string;
  account_id: string;
  csrf_token: string;
  created_at: number;
  last_seen_at: number;
}

/** The tables of both engines (PostgreSQL has more: db/postgres/schema.ts). */
/** Every table: the rollups' (schema-rollups.ts) and these. */
export interface DB extends RollupTables {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  stores: StoresTable;
  clicks: ClicksTable;
  conversions: ConversionsTable;
  touchpoints: TouchpointsTable;
  ad_spend: AdSpendTable;
  rollup_spend_months: RollupSpendMonthsTable;
  idempotency_keys: IdempotencyKeysTable;
  settings: SettingsTable;
  refunds: RefundsTable;
  fx_rates: FxRatesTable;
  shop_webhook_deliveries: ShopWebhookDeliveriesTable;
  shop_orders: ShopOrdersTable;
  dashboard_sessions: DashboardSessionsTable;
  click_ids: ClickIdsTable;
  store_destinations: StoreDestinationsTable;
  destination_jobs: DestinationJobsTable;
  destination_health: DestinationHealthTable;
  spend_sources: SpendSourcesTable;
  webhooks: WebhooksTable;
  webhook_messages: WebhookMessagesTable;
  webhook_deliveries: WebhookDeliveriesTable;
  attribution_keys: AttributionKeysTable;
  identity_links: IdentityLinksTable;
  webhook_timeouts: WebhookTimeoutsTable;
  customers: CustomersTable;
}
