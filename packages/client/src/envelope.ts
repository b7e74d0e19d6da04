import { type ErrorDetails, WaytrackError } from './errors.js';
import { parseRetryAfter } from './retry.js';
import type { TransportResponse } from './transport/types.js';

export type Outcome<T> = { ok: true; data: T } | { ok: false; error: WaytrackError; retryAfterMs: number | undefined };

interface EnvelopeBody {
  success?: unknown;
  data?: unknown;
  error?: { code?: unknown; message?: unknown; details?: unknown };
  meta?: { requestId?: unknown };
}

function parse(body: string): EnvelopeBody | undefined {
  try {
    const value: unknown = JSON.parse(body);
    return typeof value === 'object' && value !== null ? (value as EnvelopeBody) : undefined;
  } catch {
    return undefined;
  }
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/**
 * A response read as the API's envelope: `data` on success, else a WaytrackError carrying the
 * envelope's code, message, details and request id. Anything that is not an envelope (a proxy's
 * HTML error page, say) becomes a WaytrackError with code `invalid_response`.
 */
export function readEnvelope<T>(response: TransportResponse): Outcome<T> {
  const body = parse(response.body);
  const requestId = text(body?.meta?.requestId) ?? response.header('request-id');
  const success = response.status >= 200 && response.status < 300;
  if (success && body?.success === true && 'data' in body) return { ok: true, data: body.data as T };

  const envelopeError = body?.success === false ? body.error : undefined;
  const details = envelopeError?.details;
  const error = new WaytrackError({
    status: response.status,
    requestId,
    code: text(envelopeError?.code) ?? 'invalid_response',
    message:
      text(envelopeError?.message) ??
      `Unexpected response from Waytrack (HTTP ${response.status}${success ? ', not an API envelope' : ''})`,
    details: typeof details === 'object' && details !== null ? (details as ErrorDetails) : undefined,
  });
  return { ok: false, error, retryAfterMs: parseRetryAfter(response.header('retry-after')) };
}
