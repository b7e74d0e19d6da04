/**
 * Messages that say whose side failed (api.md §12). A request that never got an answer failed on
 * this server's side — its DNS, outbound network, proxy or trusted certificates — so the message
 * names this server and the host it could not reach, not the platform. An answer refusing the
 * credentials names the credential to renew and where the platform's UI makes a new one.
 */

const DNS = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'EAI_NODATA']);
const CONNECT = new Set([
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EHOSTDOWN',
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
]);
/** The connection was made, then closed without an answer: a proxy, a middlebox, or the platform's side. */
const DROPPED = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);
const TLS = /^(CERT_|ERR_TLS_|ERR_SSL_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH|ERR_OSSL_)/;
const CHECK = 'check outbound network, DNS, proxy';

function hostOf(url: string): { host: string; port: string } {
  try {
    const parsed = new URL(url);
    const port = parsed.port || (parsed.protocol === 'https:' ? '443' : '80');
    return { host: parsed.hostname, port };
  } catch {
    return { host: url, port: '' };
  }
}

/** The error's code, from fetch's cause (undici wraps the socket's error) or the error itself. */
function codeOf(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The innermost cause's message (fetch's own is only "fetch failed"). */
function deepestMessage(error: unknown): string {
  let message = String(error);
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current && typeof current === 'object'; depth++) {
    const text = (current as { message?: unknown }).message;
    if (typeof text === 'string' && text) message = text;
    current = (current as { cause?: unknown }).cause;
  }
  return message;
}

/**
 * A fetch that threw, as a message naming this server and the host: DNS, connect, TLS and
 * timeout each with what to check. `label` is the platform (said to be not at fault).
 */
export function networkErrorMessage(error: unknown, url: string, label: string, timeoutMs: number): string {
  const { host, port } = hostOf(url);
  const name = (error as Error | undefined)?.name;
  const code = codeOf(error);
  if (name === 'TimeoutError' || name === 'AbortError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return `This server got no answer from ${host} within ${timeoutMs} ms (timeout): ${CHECK}; if they work, ${label} is slow to answer`;
  }
  if (code && DNS.has(code)) return `This server could not resolve ${host} (${code}): ${CHECK} (not an error of ${label})`;
  if (code && TLS.test(code)) {
    return `This server could not make a trusted TLS connection to ${host} (${code}): check its CA certificates (NODE_EXTRA_CA_CERTS) and any TLS-inspecting proxy (not an error of ${label})`;
  }
  if (code && CONNECT.has(code)) {
    return `This server could not connect to ${host}:${port} (${code}): ${CHECK}, firewall (not an error of ${label})`;
  }
  if (code && DROPPED.has(code)) {
    return `The connection from this server to ${host}:${port} was closed without an answer (${code}): ${CHECK}; if they work, ${label} dropped it`;
  }
  const detail = code ?? deepestMessage(error);
  return `This server could not reach ${host} (${detail}): ${CHECK} (not an error of ${label})`;
}

/** Where each platform's credential is renewed, for the message of an answer refusing it. */
export const CREDENTIAL_HINTS = {
  meta: 'renew the Conversions API access token (Meta Events Manager → your pixel → Settings → Conversions API → Generate access token) and set it as the meta destination’s accessToken',
  tiktok:
    'renew the Events API access token (TikTok Events Manager → your pixel → Settings → Events API → Generate Access Token) and set it as the tiktok destination’s accessToken',
  microsoft:
    'renew the Conversions API access token (Microsoft Advertising → Tools → UET tag → your tag → Use Conversions API) and set it as the microsoft destination’s accessToken',
} as const;

/** What a destination check answers (api.md §12, POST /v1/stores/:id/destinations/:kind/test). */
export interface CheckResult {
  ok: boolean;
  message: string;
  /** The platform's own words, when it answered with an error. */
  platformMessage?: string;
}
