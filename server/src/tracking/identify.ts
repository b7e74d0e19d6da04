import { hashCustomerData } from '../customer-data.js';
import type { Database } from '../db/database.js';
import { recordIdentityLinks } from '../db/repositories/identity-links.js';
import type { IdentityLinksTable } from '../db/schema.js';
import { ApiError, invalid } from '../http/errors.js';
import { requireActiveStoreCached } from '../stores/lookup.js';
import { modeFlag, type Tenant } from '../tenancy.js';

/**
 * POST /v1/track/identify (api.md §13): links a browser (its `_wt_vid`, `_fbp`, `_ttp`) to a
 * person's hashed email or phone, so a later conversion with that email or phone, from any
 * device, has identity evidence for that browser's clicks (attribution/evidence.ts). Email and
 * phone are normalized and hashed as a conversion's customer data (customer-data.ts), or taken as
 * they are when already SHA-256 hex (the tag hashes in the browser); only hashes are stored.
 */

export interface IdentifyInput {
  storeId: string;
  visitorId?: string;
  fbp?: string;
  ttp?: string;
  email?: string;
  phone?: string;
}

export interface IdentifyResult {
  storeId: string;
  identified: true;
  /** The (identity, browser) links this call stands for: one per hash sent. */
  links: number;
  /** true when every one was already recorded (only its last-seen time moved). */
  duplicate: boolean;
  timestamp: string;
}

const BROWSER_FIELDS = ['visitorId', 'fbp', 'ttp'] as const;
const IDENTITY_FIELDS = ['email', 'phone'] as const;

/** The hashes of the input's email and phone; a value that normalizes to nothing is refused. */
function hashesOf(input: IdentifyInput): Array<{ kind: 'email' | 'phone'; hash: string }> {
  const hashed = hashCustomerData({ email: input.email, phone: input.phone });
  const hashes: Array<{ kind: 'email' | 'phone'; hash: string }> = [];
  for (const [field, hash] of [
    ['email', hashed.em],
    ['phone', hashed.ph],
  ] as const) {
    if (input[field] === undefined) continue;
    if (!hash)
      throw invalid(
        field,
        'invalid_format',
        `${field} has nothing left once normalized; send a real ${field} or its SHA-256 hex`,
      );
    hashes.push({ kind: field, hash });
  }
  return hashes;
}

function requireOne(input: IdentifyInput, fields: readonly (keyof IdentifyInput)[], what: string): void {
  if (fields.some((field) => input[field] !== undefined)) return;
  throw new ApiError('missing_required_field', `At least one ${what} is required: ${fields.join(', ')}`, {
    field: fields[0] as string,
    reason: 'required_field_missing',
    anyOf: [...fields],
  });
}

/** Records the links once each (the same link again is `duplicate`); durable when it resolves. */
export async function identify(
  database: Database,
  tenant: Tenant,
  input: IdentifyInput,
  now = Date.now(),
): Promise<IdentifyResult> {
  requireOne(input, BROWSER_FIELDS, 'browser id');
  requireOne(input, IDENTITY_FIELDS, 'of email and phone');
  const hashes = hashesOf(input);
  const store = await requireActiveStoreCached(database.read, tenant, input.storeId);
  const rows: IdentityLinksTable[] = hashes.map(({ kind, hash }) => ({
    store_id: store.id,
    livemode: modeFlag(tenant),
    kind,
    hash,
    visitor_id: input.visitorId ?? '',
    fbp: input.fbp ?? '',
    ttp: input.ttp ?? '',
    account_id: tenant.accountId,
    created_at: now,
    seen_at: now,
  }));
  const created = await database.write((trx) => recordIdentityLinks(trx, rows));
  return {
    storeId: store.id,
    identified: true,
    links: rows.length,
    duplicate: created === 0,
    timestamp: new Date(now).toISOString(),
  };
}
