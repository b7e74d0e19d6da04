// The customers table (part of `DB`, db/schema.ts).

/** Migration 0033: a customer's first conversion per (store, mode, customer key) (api.md §11 "Customers"). */
export interface CustomersTable {
  store_id: string;
  livemode: number;
  customer_key: string;
  account_id: string;
  first_conversion_id: string;
  first_event_time: number;
  /** The channel the first conversion is credited to (click-channel.ts), `unattributed` when none. */
  channel: string;
  /** The campaign_id of the click that first conversion is credited to; '' when none (migration 0037). */
  campaign_id: string;
}
