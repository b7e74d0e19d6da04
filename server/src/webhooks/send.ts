import type { lookup as dnsLookup } from 'node:dns';
import https from 'node:https';
import { guardedLookup, isPrivateAddress, literalAddress } from './address.js';

/** A 2xx within this is a success (api.md §9); shorter for an endpoint that keeps timing out (fair-share.ts). */
export const DELIVERY_TIMEOUT_MS = 15_000;

export interface SendOptions {
  allowPrivate: boolean;
  timeoutMs?: number;
  /** Extra trusted CAs for this request (tests); NODE_EXTRA_CA_CERTS applies to every request anyway. */
  ca?: string | Buffer | Array<string | Buffer>;
  /** The resolver behind the connect-time check (tests stand in for DNS). */
  resolve?: typeof dnsLookup;
}

export interface SendResult {
  ok: boolean;
  responseCode: number | null;
  error: string | null;
  durationMs: number;
  /** No answer within the timeout (counted towards a shorter one: fair-share.ts). */
  timedOut: boolean;
}

const USER_AGENT = 'Waytrack-Webhooks/1.0';

/**
 * POSTs one signed message. Never throws: every outcome is a result to record. Private
 * addresses are refused before connecting (a literal) or at connect time (a name), unless
 * allowed. Redirects are not followed (a 3xx is a failure, as Standard Webhooks senders do).
 */
export async function postMessage(
  url: string,
  headers: Record<string, string>,
  body: string,
  options: SendOptions,
): Promise<SendResult> {
  const started = Date.now();
  const result = (ok: boolean, responseCode: number | null, error: string | null, timedOut = false): SendResult => ({
    ok,
    responseCode,
    error,
    durationMs: Date.now() - started,
    timedOut,
  });
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return result(false, null, 'The endpoint URL is not a URL');
  }
  if (target.protocol !== 'https:') return result(false, null, 'The endpoint URL is not https');
  const literal = literalAddress(target.hostname);
  if (!options.allowPrivate && literal !== undefined && isPrivateAddress(literal)) {
    return result(false, null, `Refused: ${literal} is a private address`);
  }
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    const finish = (value: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(value);
    };
    const request = https.request(
      target,
      {
        method: 'POST',
        agent: false,
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'user-agent': USER_AGENT,
        },
        ...(options.ca !== undefined && { ca: options.ca }),
        ...(!options.allowPrivate && { lookup: guardedLookup(options.resolve) }),
        ...(options.allowPrivate && options.resolve && { lookup: options.resolve }),
      },
      (response) => {
        const code = response.statusCode ?? 0;
        // The answer's body is not kept; reading it lets the connection close cleanly.
        response.resume();
        response.on('end', () =>
          finish(code >= 200 && code < 300 ? result(true, code, null) : result(false, code, `The endpoint answered ${code}`)),
        );
        response.on('error', () => finish(result(false, code, `The endpoint answered ${code}, then the connection broke`)));
      },
    );
    const timer = setTimeout(() => {
      finish(result(false, null, `No answer within ${describeMs(timeoutMs)}`, true));
      request.destroy();
    }, timeoutMs);
    request.on('error', (error: NodeJS.ErrnoException) => {
      const reason =
        error.code === 'EPRIVATEADDRESS' ? `Refused: ${error.message}` : `${error.code ?? 'Error'}: ${error.message}`;
      finish(result(false, null, reason));
    });
    request.end(body);
  });
}

/** "15 s", "2 s"; under a second (tests' timeouts) in ms, so the recorded reason names the real one. */
function describeMs(ms: number): string {
  return ms >= 1000 && ms % 1000 === 0 ? `${ms / 1000} s` : ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${ms} ms`;
}
