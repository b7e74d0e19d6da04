import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openPostgres } from '../src/db/postgres/database.js';

// The PostgreSQL test server, as the tests and the vitest global setup (which may not import
// vitest, hence a module apart from engine.ts) reach it.

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

export async function admin<T>(work: (client: pg.Client) => Promise<T>, url = baseUrl()): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * PostgreSQL: migrating a schema costs ~2 s (the monthly partitions most of it), and migrations
 * of concurrent tests queue on one advisory lock for the whole database. So the global setup
 * migrates one template database (`createPostgresTemplate`), and a test that wants a migrated
 * database gets a copy of it (CREATE DATABASE … TEMPLATE, ~0.15 s), holding its Waytrack in a
 * schema of this name, so that its URL has the shape of every other test database's.
 */
export const TEMPLATE_SCHEMA = 'wt_test_template';

/** A URL for `schema` of `database` on the test server. */
export function databaseUrl(database: string, schema: string): string {
  const url = new URL(schemaUrl(schema));
  url.pathname = `/${database}`;
  return url.toString();
}

/**
 * The vitest global setup: a migrated database that test databases are copied from, or
 * undefined when the test server's user may not create databases (each test then migrates).
 */
export async function createPostgresTemplate(): Promise<string | undefined> {
  const name = `wt_template_${randomBytes(6).toString('hex')}`;
  try {
    await admin((c) => c.query(`create database ${name}`));
  } catch (error) {
    console.log(`each PostgreSQL test database is migrated: no template database (${(error as Error).message})`);
    return undefined;
  }
  const url = databaseUrl(name, TEMPLATE_SCHEMA);
  await admin((c) => c.query(`create schema ${TEMPLATE_SCHEMA}`), url);
  const database = openPostgres(url);
  try {
    await database.migrate();
  } finally {
    await database.close();
  }
  return name;
}

export async function dropPostgresTemplate(name: string): Promise<void> {
  await admin((c) => c.query(`drop database if exists ${name} with (force)`));
}
