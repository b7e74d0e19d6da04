import { rmSync } from 'node:fs';
import { type Kysely, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { SchemaError } from '../../src/db/migrations/index.js';
import { openTestDatabase, type TestDatabase } from '../engine.js';
import { tempDir } from '../helpers.js';

describe('migrations', () => {
  let testDb: TestDatabase | undefined;
  let dataDir = '';
  afterEach(async () => {
    await testDb?.drop();
    testDb = undefined;
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('apply once, and a second run applies nothing', async () => {
    dataDir = tempDir();
    testDb = await openTestDatabase(dataDir);
    const applied = await testDb.database.migrate();
    expect(applied).toContain('0001_initial');
    expect(applied).toContain('0005_rollup_queue');
    expect(await testDb.database.migrate()).toEqual([]);
    await expect(testDb.database.checkSchema()).resolves.toBeUndefined();
  });

  it('refuse a database migrated by newer code, for migrate and serve alike', async () => {
    dataDir = tempDir();
    testDb = await openTestDatabase(dataDir);
    await testDb.database.migrate();
    await testDb.database.write((trx) =>
      sql`insert into kysely_migration (name, timestamp) values ('9999_from_the_future', '2030-01-01T00:00:00.000Z')`.execute(
        trx as Kysely<unknown>,
      ),
    );
    await expect(testDb.database.checkSchema()).rejects.toBeInstanceOf(SchemaError);
    await expect(testDb.database.migrate()).rejects.toThrow(/newer than this version of Waytrack.*9999_from_the_future/);
    // Another connection (a second instance starting) is refused the same way.
    const other = testDb.openAnother();
    try {
      await expect(other.migrate()).rejects.toBeInstanceOf(SchemaError);
    } finally {
      await other.close();
    }
  });
});
