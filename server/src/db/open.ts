import path from 'node:path';
import type { BackgroundErrorHandler, Database } from './database.js';
import { openPostgres } from './postgres/database.js';
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

/** The engine the configuration names, behind the one `Database` port. */
export function openDatabase(settings: DatabaseSettings): Database {
  const database = settings.databaseUrl
    ? openPostgres(settings.databaseUrl, { onError: settings.onError, preparedStatements: settings.preparedStatements })
    : openSqlite(settings.dataDir, { onError: settings.onError });
  // Where a full disk is: the database file, or the PostgreSQL server (never its credentials).
  const location = settings.databaseUrl
    ? `PostgreSQL ${postgresLocation(settings.databaseUrl)}`
    : path.join(settings.dataDir, 'waytrack.db');
  return withWriteHealth(database, { location });
}

/** `host:port/database` of a PostgreSQL URL. */
function postgresLocation(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    return `${url.host || 'localhost'}${url.pathname || '/'}`;
  } catch {
    return 'server';
  }
}
