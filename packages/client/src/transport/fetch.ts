import type { FetchLike, Transport } from './types.js';

/** The default transport: global `fetch` (Node ≥ 18, browsers), or the one the caller passed. */
export function fetchTransport(fetchImpl: FetchLike): Transport {
  return {
    async send(request) {
      const response = await fetchImpl(request.url, {
        method: request.method,
        headers: request.headers,
        body: request.body,
        signal: request.signal,
      });
      const body = await response.text();
      return { status: response.status, header: (name) => response.headers.get(name), body };
    },
  };
}
