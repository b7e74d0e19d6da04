import { CLICK_ID_KINDS, OTHER_CLICK_ID_KINDS } from '../click-channel.js';
import { ApiError, fieldError } from '../http/errors.js';

/** The click ids a click may carry (api.md §8, §12), in the order a duplicate is looked up by; click-channel.ts lists them. */
export { CLICK_ID_KINDS, OTHER_CLICK_ID_KINDS };
export type ClickIdKind = (typeof CLICK_ID_KINDS)[number];
export type OtherClickIdKind = (typeof OTHER_CLICK_ID_KINDS)[number];
export type ClickIds = Partial<Record<ClickIdKind, string>>;

const CLICK_ID = /^[A-Za-z0-9_.-]{1,500}$/;
/** Google's ids: a click on a Google ad carries one of these. */
export const GOOGLE_CLICK_ID_KINDS = ['gclid', 'gbraid', 'wbraid'] as const;

export function isValidClickId(value: string): boolean {
  return CLICK_ID.test(value);
}

/** Throws the contract's error for an id given in the body that is not 1–500 of [A-Za-z0-9_.-]. */
export function checkClickId(kind: ClickIdKind, value: string, field: string = kind): void {
  if (isValidClickId(value)) return;
  const reason = value.length > 500 ? 'out_of_range' : 'invalid_format';
  if (kind === 'fbclid') throw fieldError('invalid_fbclid', field, reason, `${field} has an invalid format`);
  throw fieldError('invalid_click_id', field, reason, `${field} must be 1–500 characters of A–Z, a–z, 0–9, "_", ".", "-"`);
}

/**
 * The click ids of a click: those of the body, and for each kind the body left out, the one in
 * the landing page's query (ignored there when malformed: the page is the visitor's, not the
 * caller's). At least one is required.
 */
export function clickIdsOf(body: ClickIds, params: URLSearchParams): ClickIds {
  const ids: ClickIds = {};
  for (const kind of CLICK_ID_KINDS) {
    const given = body[kind];
    if (given !== undefined && given !== null && given !== '') {
      checkClickId(kind, given);
      ids[kind] = given;
      continue;
    }
    const fromPage = params.get(kind);
    if (fromPage && isValidClickId(fromPage)) ids[kind] = fromPage;
  }
  if (Object.keys(ids).length === 0) {
    throw new ApiError('missing_required_field', `At least one click id is required: ${CLICK_ID_KINDS.join(', ')}`, {
      field: 'fbclid',
      reason: 'required_field_missing',
      anyOf: [...CLICK_ID_KINDS],
    });
  }
  return ids;
}

/** The value kept in a click's `fbclid` column when it has no fbclid (migration 0010). */
export function keyOfClickWithoutFbclid(ids: ClickIds): string {
  for (const kind of OTHER_CLICK_ID_KINDS) {
    const value = ids[kind];
    if (value) return `${kind}:${value}`;
  }
  throw new Error('a click has at least one id');
}

export { realFbclid } from '../click-channel.js';
