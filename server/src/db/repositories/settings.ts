import { randomBytes } from 'node:crypto';
import type { Database } from '../database.js';

/**
 * A random secret kept in the database, created on first use. Living in the database (not in
 * a file) means every instance sharing that database signs and verifies with the same secret.
 */
export async function getOrCreateSecret(database: Database, name: string): Promise<string> {
  const existing = await database.read.selectFrom('settings').select('value').where('name', '=', name).executeTakeFirst();
  if (existing) return existing.value;
  await database.write((trx) =>
    trx
      .insertInto('settings')
      .values({ name, value: randomBytes(32).toString('base64url') })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute(),
  );
  const row = await database.read.selectFrom('settings').select('value').where('name', '=', name).executeTakeFirstOrThrow();
  return row.value;
}
