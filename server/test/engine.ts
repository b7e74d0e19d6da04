import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Database } from '../src/db/database.js';
import { openPostgres } from '../src/db/postgres/database.js';
import { openSqlite } from '../src/db/sqlite/database.js';

/**
 * The engine this test run uses: the suite runs once per engine (vitest.config.ts projects),
 * SQLite always, PostgreSQL when DATABASE_URL is set. Each test database is its own: a data
 * directory on SQLite, a schema of its own (dropped afterwards) on PostgreSQL.
 */
export const ENGINE: 'sqlite' | 'postgres' = process.env.WAYTRACK_TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite';

export interface TestDatabase {
  database: Database;
  /** Environment for a server process on the same database (DATA_DIR and, on PostgreSQL, DATABASE_URL). */
  env: Record<string, string>;
  /** Another connection (pool) to the same database: a second instance. */
  openAnother(): Database;
  /** Closes the database (if still open) and drops what it created. */
  drop(): Promise<void>;
}

function baseUrl(): string {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('the postgres test engine needs DATABASE_URL');
  return url;
}

/** A URL for `schema` of the test server: every connection made with it works in that schema. */
export function schemaUrl(schema: string): string {
  const url = new URL(baseUrl());
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: baseUrl() });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export interface TestDatabaseOptions {
  /**
   * SQLite: the worker threads load the TypeScript sources (through tsx, ~1 s of CPU each)
   * instead of server/dist, which the global setup built from them: for a test whose write jobs
   * live in a test module (the built code has only the service's own).
   */
  sourceThreads?: boolean;
}

/** A fresh, empty database for one test (not migrated). */
export async function openTestDatabase(dataDir: string, options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  if (ENGINE === 'sqlite') {
    const open = () => openSqlite(dataDir, { builtThreads: !options.sourceThreads });
    const database = open();
    return { database, env: { DATA_DIR: dataDir }, openAnother: open, drop: () => database.close() };
  }
  const schema = `wt_test_${randomBytes(6).toString('hex')}`;
  await admin((c) => c.query(`create schema ${schema}`));
  const url = schemaUrl(schema);
  const opened: Database[] = [];
  const open = () => {
    const db = openPostgres(url);
    opened.push(db);
    return db;
  };
  const database = open();
  return {
    database,
    env: { DATA_DIR: dataDir, DATABASE_URL: url },
    openAnother: open,
    async drop() {
      for (const db of opened) await db.close().catch(() => {});
      await admin((c) => c.query(`drop schema if exists ${schema} cascade`));
    },
  };
}
