import type { Reader, Writer } from '../database.js';
import type { DashboardSessionsTable } from '../schema.js';

/** Dashboard sessions (migration 0009). `id` is the SHA-256 of the cookie's token, never the token. */

export async function insertSession(db: Writer, session: DashboardSessionsTable): Promise<void> {
  await db.insertInto('dashboard_sessions').values(session).execute();
}

/** The session and its owner's email, or undefined when there is none with this id. */
export async function findSession(db: Reader, id: string): Promise<(DashboardSessionsTable & { email: string }) | undefined> {
  return db
    .selectFrom('dashboard_sessions')
    .innerJoin('accounts', 'accounts.id', 'dashboard_sessions.account_id')
    .selectAll('dashboard_sessions')
    .select('accounts.email')
    .where('dashboard_sessions.id', '=', id)
    .executeTakeFirst();
}

/** Moves the idle deadline; never backwards (two instances may touch the same session). */
export async function touchSession(db: Writer, id: string, now: number): Promise<void> {
  await db
    .updateTable('dashboard_sessions')
    .set({ last_seen_at: now })
    .where('id', '=', id)
    .where('last_seen_at', '<', now)
    .execute();
}

/** Returns false when there was no such session. */
export async function deleteSession(db: Writer, id: string): Promise<boolean> {
  const result = await db.deleteFrom('dashboard_sessions').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function deleteSessionsOfAccount(db: Writer, accountId: string): Promise<number> {
  const result = await db.deleteFrom('dashboard_sessions').where('account_id', '=', accountId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Sessions idle since before `seenBefore` are over: their rows hold nothing worth keeping. */
export async function deleteIdleSessions(db: Writer, seenBefore: number): Promise<number> {
  const result = await db.deleteFrom('dashboard_sessions').where('last_seen_at', '<', seenBefore).executeTakeFirst();
  return Number(result.numDeletedRows);
}
