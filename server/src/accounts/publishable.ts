import type { Database } from '../db/database.js';
import { findAccount, findStoreAccount, insertApiKey } from '../db/repositories/accounts.js';
import { findStore } from '../db/repositories/stores.js';
import { newId } from '../ids.js';
import { AccountError } from './accounts.js';
import { generateApiKey, type Mode } from './keys.js';

/**
 * Publishable keys (api.md §6): keys made to sit in a web page, for the browser tag. A secret
 * key must never be in a page, yet clicks are first seen in the visitor's browser; a
 * publishable key can do one harmless thing only: record clicks for one store, from the pages
 * of that store. The origin rule stops other sites from using a store's key in their visitors'
 * browsers; it is no secret (anyone can read the key, and a non-browser client can send any
 * Origin), which is why the key can do nothing else.
 */

/** The one scope a publishable key carries. */
export const PUBLISHABLE_SCOPES = ['clicks:write'] as const;

/** Bounds on a key's extra origins: a few sites, not a list of the web. */
export const MAX_EXTRA_ORIGINS = 20;
const MAX_ORIGIN_LENGTH = 255;

/** Hosts a page may be served from in development, over plain http as well as https. */
const DEVELOPMENT_HOSTS = new Set(['localhost', '127.0.0.1']);

export interface CreatedPublishableKey {
  keyId: string;
  key: string;
  mode: Mode;
  scopes: string[];
  storeId: string;
  origins: string[];
}

/** What the origin rule needs to know of a key: its store's domain and its extra origins. */
export interface OriginRule {
  domain: string;
  origins: readonly string[];
}

/**
 * `scheme://host[:port]` of an http(s) URL with nothing after the host (a trailing `/` is
 * tolerated), normalized as browsers send it in `Origin` (lower-case, default port dropped);
 * undefined for anything else.
 */
export function normalizeOrigin(value: string): string | undefined {
  if (value.length > MAX_ORIGIN_LENGTH || !/^https?:\/\/[^/?#\s]+\/?$/i.test(value)) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.username || url.password || !url.hostname) return undefined;
  return url.origin;
}

function isDevelopmentHost(hostname: string): boolean {
  return DEVELOPMENT_HOSTS.has(hostname);
}

/**
 * Whether a request's `Origin` may use a key: https on the store's domain or one of its
 * subdomains (any port), one of the key's extra origins exactly, or a development page on
 * localhost / 127.0.0.1 (http or https, any port). A missing or `null` Origin never may.
 */
export function originAllowed(origin: string | undefined, rule: OriginRule): boolean {
  if (!origin) return false;
  const normalized = normalizeOrigin(origin);
  if (!normalized) return false;
  const { protocol, hostname } = new URL(normalized);
  if (isDevelopmentHost(hostname)) return true;
  if (rule.origins.includes(normalized)) return true;
  if (protocol !== 'https:') return false;
  const domain = rule.domain.toLowerCase();
  return hostname === domain || hostname.endsWith(`.${domain}`);
}

/**
 * Checks and normalizes the extra origins of a new key. Each must be an https origin (http only
 * for localhost and 127.0.0.1); duplicates collapse.
 */
export function checkExtraOrigins(origins: readonly string[]): string[] {
  if (origins.length > MAX_EXTRA_ORIGINS) {
    throw new AccountError(`a publishable key takes at most ${MAX_EXTRA_ORIGINS} extra origins`, 'origins');
  }
  const normalized: string[] = [];
  for (const [i, value] of origins.entries()) {
    const origin = normalizeOrigin(value.trim());
    if (!origin) {
      throw new AccountError(
        `"${value}" is not an origin like https://shop.example.com (scheme and host, no path)`,
        `origins[${i}]`,
      );
    }
    const { protocol, hostname } = new URL(origin);
    if (protocol !== 'https:' && !isDevelopmentHost(hostname)) {
      throw new AccountError(`"${value}" must use https (plain http only for localhost and 127.0.0.1)`, `origins[${i}]`);
    }
    if (!normalized.includes(origin)) normalized.push(origin);
  }
  return normalized;
}

/**
 * Creates a publishable key for one store of the account (the CLI's `keys create
 * --publishable` and the dashboard). The full key is returned this once; only its hash is kept.
 */
export async function createPublishableKey(
  database: Database,
  accountId: string,
  input: { storeId: string; mode: Mode; name?: string; origins?: readonly string[] },
): Promise<CreatedPublishableKey> {
  if (input.mode !== 'live' && input.mode !== 'test') throw new AccountError('mode must be live or test', 'mode');
  const origins = checkExtraOrigins(input.origins ?? []);
  if (input.name !== undefined && (input.name.trim() === '' || input.name.length > 100)) {
    throw new AccountError('name must be 1 to 100 characters', 'name');
  }
  if (!(await findAccount(database.read, accountId))) throw new AccountError(`no account ${accountId}`);
  // Another account's store is as unknown as a store that does not exist.
  const store = await findStore(database.read, accountId, input.storeId);
  if (!store) throw new AccountError(`no store ${input.storeId} in this account`, 'storeId');
  const keyId = newId('key');
  const generated = generateApiKey(input.mode, 'publishable');
  const scopes = [...PUBLISHABLE_SCOPES];
  await database.write((trx) =>
    insertApiKey(trx, {
      id: keyId,
      account_id: accountId,
      mode: input.mode,
      name: input.name ?? `${input.mode} publishable key for ${store.domain}`,
      key_hash: generated.hash,
      hint: generated.hint,
      scopes: JSON.stringify(scopes),
      rate_limit_rps: null,
      rate_limit_burst: null,
      created_at: Date.now(),
      revoked_at: null,
      kind: 'publishable',
      store_id: store.id,
      origins: JSON.stringify(origins),
    }),
  );
  return { keyId, key: generated.key, mode: input.mode, scopes, storeId: store.id, origins };
}

/**
 * The same for the operator's CLI, which names a store alone: the key goes to the store's
 * account (with `accountId`, the store must be one of that account's).
 */
export async function createPublishableKeyForStore(
  database: Database,
  input: { storeId: string; mode: Mode; name?: string; origins?: readonly string[]; accountId?: string },
): Promise<CreatedPublishableKey> {
  const owner = await findStoreAccount(database.read, input.storeId);
  if (!owner || (input.accountId !== undefined && owner !== input.accountId)) {
    throw new AccountError(`no store ${input.storeId}${input.accountId ? ` in account ${input.accountId}` : ''}`, 'storeId');
  }
  const { accountId: _owner, ...key } = input;
  return createPublishableKey(database, owner, key);
}
