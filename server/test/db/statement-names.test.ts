import { randomBytes } from 'node:crypto';
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { type Database, PLANNED_PER_VALUES } from '../../src/db/database.js';
import { openPostgres, StatementNames, withoutJit } from '../../src/db/postgres/database.js';
import type { DB } from '../../src/db/schema.js';
import { ENGINE, schemaUrl } from '../engine.js';

describe('statement names (PostgreSQL automatic preparation)', () => {
  it('names a statement from its third use on, always the same name', () => {
    const names = new StatementNames(3, 10);
    const text = 'select id from stores where id = $1';
    expect(names.nameOf(text)).toBeUndefined();
    expect(names.nameOf(text)).toBeUndefined();
    const name = names.nameOf(text);
    expect(name).toMatch(/^waytrack_\d+$/);
    expect(names.nameOf(text)).toBe(name);
    expect(names.nameOf(`${text} `)).toBeUndefined(); // another text is another statement
  });

  it('never names what is not a query (DDL, SET, transaction control)', () => {
    const names = new StatementNames(1, 10);
    for (const text of ['begin', 'commit', "set local statement_timeout = '5min'", 'create table t (id int)']) {
      expect(names.nameOf(text)).toBeUndefined();
    }
    expect(names.nameOf('  WITH x AS (select 1) select * from x')).toBe('waytrack_1');
  });

  it('DATABASE_PREPARED_STATEMENTS=false turns naming off (maxNamed 0); anything but a boolean stops the start', () => {
    expect(loadConfig({}).preparedStatements).toBe(true);
    expect(loadConfig({ DATABASE_PREPARED_STATEMENTS: 'false' }).preparedStatements).toBe(false);
    expect(() => loadConfig({ DATABASE_PREPARED_STATEMENTS: 'off' })).toThrow(ConfigError);
    const off = new StatementNames(1, 0);
    for (let i = 0; i < 5; i++) expect(off.nameOf('select 1')).toBeUndefined();
  });

  it('never names a statement marked to be planned per values', () => {
    const names = new StatementNames(1, 10);
    // The texts as Kysely compiles them for PostgreSQL, with and without the marker.
    const compiler = new Kysely<DB>({
      dialect: {
        createAdapter: () => new PostgresAdapter(),
        createDriver: () => new DummyDriver(),
        createIntrospector: (db) => new PostgresIntrospector(db),
        createQueryCompiler: () => new PostgresQueryCompiler(),
      },
    });
    const query = compiler.selectFrom('conversions').select('id').where('currency', 'in', ['EUR']);
    const marked = query.modifyEnd(PLANNED_PER_VALUES).compile().sql;
    for (let i = 0; i < 3; i++) expect(names.nameOf(marked)).toBeUndefined();
    expect(names.nameOf(query.compile().sql)).toBe('waytrack_1');
  });

  it('never names a statement with a long `in` list (a generic plan of it scanned every partition)', () => {
    const names = new StatementNames(1, 10);
    const list = (n: number) => Array.from({ length: n }, (_, i) => `$${i + 2}`).join(', ');
    expect(names.nameOf(`select id from conversions where store_id = $1 and customer_key in (${list(100)})`)).toBeUndefined();
    expect(names.nameOf(`select id from conversions where store_id = $1 and customer_key in (${list(3)})`)).toBe('waytrack_1');
    const batch = `insert into clicks (a, b) values ${Array.from({ length: 20 }, (_, i) => `($${2 * i + 1}, $${2 * i + 2})`).join(', ')}`;
    expect(names.nameOf(batch)).toBe('waytrack_2'); // many parameters, no `in`: a batch insert stays named
  });

  it('names at most maxNamed statements: the rest run unnamed', () => {
    const names = new StatementNames(1, 2);
    expect(names.nameOf('select 1')).toBe('waytrack_1');
    expect(names.nameOf('select 2')).toBe('waytrack_2');
    expect(names.nameOf('select 3')).toBeUndefined();
    expect(names.nameOf('select 1')).toBe('waytrack_1');
  });
});

describe('PostgreSQL startup options', () => {
  it("adds jit=off after the URL's own options (a search_path stays), keeping its credentials", () => {
    const url = new URL(
      withoutJit('postgres://u:p%40ss%2Fw@db.example:5433/app?options=-c%20search_path%3Dtenant&sslmode=require'),
    );
    expect(url.searchParams.get('options')).toBe('-c search_path=tenant -c jit=off');
    expect(url.searchParams.get('sslmode')).toBe('require');
    expect([url.username, decodeURIComponent(url.password), url.host, url.pathname]).toEqual([
      'u',
      'p@ss/w',
      'db.example:5433',
      '/app',
    ]);
    expect(new URL(withoutJit('postgres://localhost/app')).searchParams.get('options')).toBe('-c jit=off');
  });
});

if (ENGINE !== 'postgres') console.log('skipped: set DATABASE_URL (statement names are PostgreSQL only)');

describe.skipIf(ENGINE !== 'postgres')('a PostgreSQL connection: statement names, no JIT', () => {
  const schema = `wt_test_${randomBytes(6).toString('hex')}`;
  let database: Database;
  const admin = async (text: string) => {
    const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
    try {
      await client.query(text);
    } finally {
      await client.end();
    }
  };

  beforeAll(async () => {
    await admin(`create schema ${schema}`);
    // One connection: every query below runs on the connection whose statements it lists.
    database = openPostgres(schemaUrl(schema), { poolSize: 1 });
  });
  afterAll(async () => {
    await database.close();
    await admin(`drop schema if exists ${schema} cascade`);
  });

  it('prepares a frequent query once on the connection and runs it by name after that', async () => {
    const db = database.read as unknown as Kysely<unknown>;
    const probe = (n: number) => sql<{ waytrack_probe: number }>`select ${n}::int + 1 as waytrack_probe`.execute(db);
    for (let n = 0; n < 5; n++) expect((await probe(n)).rows).toEqual([{ waytrack_probe: n + 1 }]);
    const prepared = await sql<{ name: string }>`
      select name from pg_prepared_statements where statement like '%as waytrack_probe'`.execute(db);
    expect(prepared.rows).toEqual([{ name: expect.stringMatching(/^waytrack_\d+$/) }]);
  });

  it('runs without JIT compilation, whatever the server default (it cost 1.3 s on a 30 ms read at 2M clicks)', async () => {
    const db = database.read as unknown as Kysely<unknown>;
    expect((await sql<{ jit: string }>`show jit`.execute(db)).rows).toEqual([{ jit: 'off' }]);
  });

  it('a named statement whose preparation failed is prepared again on its next use', async () => {
    const db = database.read as unknown as Kysely<unknown>;
    const probe = (on: Kysely<unknown>) => sql<{ waytrack_retry: number }>`select ${7}::int as waytrack_retry`.execute(on);
    await probe(db);
    await probe(db);
    // Its third use (the first named one) lands in a transaction that already failed: PostgreSQL
    // refuses to prepare anything there.
    await expect(
      db.transaction().execute(async (trx) => {
        await sql`select 1 / 0`.execute(trx).catch(() => {});
        await probe(trx);
      }),
    ).rejects.toThrow(/current transaction is aborted/);
    expect((await probe(db)).rows).toEqual([{ waytrack_retry: 7 }]);
  });
});
