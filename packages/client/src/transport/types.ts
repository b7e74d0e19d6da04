/** One HTTP exchange as the client sees it, whatever carries it (fetch, node:https, the caller's fetch). */
export interface TransportRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** Aborts the exchange: the attempt's timeout or the caller's signal. */
  signal: AbortSignal;
}

/** A whole response: status, headers and the body read to the end (so the timeout covers it). */
export interface TransportResponse {
  status: number;
  header(name: string): string | null;
  body: string;
}

/** Sends one request. Rejects only when no response arrived (network, TLS, abort). */
export interface Transport {
  send(request: TransportRequest): Promise<TransportResponse>;
}

/** The part of the WHATWG `fetch` the client uses; global `fetch` and undici's `fetch` fit it. */
export type FetchLike = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string; signal: AbortSignal },
) => Promise<{ status: number; headers: { get(name: string): string | null }; text(): Promise<string> }>;
