import path from 'node:path';
import { type BackgroundErrorHandler, BackupError, type BackupResult, type Database, type RestoreResult } from './database.js';
import { postgresBackupAdvice } from './postgres/backup.js';
import { openPostgres, postgresLocation } from './postgres/database.js';
import { backupSqlite, restoreSqlite } from './sqlite/backup.js';
import { openSqlite } from './sqlite/database.js';
import { withWriteHealth } from './write-health.js';

export interface DatabaseSettings {
  /** `postgres://…`: PostgreSQL; unset: the embedded database in `dataDir`. */
  databaseUrl?: string;
  /** PostgreSQL: frequent statements as named prepared statements (default true). */
  preparedStatements?: boolean;
  dataDir: string;
  /** Background database work reports failures here (see `BackgroundErrorHandler`). */
  onError?: BackgroundErrorHandler;
}

/** What the configured engine does: open the database, say where it is, back it up and restore it. */
interface ChosenEngine {
  open(): Database;
  /** Where a full disk is: the database file, or the PostgreSQL server (never its credentials). */
  location: string;
  backup(file: string): Promise<BackupResult>;
  restore(file: string): Promise<RestoreResult>;
}

/**
 * The engine the configuration names: the one place that asks. Everything else reaches the
 * engine through the `Database` it opened (and its statements through `engineOf`, db/engine.ts).
 */
function chosenEngine(settings: DatabaseSettings): ChosenEngine {
  const { databaseUrl: url, dataDir, onError } = settings;
  if (url) {
    return {
      open: () => openPostgres(url, { onError, preparedStatements: settings.preparedStatements }),
      location: `PostgreSQL ${postgresLocation(url)}`,
      // PostgreSQL is backed up with its own tools: the error holds the command to run instead.
      backup: async (file) => {
        throw new BackupError(postgresBackupAdvice('backup', url, file));
      },
      restore: async (file) => {
        throw new BackupError(postgresBackupAdvice('restore', url, file));
      },
    };
  }
  return {
    open: () => openSqlite(dataDir, { onError }),
    location: path.join(dataDir, 'waytrack.db'),
    backup: (file) => backupSqlite(dataDir, file),
    restore: (file) => restoreSqlite(dataDir, file),
  };
}

/** The engine the configuration names, behind the one `Database` port. */
export function openDatabase(settings: DatabaseSettings): Database {
  const engine = chosenEngine(settings);
  return withWriteHealth(engine.open(), { location: engine.location });
}

/**
 * `waytrack backup FILE`. The embedded database is copied online (the server may keep running);
 * PostgreSQL is backed up with its own tools, so this throws a BackupError holding the `pg_dump`
 * command to run instead.
 */
export function backupDatabase(settings: DatabaseSettings, file: string): Promise<BackupResult> {
  return chosenEngine(settings).backup(file);
}

/** `waytrack restore FILE`: replaces the embedded database (servers stopped); on PostgreSQL, `pg_restore` advice. */
export function restoreDatabase(settings: DatabaseSettings, file: string): Promise<RestoreResult> {
  return chosenEngine(settings).restore(file);
}
