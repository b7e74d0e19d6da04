import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Database } from '../db/database.js';
import { deleteIdleSessions, deleteSession, findSession, insertSession, touchSession } from '../db/repositories/sessions.js';

/** A session ends after 12 hours without a request (api.md §5). */
export const IDLE_TIMEOUT_MS = 12 * 60 * 60 * 1000;
/** The idle deadline is moved at most once a minute: a write per request buys nothing. */
export const TOUCH_INTERVAL_MS = 60_000;

export interface Session {
  /** SHA-256 of the token: what the database knows the session by. */
  id: string;
  accountId: string;
  email: string;
  /** Sent back by the page with every state-changing request (synchronizer token). */
  csrfToken: string;
  /** True when this request moved the idle deadline: the cookie's lifetime is renewed with it. */
  renewed: boolean;
}

const sessionId = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');
const newToken = () => randomBytes(32).toString('base64url');

/** Starts a session for a signed-in owner; the token goes into the cookie and nowhere else. */
export async function startSession(
  database: Database,
  account: { accountId: string; email: string },
  now = Date.now(),
): Promise<{ token: string; session: Session }> {
  const token = newToken();
  const session: Session = { id: sessionId(token), ...account, csrfToken: newToken(), renewed: true };
  await database.write(async (trx) => {
    // Signing in is rare: a good moment to forget sessions that ended by idling.
    await deleteIdleSessions(trx, now - IDLE_TIMEOUT_MS);
    await insertSession(trx, {
      id: session.id,
      account_id: account.accountId,
      csrf_token: session.csrfToken,
      created_at: now,
      last_seen_at: now,
    });
  });
  return { token, session };
}

/**
 * The live session a cookie's token names, its idle deadline moved; undefined when there is
 * none: never issued, signed out, or idle for 12 hours (then it is deleted).
 */
export async function resumeSession(database: Database, token: string, now = Date.now()): Promise<Session | undefined> {
  const id = sessionId(token);
  const row = await findSession(database.read, id);
  if (!row) return undefined;
  if (now - row.last_seen_at >= IDLE_TIMEOUT_MS) {
    await database.write((trx) => deleteSession(trx, id));
    return undefined;
  }
  const renewed = now - row.last_seen_at >= TOUCH_INTERVAL_MS;
  if (renewed) await database.write((trx) => touchSession(trx, id, now));
  return { id, accountId: row.account_id, email: row.email, csrfToken: row.csrf_token, renewed };
}

/** Signs out: the session is gone for every instance at once. */
export async function endSession(database: Database, session: Pick<Session, 'id'>): Promise<void> {
  await database.write((trx) => deleteSession(trx, session.id));
}

/** Constant-time comparison of the token a request carried with the session's. */
export function csrfTokenMatches(session: Session, given: string): boolean {
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(session.csrfToken, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}
