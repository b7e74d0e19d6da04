import { isIP } from 'node:net';
import { type OriginRule, originAllowed } from '../accounts/publishable.js';
import type { ConsentInput } from '../consent/consent.js';
import type { Database } from '../db/database.js';
import { findConversion } from '../db/repositories/conversions.js';
import type { Forwarder } from '../destinations/meta/forwarding.js';
import { ApiError, fieldError } from '../http/errors.js';
import { requireActiveStore } from '../stores/lookup.js';
import type { Tenant } from '../tenancy.js';
import type { OtherClickIdKind } from '../tracking/click-ids.js';
import { attributedTo } from '../tracking/conversion-views.js';
import { type ConversionInput, type ConversionResult, recordConversion } from '../tracking/conversions.js';
import { fillEvidence, reattributeIfStronger } from './order-merge.js';

/**
 * POST /v1/track/checkout — the Shopify checkout pixel's `checkout_completed` (api.md §13;
 * packages/tag/src/shopify-pixel.ts; docs/integrations.md "Shopify checkout pixel"). A Purchase
 * of the order, with what only the buyer's browser knows: its `_wt_vid`, `_fbp`, `_ttp`, `_fbc`
 * and the click ids in its cookies. Sent with the store's publishable key from Shopify's pixel
 * sandbox, whose frame has no origin of its own (`Origin: null`): the page it reports (Shopify's
 * `event.context.document.location.href`) must then be on the store's domain or the key's origins.
 * Merged with the order webhook for the same order (order-merge.ts), whichever comes first.
 */

export interface CheckoutInput extends Partial<Record<OtherClickIdKind, string>> {
  storeId: string;
  orderId: string;
  eventValue: number;
  currency: string;
  eventId?: string;
  visitorId?: string;
  fbc?: string;
  fbp?: string;
  ttp?: string;
  fbclid?: string;
  userAgent?: string;
  eventSourceUrl?: string;
  timestamp?: string;
  consent?: ConsentInput;
}

export interface CheckoutResult extends ConversionResult {
  /** On a duplicate: the browser evidence this event added to the recorded conversion (API field names). */
  filled?: string[];
  /** Whether the added evidence re-attributed the conversion to a more probable click. */
  reattributed: boolean;
}

const SHOPIFY_ORDER_GID = /^gid:\/\/shopify\/(?:Order|OrderIdentity)\/(\d{1,40})$/;

/**
 * The order id as the order webhook has it (the decimal text of the order's `id`): Shopify's
 * pixel payload carries it as that text or as a GID (`gid://shopify/OrderIdentity/<id>`).
 * Anything else could never meet its order: refused.
 */
export function shopifyOrderId(value: string): string {
  const trimmed = value.trim();
  const id = SHOPIFY_ORDER_GID.exec(trimmed)?.[1] ?? (/^\d{1,40}$/.test(trimmed) ? trimmed : undefined);
  if (id === undefined) {
    throw fieldError(
      'invalid_request',
      'orderId',
      'invalid_format',
      'orderId must be the Shopify order id: its decimal digits, or a gid://shopify/Order/<id> or gid://shopify/OrderIdentity/<id>',
    );
  }
  return id;
}

/**
 * From a sandboxed frame (`Origin: null`) the page the event reports stands in for the Origin:
 * it must be one the key's rule allows (api.md §6), else 403 as an unknown Origin would be.
 */
export function checkSandboxedPage(origin: string, eventSourceUrl: string | undefined, rule: OriginRule): void {
  if (origin !== 'null') return;
  let page: string | undefined;
  try {
    page = eventSourceUrl ? new URL(eventSourceUrl).origin : undefined;
  } catch {
    page = undefined;
  }
  if (!page || !originAllowed(page, rule)) {
    throw new ApiError(
      'forbidden',
      "From a sandboxed frame (Origin: null) the checkout's page (eventSourceUrl) must be on the store's domain or one of the key's extra origins",
      { field: 'eventSourceUrl', reason: 'origin_not_allowed' },
    );
  }
}

/** The connection's address as the visitor's (an IPv4-mapped IPv6 one as IPv4); undefined when it is none. */
function visitorAddress(ip: string): string | undefined {
  const bare = ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
  return isIP(bare) === 0 ? undefined : bare;
}

export function conversionOf(input: CheckoutInput, ip: string): ConversionInput {
  const { storeId, orderId, ...rest } = input;
  const address = visitorAddress(ip);
  return {
    ...rest,
    storeId,
    eventType: 'Purchase',
    orderId: shopifyOrderId(orderId),
    ...(address !== undefined && { ipAddress: address }),
  };
}

/**
 * Records the pixel's Purchase, or — when the order is already recorded (its webhook came first,
 * or the pixel's event is sent again) — fills in the browser evidence the conversion lacks and
 * re-attributes it when that evidence is stronger. Never a second conversion; never the pixel's
 * money over the webhook's.
 */
export async function recordPixelCheckout(
  database: Database,
  tenant: Tenant,
  input: CheckoutInput,
  visitorIp: string,
  now = Date.now(),
  forwarding?: Forwarder,
): Promise<CheckoutResult> {
  const conversion = conversionOf(input, visitorIp);
  const store = await requireActiveStore(database.read, tenant, conversion.storeId);
  const { result, delivered } = await recordConversion(database, tenant, conversion, now, forwarding, 'pixel');
  if (!result.duplicate) {
    if (delivered) result.capiSent = await delivered;
    return { ...result, reattributed: false };
  }
  const merged = await fillEvidence(database, tenant, result.conversionId, conversion);
  const reattributed = merged.filled.length > 0 && (await reattributeIfStronger(database, store, tenant, merged.row));
  const row = reattributed
    ? ((await findConversion(database.read, tenant.accountId, tenant.livemode ? 1 : 0, result.conversionId)) ?? merged.row)
    : merged.row;
  const { attributedTo: _previous, ...rest } = result;
  return {
    ...rest,
    attributed: row.attributed === 1,
    ...attributedTo(row),
    filled: merged.filled,
    reattributed,
  };
}
