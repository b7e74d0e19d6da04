// The analytics rollups' tables (part of `DB`, db/schema.ts).

/** Analytics rollups (migrations 0004, 0005): see analytics/rollups.ts. */
export interface RollupQueueTable {
  id: string; // a click's, a conversion's or a refund's (refunds.id) id
  store_id: string;
  kind: 'click' | 'conversion' | 'refund';
  version: number; // moves when the queued event's state changes before it is folded
}

export interface RollupStoresTable {
  store_id: string;
  timezone: string;
  tzdata: string; // the platform's time zone data version (process.versions.tz)
}

export interface RollupHoursTable {
  store_id: string;
  livemode: number;
  local_date: string;
  hour_start: number;
  currency: string; // '' on the row that carries the clicks
  clicks: number;
  conversions: number;
  attributed: number;
  purchases: number;
  revenue_minor: number;
  attributed_revenue_minor: number;
  /** Migration 0014: refunds of Purchase conversions (of attributed ones) by refund time. */
  refunds_minor: number;
  attributed_refunds_minor: number;
}

export type RollupDaysTable = Omit<RollupHoursTable, 'hour_start'>;

export interface RollupDimensionClicksTable {
  store_id: string;
  livemode: number;
  dimension: string;
  local_date: string;
  value: string; // '' when the click has no value
  clicks: number;
}

export interface RollupDimensionCreditsTable {
  store_id: string;
  livemode: number;
  dimension: string;
  model: string;
  local_date: string;
  value: string;
  currency: string;
  units: number; // 1,000,000 per conversion
  revenue_minor: number;
  refund_minor: number; // migration 0014: credited refunds, on the refund's local day
}

/** Migration 0039: the dimension rollups per local month (`YYYY-MM`), for long ranges. */
export type RollupMonthClicksTable = Omit<RollupDimensionClicksTable, 'local_date'> & { local_month: string };
export type RollupMonthCreditsTable = Omit<RollupDimensionCreditsTable, 'local_date'> & { local_month: string };

/** Migration 0035: counts of the reconciliation report and the match-quality summary (analytics/report-fold.ts). */
export interface RollupReportsTable {
  store_id: string;
  livemode: number;
  report: string; // 'reconciliation' | 'match_quality'
  local_date: string;
  destination: string; // '' for the reconciliation's received / attributed / refunded
  item: string;
  count: number;
}

/** Migration 0045: the reconciliation's trace ids of a past day and destination, packed (analytics/trace-compaction.ts). */
export interface RollupReportTracesTable {
  store_id: string;
  livemode: number;
  local_date: string;
  destination: string;
  /** JSON `[ids, counts]`: the trace ids, sorted, and their counts (never 0). */
  traces: string;
}

/** Migration 0040: the cohort rollups (analytics/cohort-rollups.ts). */
export interface RollupCohortCustomersTable {
  store_id: string;
  livemode: number;
  customer_key: string;
  first_date: string; // local date of the first conversion
  channel: string;
  campaign_id: string; // of the first conversion's credited click ('' when none)
  cells: string; // JSON: [day_offset, currency, net_minor, net_fx_minor, customers][]
  version: number;
}

export interface RollupCohortQueueTable {
  store_id: string;
  livemode: number;
  customer_key: string;
  version: number; // moves when the customer is queued again before it is folded
}

export interface RollupCohortDaysTable {
  store_id: string;
  livemode: number;
  first_date: string;
  channel: string;
  day_offset: number;
  currency: string; // the conversion's (a refund's own) currency
  net_minor: number; // Purchase value less refunds, in `currency`
  net_fx_minor: number; // the same at the rates recorded with the conversions (store currency)
  customers: number; // customers whose first conversion is on this day and channel (day 0, currency '')
}

export type RollupCohortMonthsTable = Omit<RollupCohortDaysTable, 'first_date'> & { first_month: string };

/** New customers per local day of their first conversion, its channel and campaign (migration 0042). */
export interface RollupNewCustomerDaysTable {
  store_id: string;
  livemode: number;
  first_date: string;
  channel: string;
  campaign_id: string;
  customers: number;
}

export type RollupNewCustomerMonthsTable = Omit<RollupNewCustomerDaysTable, 'first_date'> & { first_month: string };

/** The rollup tables of the schema (`DB` in schema.ts extends this). */
export interface RollupTables {
  rollup_queue: RollupQueueTable;
  rollup_stores: RollupStoresTable;
  rollup_days: RollupDaysTable;
  rollup_hours: RollupHoursTable;
  rollup_dimension_clicks: RollupDimensionClicksTable;
  rollup_dimension_credits: RollupDimensionCreditsTable;
  rollup_month_clicks: RollupMonthClicksTable;
  rollup_month_credits: RollupMonthCreditsTable;
  rollup_reports: RollupReportsTable;
  rollup_report_traces: RollupReportTracesTable;
  rollup_cohort_customers: RollupCohortCustomersTable;
  rollup_cohort_queue: RollupCohortQueueTable;
  rollup_cohort_days: RollupCohortDaysTable;
  rollup_cohort_months: RollupCohortMonthsTable;
  rollup_new_customer_days: RollupNewCustomerDaysTable;
  rollup_new_customer_months: RollupNewCustomerMonthsTable;
}
