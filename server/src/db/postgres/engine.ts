import { PostgresAdapter, PostgresDialect, type RawBuilder, type SelectQueryBuilder, sql } from 'kysely';
import type { Writer } from '../database.js';
import type { Engine, EngineAdapter, JsonStatements, Locks } from '../engine.js';
import { PostgresClicks } from './clicks.js';
import { PostgresConversions } from './conversions.js';
import { PostgresEvidence } from './evidence.js';
import { lockKey } from './key-lock.js';
import { PostgresMigrations } from './migrations.js';
import { PostgresRetention } from './retention.js';

// biome-ignore lint/suspicious/noExplicitAny: a select of any table and columns
type Select = SelectQueryBuilder<any, any, any>;

class PostgresLocks implements Locks {
  forUpdate = <Q extends Select>(query: Q): Q => query.forUpdate() as Q;
  /** Several instances claim at once: each takes rows no other claim holds, and never waits. */
  claim = <Q extends Select>(query: Q): Q => query.forUpdate().skipLocked() as Q;
  lockRows = async <Q extends Select>(query: Q): Promise<void> => {
    await query.forUpdate().execute();
  };

  async allowLongStatements(trx: Writer, minutes: number): Promise<void> {
    // The pool (database.ts) reads this exact text to lift its client-side bound too.
    await sql`set local statement_timeout = ${sql.raw(`'${Math.trunc(minutes)}min'`)}`.execute(trx);
  }

  async serialize(trx: Writer, key: string): Promise<void> {
    await lockKey(trx, key);
  }
}

class PostgresJson implements JsonStatements {
  field(json: RawBuilder<unknown>, key: string, field: string): RawBuilder<string | null> {
    return sql<string | null>`(${json}::jsonb -> ${sql.lit(key)} ->> ${sql.lit(field)})`;
  }

  set(json: RawBuilder<unknown>, key: string, entry: string): RawBuilder<string> {
    return sql<string>`(jsonb_set(coalesce(${json}, '{}')::jsonb, array[${key}]::text[], ${entry}::jsonb))::text`;
  }

  objectOf(key: RawBuilder<unknown>, value: RawBuilder<unknown>, where: RawBuilder<unknown>): RawBuilder<string | null> {
    return sql<string | null>`(json_object_agg(${key}, ${value}) filter (where ${where}))::text`;
  }

  arrayOf(value: RawBuilder<unknown>, where: RawBuilder<unknown>): RawBuilder<string | null> {
    return sql<string | null>`(json_agg(${value}) filter (where ${where}))::text`;
  }
}

/**
 * PostgreSQL's statements (db/engine.ts): row locks, dedup through the key tables of the
 * partitioned event tables, one-statement writes and reads, partition-aware retention.
 */
export const postgresEngine: Engine = {
  locks: new PostgresLocks(),
  clicks: new PostgresClicks(),
  conversions: new PostgresConversions(),
  evidence: new PostgresEvidence(),
  json: new PostgresJson(),
  retention: new PostgresRetention(),
  migrations: new PostgresMigrations(),
};

export class PostgresEngineAdapter extends PostgresAdapter implements EngineAdapter {
  readonly engine = postgresEngine;
}

/** Kysely's PostgreSQL dialect whose adapter carries `postgresEngine` into every transaction. */
export class PostgresEngineDialect extends PostgresDialect {
  override createAdapter(): PostgresEngineAdapter {
    return new PostgresEngineAdapter();
  }
}
