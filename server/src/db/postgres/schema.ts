import type { Kysely } from 'kysely';
import type { Reader } from '../database.js';
import type { DB } from '../schema.js';

/**
 * PostgreSQL only (migration 0007): the dedup keys of the partitioned event tables, which cannot
 * hold them unique themselves. Each names its event and the event's time (its partition).
 */
export interface ClickKeysTable {
  store_id: string;
  livemode: number;
  fbclid: string;
  click_id: string;
  click_time: number;
}

export interface ConversionKeysTable {
  store_id: string;
  livemode: number;
  event_type: string;
  order_id: string;
  conversion_id: string;
  event_time: number;
}

/** PostgreSQL's tables: both engines' (`DB`) and its own. Only db/postgres names them. */
export interface PostgresDB extends DB {
  click_keys: ClickKeysTable;
  conversion_keys: ConversionKeysTable;
}

/**
 * The query builder a PostgreSQL statement was handed, with PostgreSQL's own tables: the engine's
 * statements are reached only through the builders this engine opened (db/engine.ts `engineOf`).
 */
export function postgresDb(db: Reader): Kysely<PostgresDB> {
  return db as unknown as Kysely<PostgresDB>;
}
