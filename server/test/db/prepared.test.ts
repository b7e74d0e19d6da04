import { rmSync } from 'node:fs';
import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Database, Reader } from '../../src/db/database.js';
import { prepared, preparedQuery } from '../../src/db/prepared.js';
import { rowLimit } from '../../src/db/row-limit.js';
import { openSqlite } from '../../src/db/sqlite/database.js';
import { tempDir } from '../helpers.js';

interface Note {
  id: number;
  owner: string;
  body: string | null;
}

interface TestDB {
  notes: Note;
}

let dataDir: string;
let database: Database;
/** The test's own table, which the application schema does not know. */
const test = (db: unknown) => db as Kysely<TestDB>;

beforeAll(async () => {
  dataDir = tempDir('waytrack-prepared-');
  database = openSqlite(dataDir);
  await database.migrate();
  await database.write(async (trx) => {
    await trx.schema
      .createTable('notes')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('owner', 'text')
      .addColumn('body', 'text')
      .execute();
  });
});
afterAll(async () => {
  await database.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const insertNote = prepared((db, note: Note) => test(db).insertInto('notes').values(note));

describe('prepared queries', () => {
  it('compile once per shape of values and bind each call’s values in place of the markers', async () => {
    const build = vi.fn((db: Reader, v: { owner: string; from: number }) =>
      test(db)
        .selectFrom('notes')
        .selectAll()
        .where('owner', '=', v.owner)
        .where('id', '>=', v.from)
        .orderBy('id')
        .limit(rowLimit(10)),
    );
    const byOwner = preparedQuery(build);
    await database.write(async (trx) => {
      await insertNote(trx, { id: 1, owner: 'ann', body: 'a' });
      await insertNote(trx, { id: 2, owner: 'bob', body: null });
      await insertNote(trx, { id: 3, owner: 'ann', body: undefined as unknown as null }); // undefined binds NULL
    });
    expect((await byOwner(database.read, { owner: 'ann', from: 0 })).rows).toEqual([
      { id: 1, owner: 'ann', body: 'a' },
      { id: 3, owner: 'ann', body: null },
    ]);
    expect((await byOwner(database.read, { owner: 'bob', from: 0 })).rows).toEqual([{ id: 2, owner: 'bob', body: null }]);
    expect((await byOwner(database.read, { owner: 'ann', from: 2 })).rows.map((r) => r.id)).toEqual([3]);
    expect(build).toHaveBeenCalledTimes(1);
    // Another set of value names is another statement.
    await byOwner(database.read, { from: 0, owner: 'ann' });
    expect(build).toHaveBeenCalledTimes(2);
  });

  it('report affected rows, inside a transaction too', async () => {
    const result = await database.write((trx) => insertNote(trx, { id: 10, owner: 'cy', body: 'x' }));
    expect(Number(result.numAffectedRows)).toBe(1);
  });

  it('refuse a query that writes a value into the SQL text instead of binding it', async () => {
    const inlined = preparedQuery((db, v: { owner: string }) =>
      test(db).selectFrom('notes').selectAll().where('owner', '=', sql.lit(v.owner)),
    );
    await expect(inlined(database.read, { owner: 'ann' })).rejects.toThrow(/does not bind every value/);
  });
});

describe('row limits', () => {
  it('are written into the SQL text', () => {
    const query = test(database.read).selectFrom('notes').selectAll().limit(rowLimit(21));
    expect(query.compile().sql).toMatch(/limit 21$/);
  });

  it.each([-1, 1.5, Number.NaN, 2 ** 60])('refuse %s', (n) => {
    expect(() => rowLimit(n)).toThrow(RangeError);
  });
});
