import { WaytrackConnectionError } from './errors.js';
import type { Transport, TransportRequest, TransportResponse } from './transport/types.js';

/** TLS verification failures (Node's codes): the same answer every time, so never retried. */
const CERTIFICATE_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** The error and its causes, outermost first (fetch wraps the socket's error in `cause`). */
function chain(error: unknown): unknown[] {
  const list: unknown[] = [];
  for (let e = error; e !== undefined && e !== null && list.length < 10; e = (e as { cause?: unknown }).cause) list.push(e);
  return list;
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** The most specific message of the chain ("connect ECONNREFUSED 127.0.0.1:8443" rather than "fetch failed"). */
function describe(error: unknown): string {
  const messages = chain(error)
    .map((e) => (e instanceof Error ? e.message || codeOf(e) : String(e)))
    .filter((m): m is string => Boolean(m));
  return messages.at(-1) ?? 'unknown network error';
}

/** True when a connection error is an untrusted or invalid certificate, which no retry can fix. */
export function isCertificateError(error: WaytrackConnectionError): boolean {
  return chain(error.cause).some((e) => CERTIFICATE_CODES.has(codeOf(e) ?? ''));
}

/**
 * One attempt, bounded by `timeoutMs` (headers and body). Resolves with any HTTP response;
 * rejects with WaytrackConnectionError when none arrived, or with the caller's abort reason.
 */
export async function sendOnce(
  transport: Transport,
  request: Omit<TransportRequest, 'signal'>,
  timeoutMs: number,
  callerSignal?: AbortSignal,
): Promise<TransportResponse> {
  callerSignal?.throwIfAborted();
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error(`timed out after ${timeoutMs} ms`));
  }, timeoutMs);
  const onCallerAbort = () => controller.abort(callerSignal?.reason);
  callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
  try {
    return await transport.send({ ...request, signal: controller.signal });
  } catch (error) {
    if (callerSignal?.aborted) throw callerSignal.reason;
    const origin = new URL(request.url).origin;
    if (timedOut) {
      throw new WaytrackConnectionError(`No response from Waytrack at ${origin} within ${timeoutMs} ms`, {
        cause: error,
        timedOut: true,
      });
    }
    throw new WaytrackConnectionError(`Could not reach Waytrack at ${origin}: ${describe(error)}`, { cause: error });
  } finally {
    clearTimeout(timer);
    callerSignal?.removeEventListener('abort', onCallerAbort);
  }
}
