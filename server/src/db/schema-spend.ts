/** Ad spend: its entries (api.md §2) and the spend sources that sync them (api.md §11, migration 0031). */

export interface AdSpendTable {
  id: string;
  account_id: string;
  store_id: string;
  livemode: number;
  date: string; // YYYY-MM-DD
  platform: string;
  campaign_id: string; // '' when the entry is not per campaign
  campaign_name: string | null;
  amount_minor: number;
  currency: string;
  /** Who wrote it last (migration 0031): `api` (POST …/ad-spend) or `sync` (a spend source). */
  source: 'api' | 'sync';
  created_at: number;
  updated_at: number;
}

/**
 * Migration 0041: `ad_spend` summed per month (`YYYY-MM` of its dates), platform, campaign and
 * currency, recomputed from the entries by every spend write (repositories/spend.ts): a year's
 * spend of 200 campaigns reads ~2,400 rows here instead of 73,000 entries.
 */
export interface RollupSpendMonthsTable {
  store_id: string;
  livemode: number;
  month: string;
  platform: string;
  campaign_id: string;
  currency: string;
  amount_minor: number;
  entries: number;
  /** The greatest of the month's entries' names (SQL `max`), null when none has one. */
  campaign_name: string | null;
}

/** Migration 0028: a destination's health (api.md §12; destinations/health.ts). No row: never attempted. */
/** A store's spend source (api.md §11; migration 0031): its settings, state and lease. */
export interface SpendSourcesTable {
  store_id: string;
  kind: string;
  account_id: string;
  /** JSON of the non-secret settings. */
  settings: string;
  /** Sealed JSON of the source's own secrets (sealed with `store:spend:kind`); null when none. */
  secrets: string | null;
  backfill_days: number;
  status: 'never' | 'ok' | 'failing';
  last_synced_at: number | null;
  /** YYYY-MM-DD: the last day of the last successful sync; null until then (the next run backfills). */
  synced_through: string | null;
  last_error: string | null;
  consecutive_failures: number;
  next_sync_at: number;
  claimed_by: string | null;
  lease_until: number | null;
  created_at: number;
  updated_at: number;
}
