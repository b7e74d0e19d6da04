import { createHmac, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import { ApiError } from '../http/errors.js';
import { exactNumber } from '../http/json-reader.js';
import {
  type Decimal,
  decimalExceeds,
  decimalToMinor,
  fromMinorUnits,
  MAX_AMOUNT,
  normalizeCurrency,
  parseDecimal,
} from '../money.js';
import { CLICK_ID_KINDS, type ClickIdKind, isValidClickId } from '../tracking/click-ids.js';
import { parseEventTime } from '../tracking/input.js';

/**
 * What the shop webhook mappers (shopify.ts, woocommerce.ts) share: the signature check, and
 * readers of loosely typed payload fields. What a conversion or refund cannot exist without
 * (an id, a total, a currency) refuses the payload (422, naming the field); anything else that
 * cannot be used is left out with a warning in the answer (`Warnings`), never a refusal.
 */

/**
 * Whether `signature` is the base64 HMAC-SHA256 of `raw` keyed with `secret` (the scheme of
 * Shopify's `X-Shopify-Hmac-Sha256` and WooCommerce's `X-WC-Webhook-Signature`), compared in
 * constant time over the decoded bytes.
 */
export function signatureMatches(raw: Buffer, signature: string, secret: string): boolean {
  const expected = createHmac('sha256', secret).update(raw).digest();
  // Strict base64 of exactly 32 bytes: 44 characters ending in one `=`.
  if (!/^[A-Za-z0-9+/]{43}=$/.test(signature.trim())) return false;
  const given = Buffer.from(signature.trim(), 'base64');
  // Canonical base64 only: the last character's two unused bits must be zero, not anything.
  if (given.toString('base64') !== signature.trim()) return false;
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The payload does not carry what a conversion or refund needs: 422, naming the field. */
export function unmappable(
  field: string,
  message: string,
  reason: 'required_field_missing' | 'invalid_format' | 'out_of_range' = 'required_field_missing',
  more: Record<string, unknown> = {},
): ApiError {
  return new ApiError('unprocessable_payload', message, { field, reason, ...more });
}

/** Optional data the payload had but that could not be used: left out, and said so in the answer. */
export interface PayloadWarning {
  /** The payload's field, as the shop names it (`customer_ip_address`, `refunds[0].date`). */
  field: string;
  reason: 'invalid_format' | 'out_of_range';
  message: string;
}

/** Collects a delivery's warnings. Messages name fields, never their values (which may be customer data). */
export class Warnings {
  readonly list: PayloadWarning[] = [];
  add(field: string, reason: PayloadWarning['reason'], message: string): undefined {
    this.list.push({ field, reason, message });
    return undefined;
  }
}

export type Json = Record<string, unknown>;

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An object field, or undefined. */
export function objectAt(value: unknown, key: string): Json | undefined {
  const found = isObject(value) ? value[key] : undefined;
  return isObject(found) ? found : undefined;
}

/** A non-empty string field (trimmed), or undefined; one longer than `maxLength` is left out with a warning when `warn` is given. */
export function textAt(
  value: unknown,
  key: string,
  maxLength = 256,
  warn?: { warnings: Warnings; path: string },
): string | undefined {
  const found = isObject(value) ? value[key] : undefined;
  if (typeof found !== 'string') return undefined;
  const text = found.trim();
  if (text === '') return undefined;
  if (text.length > maxLength) {
    return warn?.warnings.add(warn.path, 'out_of_range', `${warn.path} is longer than ${maxLength} characters: left out`);
  }
  return text;
}

/** An id as its exact decimal text (a number — kept digit for digit by the JSON reader above 2^53 — or a string of digits). */
export function idAt(value: unknown, key: string): string | undefined {
  const found = isObject(value) ? value[key] : undefined;
  if (typeof found === 'number') {
    const exact = exactNumber(value, key);
    if (exact !== undefined) return /^\d{1,40}$/.test(exact) ? exact : undefined;
    return Number.isSafeInteger(found) && found >= 0 ? String(found) : undefined;
  }
  if (typeof found === 'string' && /^\d{1,40}$/.test(found)) return found;
  return undefined;
}

export function requireId(value: unknown, key: string, path = key): string {
  const id = idAt(value, key);
  if (id === undefined) throw unmappable(path, `${path} is missing or not an id`);
  return id;
}

/** A decimal amount exactly as the shop wrote it ("49.99", or a JSON number by its text), or undefined. */
export function decimalAt(value: unknown, key: string): Decimal | undefined {
  const found = isObject(value) ? value[key] : undefined;
  if (typeof found === 'number') return parseDecimal(exactNumber(value, key) ?? String(found)) ?? undefined;
  if (typeof found === 'string') return parseDecimal(found) ?? undefined;
  return undefined;
}

/**
 * A decimal rounded exactly to the currency's minor units (half away from zero), as the number
 * the domain takes: it prints as that decimal, so money.ts reads back the same minor units.
 */
export function exactAmount(amount: Decimal, currency: string): number {
  return fromMinorUnits(Number(decimalToMinor(amount, currency)), currency);
}

/**
 * A required amount: present, a decimal, 0 ≤ amount ≤ 1e12 (the API's range, compared on the
 * decimal as written), in `currency` (normalized). Otherwise 422 naming `path`.
 */
export function requireAmount(value: unknown, key: string, currency: string, path = key): number {
  const found = isObject(value) ? value[key] : undefined;
  const amount = decimalAt(value, key);
  if (amount === undefined) {
    throw found === undefined || found === null || found === ''
      ? unmappable(path, `${path} is missing`)
      : unmappable(path, `${path} is not a decimal amount`, 'invalid_format');
  }
  if (amount.negative && amount.digits > 0n) throw unmappable(path, `${path} is negative`, 'out_of_range');
  if (decimalExceeds(amount, MAX_AMOUNT)) {
    throw unmappable(path, `${path} is over 1e12, the largest amount Waytrack records`, 'out_of_range');
  }
  return exactAmount(amount, currency);
}

/** The ISO 4217 code (upper case) a conversion or refund cannot be recorded without; else 422 naming `path`. */
export function requireCurrency(value: unknown, key: string, path = key): string {
  const given = textAt(value, key, 16);
  if (given === undefined) throw unmappable(path, `${path} is missing`);
  const currency = normalizeCurrency(given);
  if (!currency) {
    throw unmappable(path, `${path} is not an ISO 4217 currency code`, 'invalid_format', { code: 'invalid_currency' });
  }
  return currency;
}

/**
 * A date-time field as ISO 8601 with an offset (WooCommerce's `_gmt` times have none: they are
 * UTC), when it is one the API takes (tracking/input.ts parseEventTime: valid, at most 5
 * minutes ahead); otherwise left out with a warning, and the caller's next choice applies.
 */
export function timeAt(value: unknown, key: string, warnings: Warnings, now: number, utc = false): string | undefined {
  const found = textAt(value, key, 64);
  if (found === undefined) return undefined;
  const text = utc && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/.test(found) ? `${found}Z` : found;
  try {
    parseEventTime(key, text, now);
    return text;
  } catch (error) {
    const future = error instanceof ApiError && error.details?.reason === 'out_of_range';
    return future
      ? warnings.add(key, 'out_of_range', `${key} is more than 5 minutes in the future: not used as the time`)
      : warnings.add(key, 'invalid_format', `${key} is not an ISO 8601 date-time: not used as the time`);
  }
}

/**
 * The buyer's IP address. A list (as proxies write `X-Forwarded-For`: the client first) gives its
 * first address, with a warning; anything else that is not an address (WooCommerce's "unknown")
 * is left out with a warning.
 */
export function ipAt(value: unknown, key: string, warnings: Warnings, path = key): string | undefined {
  const given = textAt(value, key, 1024);
  if (given === undefined) return undefined;
  if (isIP(given) !== 0) return given;
  const first = given.split(',')[0]?.trim() ?? '';
  if (given.includes(',') && isIP(first) !== 0) {
    warnings.add(path, 'invalid_format', `${path} is a list of addresses: its first one is used, as the buyer's`);
    return first;
  }
  return warnings.add(path, 'invalid_format', `${path} is not an IPv4 or IPv6 address: left out`);
}

/** Items of an array field (objects only). */
export function itemsAt(value: unknown, key: string): Json[] {
  const found = isObject(value) ? value[key] : undefined;
  return Array.isArray(found) ? found.filter(isObject) : [];
}

/** The click ids in a URL's query (a relative one too, like Shopify's `landing_site`); malformed ones left out with a warning. */
export function clickIdsInUrl(url: string | undefined, warnings: Warnings, field: string): Partial<Record<ClickIdKind, string>> {
  if (!url) return {};
  let params: URLSearchParams;
  try {
    params = new URL(url, 'https://shop.invalid').searchParams;
  } catch {
    return warnings.add(field, 'invalid_format', `${field} is not a URL: no click id read from it`) ?? {};
  }
  const ids: Partial<Record<ClickIdKind, string>> = {};
  for (const kind of CLICK_ID_KINDS) {
    const value = params.get(kind);
    if (!value) continue;
    // The visitor's URL, not the shop's fault: left out, not a refusal.
    if (isValidClickId(value)) ids[kind] = value;
    else
      warnings.add(
        field,
        'invalid_format',
        `${field}'s ${kind} is not 1–500 characters of A–Z, a–z, 0–9, "_", ".", "-": left out`,
      );
  }
  return ids;
}

/** A positive integer quantity, default 1. */
export function quantityAt(value: unknown, key: string): number {
  const found = isObject(value) ? value[key] : undefined;
  return typeof found === 'number' && Number.isSafeInteger(found) && found >= 1 ? found : 1;
}

/** A line item's price when it is one the API takes (0 ≤ price ≤ 1e12); otherwise left out with a warning. */
export function priceAt(item: Json, key: string, currency: string, warnings: Warnings, path: string): number | undefined {
  if (item[key] === undefined || item[key] === null || item[key] === '') return undefined;
  const price = decimalAt(item, key);
  if (price === undefined || (price.negative && price.digits > 0n) || decimalExceeds(price, MAX_AMOUNT)) {
    return warnings.add(path, 'invalid_format', `${path} is not an amount from 0 to 1e12: the product is kept without its price`);
  }
  return exactAmount(price, currency);
}
