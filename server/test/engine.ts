import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import type { Database } from '../src/db/database.js';
import { openPostgres } from '../src/db/postgres/database.js';
import { openSqlite } from '../src/db/sqlite/database.js';
import { startDrop } from './drops.js';
import { admin, databaseUrl, schemaUrl, TEMPLATE_SCHEMA } from './postgres-admin.js';

/**
 * The engine this test run uses: the suite runs once per engine (vitest.config.ts projects),
 * SQLite always, PostgreSQL when DATABASE_URL is set. Each test database is its own: a data
 * directory on SQLite; on PostgreSQL a schema of its own, or a database of its own copied from
 * a migrated template (`TestDatabaseOptions.migrated`), dropped afterwards.
 */
export const ENGINE: 'sqlite' | 'postgres' = process.env.WAYTRACK_TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite';

export interface TestDatabase {
  database: Database;
  /** Environment for a server process on the same database (DATA_DIR and, on PostgreSQL, DATABASE_URL). */
  env: Record<string, string>;
  /** Another connection (pool) to the same database: a second instance. */
  openAnother(): Database;
  /**
   * Closes the database (if still open) and drops what it created: on PostgreSQL a copied
   * database's drop finishes in the background, by the end of the test file (`settleDrops`).
   */
  drop(): Promise<void>;
}

export { schemaUrl };

export interface TestDatabaseOptions {
  /**
   * SQLite: the worker threads' entry module, a test's (TypeScript, loaded through tsx, ~1 s of
   * CPU per thread), instead of server/dist/worker.js, which the global setup built from the
   * sources: for a test whose jobs live in a test module (the built table has the service's only).
   */
  threadEntry?: URL;
  /**
   * Already migrated (PostgreSQL: a copy of the template database, when there is one; SQLite
   * migrates in ~40 ms, and its database starts empty). Its `migrate()` then applies nothing.
   */
  migrated?: boolean;
}

/** A fresh database for one test: empty (not migrated) unless `options.migrated`. */
export async function openTestDatabase(dataDir: string, options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  if (ENGINE === 'sqlite') {
    const open = () => openSqlite(dataDir, { builtThreads: true, threadEntry: options.threadEntry });
    const database = open();
    return { database, env: { DATA_DIR: dataDir }, openAnother: open, drop: () => database.close() };
  }
  const template = options.migrated ? inject('postgresTemplate') : undefined;
  if (template) return copyOf(template, dataDir);
  const schema = `wt_test_${randomBytes(6).toString('hex')}`;
  await admin((c) => c.query(`create schema ${schema}`));
  const url = schemaUrl(schema);
  // Dropped before the test ends: a schema dropped while another test migrates its own can fail
  // that migration (Kysely's table lookup reads every schema of the database).
  return postgresDatabase(url, dataDir, { background: false }, () =>
    admin((c) => c.query(`drop schema if exists ${schema} cascade`)),
  );
}

/** A database of its own, copied from the migrated template (see TEMPLATE_SCHEMA). */
async function copyOf(template: string, dataDir: string): Promise<TestDatabase> {
  const name = `wt_test_${randomBytes(6).toString('hex')}`;
  await admin((c) => c.query(`create database ${name} template ${template}`));
  const url = databaseUrl(name, TEMPLATE_SCHEMA);
  return postgresDatabase(url, dataDir, { background: true }, () =>
    admin((c) => c.query(`drop database if exists ${name} with (force)`)),
  );
}

function postgresDatabase(
  url: string,
  dataDir: string,
  drop: { background: boolean },
  dropIt: () => Promise<unknown>,
): TestDatabase {
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
      if (drop.background) startDrop(dropIt);
      else await dropIt();
    },
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** The migrated PostgreSQL database test databases are copied from (`createPostgresTemplate`), if any. */
    postgresTemplate: string | undefined;
  }
}
