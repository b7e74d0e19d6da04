import type { Database } from './database.js';
import { openPostgres } from './postgres/database.js';
import { openSqlite } from './sqlite/database.js';
import { withWriteHealth } from './write-health.js';

export interface DatabaseSettings {
  /** `postgres://…`: PostgreSQL; unset: the embedded database in `dataDir`. */
  databaseUrl?: string;
  dataDir: string;
  /** Background database work (log checkpoints, dropped idle connections) reports failures here. */
  onError?: (error: unknown) => void;
}

/** The engine the configuration names, behind the one `Database` port. */
export function openDatabase(settings: DatabaseSettings): Database {
  const database = settings.databaseUrl
    ? openPostgres(settings.databaseUrl, { onError: settings.onError })
    : openSqlite(settings.dataDir, { onError: settings.onError });
  return withWriteHealth(database);
}
