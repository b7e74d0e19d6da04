import { BackupError, type BackupResult, type RestoreResult } from './database.js';
import type { DatabaseSettings } from './open.js';
import { postgresBackupAdvice } from './postgres/backup.js';
import { backupSqlite, restoreSqlite } from './sqlite/backup.js';

/**
 * `waytrack backup FILE`, whichever engine the configuration names. The embedded database is
 * copied online (the server may keep running); PostgreSQL is backed up with its own tools, so
 * this throws a BackupError holding the `pg_dump` command to run instead.
 */
export async function backupDatabase(settings: DatabaseSettings, file: string): Promise<BackupResult> {
  if (settings.databaseUrl) throw new BackupError(postgresBackupAdvice('backup', settings.databaseUrl, file));
  return backupSqlite(settings.dataDir, file);
}

/** `waytrack restore FILE`: replaces the embedded database (servers stopped); on PostgreSQL, `pg_restore` advice. */
export async function restoreDatabase(settings: DatabaseSettings, file: string): Promise<RestoreResult> {
  if (settings.databaseUrl) throw new BackupError(postgresBackupAdvice('restore', settings.databaseUrl, file));
  return restoreSqlite(settings.dataDir, file);
}
