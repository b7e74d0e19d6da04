import type { Database } from '../db/database.js';
import {
  countAccounts,
  findAccount,
  findAccountByEmail,
  insertAccount,
  insertApiKey,
  listAccounts as listAccountRows,
  listApiKeys,
  revokeApiKey,
  setAccountPassword,
} from '../db/repositories/accounts.js';
import { deleteSessionsOfAccount } from '../db/repositories/sessions.js';
import { newId } from '../ids.js';
import { generateApiKey, hashPassword, isScope, type KeyKind, type Mode, SCOPES, verifyPassword } from './keys.js';

/** Accounts and their API keys: what the CLI and the dashboard manage. */

export class AccountError extends Error {
  /** The input at fault, when one is (the dashboard reports it as `details.field`). */
  constructor(
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

export interface CreatedKey {
  keyId: string;
  key: string;
  mode: Mode;
  scopes: string[];
}

export interface KeySummary {
  keyId: string;
  name: string;
  mode: Mode;
  scopes: string[];
  hint: string;
  createdAt: string;
  revokedAt: string | null;
  /** When the key last authenticated a request (to the minute); null if never. */
  lastUsedAt: string | null;
  /** `publishable` for a browser tag's key (api.md §6), else `secret`. */
  kind: KeyKind;
  /** A publishable key's store; null for secret keys. */
  storeId: string | null;
  /** A publishable key's extra allowed origins; empty for secret keys. */
  origins: string[];
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
export const MIN_PASSWORD_LENGTH = 8;

/** Refuses a password too short to be set (AccountError). */
export function checkPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw new AccountError(`password must be at least ${MIN_PASSWORD_LENGTH} characters`);
  }
}

export async function createAccount(
  database: Database,
  input: { email: string; password?: string },
): Promise<{ accountId: string; email: string; keys: { live: string; test: string } }> {
  const email = input.email.trim().toLowerCase();
  if (!EMAIL.test(email) || email.length > 254) throw new AccountError(`not a valid email address: "${input.email}"`);
  if (input.password !== undefined) checkPassword(input.password);
  if (await findAccountByEmail(database.read, email)) throw new AccountError(`an account with email ${email} already exists`);
  const accountId = newId('account');
  const now = Date.now();
  const passwordHash = input.password === undefined ? null : hashPassword(input.password);
  const live = generateApiKey('live');
  const test = generateApiKey('test');
  await database.write(async (trx) => {
    await insertAccount(trx, { id: accountId, email, password_hash: passwordHash, created_at: now });
    for (const [mode, generated] of [
      ['live', live],
      ['test', test],
    ] as const) {
      await insertApiKey(trx, {
        id: newId('key'),
        account_id: accountId,
        mode,
        name: `Default ${mode} key`,
        key_hash: generated.hash,
        hint: generated.hint,
        scopes: JSON.stringify(['*']),
        rate_limit_rps: null,
        rate_limit_burst: null,
        created_at: now,
        revoked_at: null,
      });
    }
  });
  return { accountId, email, keys: { live: live.key, test: test.key } };
}

export async function createKey(
  database: Database,
  input: { accountId: string; mode: Mode; scopes?: string[]; name?: string; rateLimitRps?: number; rateLimitBurst?: number },
): Promise<CreatedKey> {
  if (!(await findAccount(database.read, input.accountId))) throw new AccountError(`no account ${input.accountId}`);
  if (input.mode !== 'live' && input.mode !== 'test') throw new AccountError('mode must be live or test');
  if (input.scopes !== undefined && input.scopes.length === 0) throw new AccountError('a key needs at least one scope');
  const scopes = input.scopes ? [...new Set(input.scopes)] : ['*'];
  for (const scope of scopes) {
    if (scope !== '*' && !isScope(scope)) {
      throw new AccountError(`unknown scope "${scope}"; the scopes are ${['*', ...SCOPES].join(', ')} (* = all)`);
    }
  }
  const keyId = newId('key');
  const generated = generateApiKey(input.mode);
  await database.write((trx) =>
    insertApiKey(trx, {
      id: keyId,
      account_id: input.accountId,
      mode: input.mode,
      name: input.name ?? `${input.mode} key`,
      key_hash: generated.hash,
      hint: generated.hint,
      scopes: JSON.stringify(scopes),
      rate_limit_rps: input.rateLimitRps ?? null,
      rate_limit_burst: input.rateLimitBurst ?? null,
      created_at: Date.now(),
      revoked_at: null,
    }),
  );
  return { keyId, key: generated.key, mode: input.mode, scopes };
}

export async function listKeys(database: Database, accountId: string): Promise<KeySummary[]> {
  if (!(await findAccount(database.read, accountId))) throw new AccountError(`no account ${accountId}`);
  const rows = await listApiKeys(database.read, accountId);
  return rows.map((k) => ({
    keyId: k.id,
    name: k.name,
    mode: k.mode,
    scopes: JSON.parse(k.scopes) as string[],
    hint: k.hint,
    createdAt: new Date(k.created_at).toISOString(),
    revokedAt: k.revoked_at === null ? null : new Date(k.revoked_at).toISOString(),
    lastUsedAt: k.last_used_at == null ? null : new Date(k.last_used_at).toISOString(),
    kind: k.kind ?? 'secret',
    storeId: k.store_id ?? null,
    origins: k.origins ? (JSON.parse(k.origins) as string[]) : [],
  }));
}

/** Revokes a key; with `accountId`, only one of that account's (the dashboard's case). */
export async function revokeKey(database: Database, keyId: string, accountId?: string): Promise<void> {
  const revoked = await database.write((trx) => revokeApiKey(trx, keyId, Date.now(), accountId));
  if (!revoked) throw new AccountError(`no active key ${keyId}`);
}

/**
 * Sets an owner's dashboard password and ends every dashboard session of the account: a
 * password is changed because the old one may be known, so nobody stays signed in with it.
 */
export async function setPassword(database: Database, email: string, password: string): Promise<{ accountId: string }> {
  checkPassword(password);
  const account = await findAccountByEmail(database.read, email.trim().toLowerCase());
  if (!account) throw new AccountError(`no account with email ${email.trim()}`);
  const passwordHash = hashPassword(password);
  await database.write(async (trx) => {
    await setAccountPassword(trx, account.id, passwordHash);
    await deleteSessionsOfAccount(trx, account.id);
  });
  return { accountId: account.id };
}

/** Hashed once, on first use: what an unknown email's attempt is checked against. */
let decoyHash: string | undefined;

/**
 * The account an email and password sign in to, or undefined. An unknown email, an account
 * without a password and a wrong password cost the same scrypt work and give the same answer,
 * so neither the time nor the result tells which of the two was wrong.
 */
export async function verifyCredentials(
  database: Database,
  email: string,
  password: string,
): Promise<{ accountId: string; email: string } | undefined> {
  const account = await findAccountByEmail(database.read, email.trim().toLowerCase());
  decoyHash ??= hashPassword("decoy password, never anyone's");
  const stored = account?.password_hash ?? decoyHash;
  const matches = verifyPassword(password, stored);
  return account?.password_hash && matches ? { accountId: account.id, email: account.email } : undefined;
}

export interface AccountSummary {
  accountId: string;
  email: string;
  createdAt: string;
  /** Whether the owner can sign in to the dashboard (`account password` sets it). */
  hasPassword: boolean;
}

/** Every account, oldest first: what the operator needs to find an account id for `keys create --account`. */
export async function listAccounts(database: Database): Promise<AccountSummary[]> {
  const rows = await listAccountRows(database.read);
  return rows.map((a) => ({
    accountId: a.id,
    email: a.email,
    createdAt: new Date(Number(a.created_at)).toISOString(),
    hasPassword: a.password_hash !== null,
  }));
}

export async function hasAccounts(database: Database): Promise<boolean> {
  return (await countAccounts(database.read)) > 0;
}
