import type { Database } from '../db/database.js';
import {
  countAccounts,
  findAccount,
  findAccountByEmail,
  insertAccount,
  insertApiKey,
  listApiKeys,
  revokeApiKey,
} from '../db/repositories/accounts.js';
import { newId } from '../ids.js';
import { generateApiKey, hashPassword, isScope, type Mode } from './keys.js';

/** Accounts and their API keys: what the CLI and the dashboard manage. */

export class AccountError extends Error {}

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
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export async function createAccount(
  database: Database,
  input: { email: string; password?: string },
): Promise<{ accountId: string; email: string; keys: { live: string; test: string } }> {
  const email = input.email.trim().toLowerCase();
  if (!EMAIL.test(email) || email.length > 254) throw new AccountError(`not a valid email address: "${input.email}"`);
  if (input.password !== undefined && input.password.length < 8) {
    throw new AccountError('password must be at least 8 characters');
  }
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
    if (scope !== '*' && !isScope(scope)) throw new AccountError(`unknown scope "${scope}"`);
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
  }));
}

export async function revokeKey(database: Database, keyId: string): Promise<void> {
  const revoked = await database.write((trx) => revokeApiKey(trx, keyId, Date.now()));
  if (!revoked) throw new AccountError(`no active key ${keyId}`);
}

export async function hasAccounts(database: Database): Promise<boolean> {
  return (await countAccounts(database.read)) > 0;
}
