import type SqliteDriver from 'better-sqlite3';
import { Kysely, type SqliteDatabase, type SqliteStatement } from 'kysely';
import { testMaxPageCount } from '../../crash-point.js';
import type { DB } from '../schema.js';
import { SqliteEngineDialect } from './engine.js';

const STATEMENT_CACHE_SIZE = 2000;

/**
 * better-sqlite3 compiles a statement per `prepare`; keep the compiled ones. The SQL texts are
 * few (a few hundred, counting the literal LIMITs of row-limit.ts), so the least recently used
 * one is dropped only when an unusual mix of queries exceeds the bound.
 */
function withStatementCache(raw: SqliteDriver.Database): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => raw.close(),
    prepare(sql: string) {
      let stmt = cache.get(sql);
      if (stmt) {
        cache.delete(sql); // Map order is insertion order: re-inserting marks it most recently used
      } else {
        stmt = raw.prepare(sql) as unknown as SqliteStatement;
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
      }
      cache.set(sql, stmt);
      return stmt;
    },
  };
}

/**
 * Settings every connection to the file shares. COMMIT writes the log; the log keeper fsyncs it
 * off the event loop before any write is acknowledged, and checkpoints in a worker thread
 * (wal.ts): acknowledged means durable.
 */
export function configure(raw: SqliteDriver.Database): void {
  raw.pragma('synchronous = NORMAL');
  raw.pragma('wal_autocheckpoint = 0');
  raw.pragma('foreign_keys = ON');
  raw.pragma('busy_timeout = 5000');
  const maxPages = testMaxPageCount(); // test hook (crash-point.ts): a full disk without one
  if (maxPages !== undefined) raw.pragma(`max_page_count = ${maxPages}`);
}

export function sqliteKysely(raw: SqliteDriver.Database): Kysely<DB> {
  configure(raw);
  return new Kysely<DB>({ dialect: new SqliteEngineDialect({ database: withStatementCache(raw) }) });
}
