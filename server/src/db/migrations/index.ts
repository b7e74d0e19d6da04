import { type Kysely, type Migration, type MigrationProvider, Migrator } from 'kysely';
import * as initial from './0001_initial.js';
import * as forwarding from './0002_forwarding.js';
import * as attributionSignals from './0003_attribution_signals.js';
import * as analyticsRollups from './0004_analytics_rollups.js';

/**
 * Migrations in code (nothing to find on disk at run time), applied in name order. They use
 * portable column types: `bigint` for times and money (INTEGER affinity on SQLite), `integer`
 * 0/1 for flags. Add one module per migration; never edit one that has shipped.
 */
const migrations: Record<string, Migration> = {
  '0001_initial': initial,
  '0002_forwarding': forwarding,
  '0003_attribution_signals': attributionSignals,
  '0004_analytics_rollups': analyticsRollups,
};

class CodeMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return migrations;
  }
}

/** Applies every pending migration; returns the names applied. */
export async function migrateToLatest(db: Kysely<unknown>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: new CodeMigrationProvider() });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
