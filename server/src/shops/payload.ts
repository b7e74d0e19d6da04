import { createHmac, timingSafeEqual } from 'node:crypto';
import { isSafeNumber, parse } from 'lossless-json';
import { ApiError } from '../http/errors.js';
import { CLICK_ID_KINDS, type ClickIdKind, isValidClickId } from '../tracking/click-ids.js';

/**
 * What the shop webhook mappers (shopify.ts, woocommerce.ts) share: the signature check, a JSON
 * parser that keeps big integer ids exact, and readers of loosely typed payload fields that
 * say which field is missing or wrong.
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

/**
 * JSON text → value, with every integer too large for a double kept as its exact decimal text
 * (Shopify's ids exceed 2^53: `JSON.parse` would round them).
 */
export function parsePayload(text: string): unknown {
  return parse(text, null, (value: string) => (isSafeNumber(value) || !/^-?\d+$/.test(value) ? Number(value) : value));
}

/** The payload does not carry what a conversion or refund needs: 422, naming the field. */
export function unmappable(
  field: string,
  message: string,
  reason: 'required_field_missing' | 'invalid_format' | 'out_of_range' = 'required_field_missing',
): ApiError {
  return new ApiError('unprocessable_payload', message, { field, reason });
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

/** A non-empty string field (trimmed), or undefined. */
export function textAt(value: unknown, key: string, maxLength = 256): string | undefined {
  const found = isObject(value) ? value[key] : undefined;
  if (typeof found !== 'string') return undefined;
  const text = found.trim();
  return text !== '' && text.length <= maxLength ? text : undefined;
}

/** An id as its exact decimal text (a number, a big integer kept as text, or a string of digits). */
export function idAt(value: unknown, key: string): string | undefined {
  const found = isObject(value) ? value[key] : undefined;
  if (typeof found === 'number') return Number.isSafeInteger(found) && found >= 0 ? String(found) : undefined;
  if (typeof found === 'string' && /^\d{1,40}$/.test(found)) return found;
  return undefined;
}

export function requireId(value: unknown, key: string, path = key): string {
  const id = idAt(value, key);
  if (id === undefined) throw unmappable(path, `${path} is missing or not an id`);
  return id;
}

/** A decimal amount as shops send it ("49.99", or a number), or undefined. */
export function amountAt(value: unknown, key: string): number | undefined {
  const found = isObject(value) ? value[key] : undefined;
  const text = typeof found === 'number' ? String(found) : typeof found === 'string' ? found.trim() : undefined;
  if (text === undefined || !/^-?\d{1,13}(\.\d{1,6})?$/.test(text)) return undefined;
  return Number(text);
}

export function requireAmount(value: unknown, key: string, path = key): number {
  const amount = amountAt(value, key);
  if (amount === undefined) throw unmappable(path, `${path} is missing or not a decimal amount`);
  if (amount < 0) throw unmappable(path, `${path} is negative`, 'out_of_range');
  return amount;
}

export function requireCurrency(value: unknown, key: string, path = key): string {
  const currency = textAt(value, key, 16);
  if (currency === undefined) throw unmappable(path, `${path} is missing`);
  return currency;
}

/** A date-time field normalized to ISO 8601 with an offset (WooCommerce's `_gmt` times have none: they are UTC). */
export function timeAt(value: unknown, key: string, utc = false): string | undefined {
  const text = textAt(value, key, 64);
  if (text === undefined) return undefined;
  if (utc && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/.test(text)) return `${text}Z`;
  return text;
}

/** Items of an array field (objects only). */
export function itemsAt(value: unknown, key: string): Json[] {
  const found = isObject(value) ? value[key] : undefined;
  return Array.isArray(found) ? found.filter(isObject) : [];
}

/** The valid click ids in a URL's query (a relative one too, like Shopify's `landing_site`). */
export function clickIdsInUrl(url: string | undefined): Partial<Record<ClickIdKind, string>> {
  if (!url) return {};
  let params: URLSearchParams;
  try {
    params = new URL(url, 'https://shop.invalid').searchParams;
  } catch {
    return {};
  }
  const ids: Partial<Record<ClickIdKind, string>> = {};
  for (const kind of CLICK_ID_KINDS) {
    const value = params.get(kind);
    // Malformed ids are the visitor's URL, not the shop's fault: left out, not a refusal.
    if (value && isValidClickId(value)) ids[kind] = value;
  }
  return ids;
}

/** A positive integer quantity, default 1. */
export function quantityAt(value: unknown, key: string): number {
  const found = isObject(value) ? value[key] : undefined;
  return typeof found === 'number' && Number.isSafeInteger(found) && found >= 1 ? found : 1;
}
