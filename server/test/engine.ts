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
 * directory on SQLite; on PostgreSQL a database of its own, empty or copied from a migrated
 * template (`TestDatabaseOptions.migrated`), dropped afterwards.
 */
export const ENGINE: 'sqlite' | 'postgres' = process.env.WAYTRACK_TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite';

export interface TestDatabase {
  database: Database;
  /** Environment for a server process on the same database (DATA_DIR and, on PostgreSQL, DATABASE_URL). */
  env: Record<string, string>;
  /** Another connection (pool) to the same database: a second instance. */
  openAnother(): Database;
  /**
   * Closes the database (if still open) and drops what it created: on PostgreSQL the drop
   * finishes in the background, by the end of the test file (`settleDrops`).
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
  return template ? copyOf(template, dataDir) : emptyDatabase(dataDir);
}

/**
 * An empty database of its own (not a schema of the shared one): a migration reads the table
 * list of every schema of its database (Kysely's introspection, before its lock), and another
 * test's schema dropped meanwhile failed it with `schema "…" does not exist`. Where the test
 * server's user may not create databases, a schema of the shared one (where that can still
 * happen: run such a server's tests with WAYTRACK_TEST_WORKERS=1).
 */
async function emptyDatabase(dataDir: string): Promise<TestDatabase> {
  const name = `wt_test_${randomBytes(6).toString('hex')}`;
  try {
    await admin((c) => c.query(`create database ${name}`));
  } catch (error) {
    if ((error as { code?: string }).code !== '42501') throw error; // insufficient_privilege
    await admin((c) => c.query(`create schema ${name}`));
    // Dropped before the test ends (a drop in the background would fail more migrations).
    const dropSchema = () => admin((c) => c.query(`drop schema if exists ${name} cascade`));
    return postgresDatabase(schemaUrl(name), dataDir, dropSchema, { wait: true });
  }
  const url = databaseUrl(name, TEMPLATE_SCHEMA);
  await admin((c) => c.query(`create schema ${TEMPLATE_SCHEMA}`), url);
  return postgresDatabase(url, dataDir, () => admin((c) => c.query(`drop database if exists ${name} with (force)`)));
}

/** A database of its own, copied from the migrated template (see TEMPLATE_SCHEMA). */
async function copyOf(template: string, dataDir: string): Promise<TestDatabase> {
  const name = `wt_test_${randomBytes(6).toString('hex')}`;
  await admin((c) => c.query(`create database ${name} template ${template}`));
  const url = databaseUrl(name, TEMPLATE_SCHEMA);
  return postgresDatabase(url, dataDir, () => admin((c) => c.query(`drop database if exists ${name} with (force)`)));
}

function postgresDatabase(url: string, dataDir: string, dropIt: () => Promise<unknown>, drop = { wait: false }): TestDatabase {
  const opened: Database[] = [];
  const open = () => {
    const db = openPostgres(url, { builtThreads: true });
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
      if (drop.wait) await dropIt();
      else startDrop(dropIt);
    },
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** The migrated PostgreSQL database test databases are copied from (`createPostgresTemplate`), if any. */
    postgresTemplate: string | undefined;
  }
}
