/**
 * Who a conversion's customer is (api.md §11 "Customers"): the hashed email, else the hashed
 * phone, of the conversion, as `em:<sha256>` / `ph:<sha256>` — the key of `customers`
 * (migration 0033). A conversion with neither has no customer. A leaf: types and
 * click-channel.ts only.
 */
import { attributedClickIds, channelOf } from '../click-channel.js';
import type { ConversionsTable } from '../db/schema.js';

/** The customer key of hashed customer data (capi/pii.ts `hashCustomerData`), or undefined. */
export function customerKeyOf(hashes: { em?: string | null; ph?: string | null }): string | undefined {
  if (hashes.em) return `em:${hashes.em}`;
  if (hashes.ph) return `ph:${hashes.ph}`;
  return undefined;
}

/** The channel a customer's first conversion is credited to (click-channel.ts), `unattributed` when none. */
export function firstChannelOf(
  row: Pick<ConversionsTable, 'attributed' | 'attributed_click_ids' | 'attributed_fbclid' | 'ref_fbclid' | 'ref_fbc' | 'ref_ids'>,
): string {
  if (row.attributed !== 1) return UNATTRIBUTED;
  const asRow = row as ConversionsTable;
  return channelOf(asRow, attributedClickIds(asRow)) ?? UNATTRIBUTED;
}

export const UNATTRIBUTED = 'unattributed';
