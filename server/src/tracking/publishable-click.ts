import { isIP } from 'node:net';
import { ApiError, fieldError } from '../http/errors.js';
import type { ClickInput } from './clicks.js';

// A click recorded with a publishable key (accounts/publishable.ts; api.md §6).

/**
 * The tag's snippet names no store (api.md §6): a publishable key's click is for the key's
 * store, filled in before the body is validated when the body leaves `storeId` out.
 */
export function fillClickStore(body: unknown, storeId: string): void {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return;
  const fields = body as Record<string, unknown>;
  if (fields.storeId === undefined) fields.storeId = storeId;
}

/** A publishable key's event is for the key's own store (another id is refused, whether or not it exists). */
export function requireKeyStore(storeId: string, keyStoreId: string): void {
  if (storeId !== keyStoreId) {
    throw new ApiError(
      'forbidden',
      'A publishable key records events for its own store only; leave storeId out or send its own',
      {
        field: 'storeId',
        reason: 'not_allowed',
      },
    );
  }
}

/**
 * A click sent with a publishable key: only for the key's own store (another id is refused,
 * whether or not it exists, so nothing is revealed about it), and with the visitor's IP as the
 * connection shows it — a page cannot claim another address.
 */
export function publishableClick(input: ClickInput, keyStoreId: string, visitorIp: string): ClickInput {
  requireKeyStore(input.storeId, keyStoreId);
  if (input.ipAddress !== undefined) {
    throw fieldError(
      'invalid_request',
      'ipAddress',
      'not_allowed',
      'With a publishable key the IP address is taken from the connection; leave ipAddress out',
    );
  }
  const ip = visitorIp.startsWith('::ffff:') && isIP(visitorIp.slice(7)) === 4 ? visitorIp.slice(7) : visitorIp;
  return isIP(ip) === 0 ? input : { ...input, ipAddress: ip };
}
