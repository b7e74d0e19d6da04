import { type Kysely, type Migration, type MigrationProvider, Migrator } from 'kysely';
import { engineOf } from '../engine.js';
import * as initial from './0001_initial.js';
import * as forwarding from './0002_forwarding.js';
import * as attributionSignals from './0003_attribution_signals.js';
import * as analyticsRollups from './0004_analytics_rollups.js';
import * as rollupQueue from './0005_rollup_queue.js';
import * as retentionIndexes from './0006_retention_indexes.js';
import * as partitionEvents from './0007_partition_events.js';
import * as publishableKeys from './0008_publishable_keys.js';
import * as dashboard from './0009_dashboard.js';
import * as destinations from './0010_destinations.js';
import * as refunds from './0011_refunds.js';
import * as shopWebhooks from './0012_shop_webhooks.js';
import * as webhooks from './0013_webhooks.js';
import * as refundRollups from './0014_refund_rollups.js';
import * as fxMatchQuality from './0015_fx_match_quality.js';
import * as consent from './0016_consent.js';
import * as refundForwarding from './0019_refund_forwarding.js';
import * as oneOutbox from './0020_one_outbox.js';
import * as evidenceFunction from './0021_evidence_function.js';
import * as shopOrders from './0022_shop_orders.js';
import * as webhookFairness from './0023_webhook_fairness.js';
import * as attributionProbability from './0024_attribution_probability.js';
import * as idempotencySecrets from './0025_idempotency_secrets.js';
import * as identityLinks from './0026_identity_links.js';
import * as conversionSource from './0027_conversion_source.js';
import * as destinationHealth from './0028_destination_health.js';
import * as attributedClickIds from './0029_attributed_click_ids.js';
import * as moreClickIds from './0030_more_click_ids.js';
import * as spendSources from './0031_spend_sources.js';
import * as customers from './0033_customers.js';
import * as channelRollups from './0034_channel_rollups.js';
import * as reportRollups from './0035_report_rollups.js';
import * as pendingJobIndexes from './0036_pending_job_indexes.js';
import * as customerCampaigns from './0037_customer_campaigns.js';
import * as reportIndexes from './0038_report_indexes.js';
import * as monthRollups from './0039_month_rollups.js';
import * as cohortRollups from './0040_cohort_rollups.js';
import * as spendMonths from './0041_spend_months.js';
import * as newCustomerRollups from './0042_new_customer_rollups.js';
import * as conversionCurrencies from './0043_conversion_currencies.js';
import * as evidenceBranches from './0044_evidence_branches.js';
import * as reportTraces from './0045_report_traces.js';

/**
 * Migrations in code (nothing to find on disk at run time), applied in name order. They use
 * portable column types: `bigint` for times and money (INTEGER affinity on SQLite), `integer`
 * 0/1 for flags; where the engines differ, a migration calls its engine's part
 * (`engineOf(db).migrations`: db/sqlite/migrations.ts, db/postgres/migrations.ts). Add one module
 * per migration; never change what one that has shipped does.
 */
const migrations: Record<string, Migration> = {
  '0001_initial': initial,
  '0002_forwarding': forwarding,
  '0003_attribution_signals': attributionSignals,
  '0004_analytics_rollups': analyticsRollups,
  '0005_rollup_queue': rollupQueue,
  '0006_retention_indexes': retentionIndexes,
  '0007_partition_events': partitionEvents,
  '0008_publishable_keys': publishableKeys,
  '0009_dashboard': dashboard,
  '0010_destinations': destinations,
  '0011_refunds': refunds,
  '0012_shop_webhooks': shopWebhooks,
  '0013_webhooks': webhooks,
  '0014_refund_rollups': refundRollups,
  '0015_fx_match_quality': fxMatchQuality,
  '0016_consent': consent,
  '0019_refund_forwarding': refundForwarding,
  '0020_one_outbox': oneOutbox,
  '0021_evidence_function': evidenceFunction,
  '0022_shop_orders': shopOrders,
  '0023_webhook_fairness': webhookFairness,
  '0024_attribution_probability': attributionProbability,
  '0025_idempotency_secrets': idempotencySecrets,
  '0026_identity_links': identityLinks,
  '0027_conversion_source': conversionSource,
  '0028_destination_health': destinationHealth,
  '0029_attributed_click_ids': attributedClickIds,
  '0030_more_click_ids': moreClickIds,
  '0031_spend_sources': spendSources,
  '0033_customers': customers,
  '0034_channel_rollups': channelRollups,
  '0035_report_rollups': reportRollups,
  '0036_pending_job_indexes': pendingJobIndexes,
  '0037_customer_campaigns': customerCampaigns,
  '0038_report_indexes': reportIndexes,
  '0039_month_rollups': monthRollups,
  '0040_cohort_rollups': cohortRollups,
  '0041_spend_months': spendMonths,
  '0042_new_customer_rollups': newCustomerRollups,
  '0043_conversion_currencies': conversionCurrencies,
  '0044_evidence_branches': evidenceBranches,
  '0045_report_traces': reportTraces,
};

class CodeMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return migrations;
  }
}

/** The database was migrated by newer code: this code must not serve or migrate it. */
export class SchemaError extends Error {}

/**
 * The migrator, with its bookkeeping table in the schema the connection works in (on
 * PostgreSQL, several schemas of one database may each hold a Waytrack).
 */
async function migratorFor(db: Kysely<unknown>): Promise<{ migrator: Migrator; schema: string | undefined }> {
  const schema = await engineOf(db).migrations.migrationTableSchema(db);
  return { migrator: new Migrator({ db, provider: new CodeMigrationProvider(), migrationTableSchema: schema }), schema };
}

/** Refuses a database holding migrations this code does not know (it was migrated by newer code). */
export async function checkSchema(db: Kysely<unknown>): Promise<void> {
  const { schema } = await migratorFor(db);
  let applied: string[];
  try {
    const table = schema ? db.withSchema(schema) : db;
    const rows = await (table as Kysely<{ kysely_migration: { name: string } }>)
      .selectFrom('kysely_migration')
      .select('name')
      .execute();
    applied = rows.map((r) => r.name);
  } catch {
    return; // never migrated
  }
  const unknown = applied.filter((name) => !(name in migrations));
  if (unknown.length > 0) {
    throw new SchemaError(
      `the database schema is newer than this version of Waytrack (it has migration ${unknown.join(', ')}); run the newer version or restore a matching backup`,
    );
  }
}

/** Applies every pending migration; returns the names applied. Refuses a newer schema (SchemaError). */
export async function migrateToLatest(db: Kysely<unknown>): Promise<string[]> {
  await checkSchema(db);
  const { migrator } = await migratorFor(db);
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
