import { randomBytes } from 'node:crypto';
import type { Database, Writer } from '../database.js';

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

/** A write that changes nothing of substance: readiness tries one to learn whether writes work again. */
export async function touchReadyProbe(trx: Writer, now: number): Promise<void> {
  await trx
    .insertInto('settings')
    .values({ name: 'ready_probe', value: String(now) })
    .onConflict((oc) => oc.column('name').doUpdateSet({ value: String(now) }))
    .execute();
}
