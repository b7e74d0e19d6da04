import { isNode } from '../runtime.js';
import { fetchTransport } from './fetch.js';
import type { FetchLike, Transport } from './types.js';

/**
 * Picks how requests travel, once per client: the caller's `fetch`; else, with `ca`, node:https
 * trusting it (Node only); else global `fetch`. Returned as a lazy getter because the node:https
 * transport is a dynamic import (it must stay out of browser bundles) and may read a CA file.
 */
export function chooseTransport(options: { fetch?: FetchLike; ca?: string | Uint8Array }): () => Promise<Transport> {
  const { fetch: custom, ca } = options;
  if (custom && ca !== undefined) {
    throw new TypeError('Waytrack: pass either `ca` or `fetch`, not both (configure trust in your own fetch)');
  }
  if (ca !== undefined) {
    if (!isNode()) throw new TypeError('Waytrack: `ca` works only in Node; browsers trust the certificates of the system');
    let transport: Promise<Transport> | undefined;
    return () => {
      transport ??= import('../node/https-transport.js').then((m) => m.nodeHttpsTransport(ca));
      return transport;
    };
  }
  const fetchImpl: FetchLike | undefined =
    custom ?? (typeof globalThis.fetch === 'function' ? (url, init) => globalThis.fetch(url, init) : undefined);
  if (!fetchImpl) throw new TypeError('Waytrack: no global fetch here (Node < 18?); pass the `fetch` option');
  const transport = Promise.resolve(fetchTransport(fetchImpl));
  return () => transport;
}
