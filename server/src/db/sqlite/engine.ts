import { type RawBuilder, SqliteAdapter, SqliteDialect, sql } from 'kysely';
import type { DroppedMonth, Engine, EngineAdapter, JsonStatements, Locks, RetentionStatements } from '../engine.js';
import { SqliteClicks } from './clicks.js';
import { SqliteConversions } from './conversions.js';
import { SqliteEvidence } from './evidence.js';
import { SqliteMigrations } from './migrations.js';

/** No row locks: SQLite's writes are serialized (one writer, group commit). Nothing bounds a statement. */
class SqliteLocks implements Locks {
  forUpdate = <Q>(query: Q): Q => query;
  claim = <Q>(query: Q): Q => query;
  async lockRows(): Promise<void> {}
  async allowLongStatements(): Promise<void> {}
  async serialize(): Promise<void> {}
}

class SqliteJson implements JsonStatements {
  field(json: RawBuilder<unknown>, key: string, field: string): RawBuilder<string | null> {
    return sql<string | null>`json_extract(${json}, ${sql.lit(`$.${key}.${field}`)})`;
  }

  set(json: RawBuilder<unknown>, key: string, entry: string): RawBuilder<string> {
    return sql<string>`json_set(coalesce(${json}, '{}'), ${`$.${key}`}, json(${entry}))`;
  }

  objectOf(key: RawBuilder<unknown>, value: RawBuilder<unknown>, where: RawBuilder<unknown>): RawBuilder<string | null> {
    return sql<string | null>`json_group_object(${key}, ${value}) filter (where ${where})`;
  }

  arrayOf(value: RawBuilder<unknown>, where: RawBuilder<unknown>): RawBuilder<string | null> {
    return sql<string | null>`json_group_array(${value}) filter (where ${where})`;
  }
}

/** The tables are not partitioned: retention deletes row by row, in batches short enough for requests' writes to slip between. */
class SqliteRetention implements RetentionStatements {
  readonly batchBudgetMs = 10;

  async dropExpiredMonth(): Promise<DroppedMonth | undefined> {
    return undefined;
  }
}

/** SQLite's statements (db/engine.ts). */
export const sqliteEngine: Engine = {
  locks: new SqliteLocks(),
  clicks: new SqliteClicks(),
  conversions: new SqliteConversions(),
  evidence: new SqliteEvidence(),
  json: new SqliteJson(),
  retention: new SqliteRetention(),
  migrations: new SqliteMigrations(),
};

export class SqliteEngineAdapter extends SqliteAdapter implements EngineAdapter {
  readonly engine = sqliteEngine;
}

/** Kysely's SQLite dialect whose adapter carries `sqliteEngine` into every transaction. */
export class SqliteEngineDialect extends SqliteDialect {
  override createAdapter(): SqliteEngineAdapter {
    return new SqliteEngineAdapter();
  }
}
