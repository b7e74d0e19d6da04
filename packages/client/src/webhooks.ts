import { parseJsonExact } from './json.js';

/** The request is not a webhook Waytrack signed with this secret, or it is too old or too new. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

/** An event Waytrack POSTs to a webhook endpoint (`conversion.attributed`, `refund.recorded`, …). */
export interface WebhookEvent<T = Record<string, unknown>> {
  type: string;
  /** When the event happened (ISO 8601). */
  timestamp: string;
  data: T;
}

/** Request headers as Node (`req.headers`), the Fetch API (`Headers`) or a plain object give them. */
export type WebhookHeaders = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** How far `webhook-timestamp` may be from now, either way, in seconds (default 300, as Standard Webhooks says). */
  toleranceSeconds?: number;
}

const SECRET_PREFIX = 'whsec_';
const DEFAULT_TOLERANCE_SECONDS = 5 * 60;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const NAMES = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

function headerValues(headers: WebhookHeaders): Record<(typeof NAMES)[number], string> {
  const read =
    typeof headers.get === 'function'
      ? (name: string) => (headers as { get(name: string): string | null }).get(name) ?? ''
      : (() => {
          const lower = new Map(
            Object.entries(headers as Record<string, string | string[] | undefined>).map(([k, v]) => [
              k.toLowerCase(),
              Array.isArray(v) ? v.join(' ') : (v ?? ''),
            ]),
          );
          return (name: string) => lower.get(name) ?? '';
        })();
  const out = { 'webhook-id': '', 'webhook-timestamp': '', 'webhook-signature': '' };
  for (const name of NAMES) {
    out[name] = read(name);
    if (out[name] === '') throw new WebhookVerificationError(`missing ${name} header`);
  }
  return out;
}

function base64Bytes(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!BASE64.test(text) || text.length % 4 === 1) return undefined;
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

/**
 * The key of a `whsec_…` secret: the base64-decoded part after the prefix (a bare base64 secret
 * is accepted too, as the Standard Webhooks libraries do). A secret that is not one is the
 * receiver's configuration at fault, not the request: a TypeError, not a verification error.
 */
function keyOf(secret: string): Uint8Array<ArrayBuffer> {
  const key = base64Bytes(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret);
  if (!key || key.length === 0)
    throw new TypeError('the webhook secret is not a whsec_… secret (the one shown when the endpoint was made)');
  return key;
}

/** What verifyWebhook needs of Web Crypto: both DOM's SubtleCrypto and node:crypto's webcrypto.subtle fit. */
export interface HmacSubtle {
  importKey(
    format: 'raw',
    key: Uint8Array<ArrayBuffer>,
    algorithm: { name: 'HMAC'; hash: 'SHA-256' },
    extractable: false,
    usages: ['verify'],
  ): Promise<object>;
  verify(algorithm: 'HMAC', key: object, signature: Uint8Array<ArrayBuffer>, data: Uint8Array<ArrayBuffer>): Promise<boolean>;
}

/** Web Crypto where present (browsers, Deno, Bun, workers, Node ≥ 19), else node:crypto's (Node 18). */
async function subtleCrypto(): Promise<HmacSubtle> {
  const subtle = globalThis.crypto?.subtle;
  if (subtle) return subtle;
  // A browser bundle maps the module to an empty one ("browser" in package.json).
  const node: Partial<typeof import('./node/web-crypto.js')> | undefined = await import('./node/web-crypto.js').catch(
    () => undefined,
  );
  if (typeof node?.nodeSubtle === 'function') return node.nodeSubtle();
  throw new Error('verifyWebhook needs Web Crypto (crypto.subtle), which browsers give only to secure (https) pages');
}

/**
 * Checks that a webhook request came from Waytrack (Standard Webhooks: `webhook-id`,
 * `webhook-timestamp` within 5 minutes, `webhook-signature` holding a `v1` HMAC-SHA256 of
 * "id.timestamp.body" keyed with the endpoint's `whsec_…` secret; any one of several
 * space-separated signatures may match) and resolves to the parsed event, its integers beyond
 * 2^53 kept as exact text (`parseJsonExact`). Pass the body exactly as received (the raw bytes
 * or text, not re-serialized JSON). Rejects with `WebhookVerificationError` otherwise.
 * Deduplicate by `webhook-id`: a message may come again. Uses Web Crypto (or node:crypto on
 * Node 18), hence a Promise.
 */
export async function verifyWebhook<T = Record<string, unknown>>(
  payload: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyWebhookOptions = {},
): Promise<WebhookEvent<T>> {
  const key = keyOf(secret);
  const { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signatures } = headerValues(headers);
  if (!/^\d{1,15}$/.test(timestamp)) throw new WebhookVerificationError('webhook-timestamp is not a number of seconds');
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const age = Math.floor(Date.now() / 1000) - Number(timestamp);
  if (age > tolerance) throw new WebhookVerificationError('webhook-timestamp is too old');
  if (-age > tolerance) throw new WebhookVerificationError('webhook-timestamp is too new');

  const encoder = new TextEncoder();
  const body = typeof payload === 'string' ? encoder.encode(payload) : payload;
  // The exact bytes received are what was signed: a Uint8Array body is never decoded and re-encoded.
  const prefix = encoder.encode(`${id}.${timestamp}.`);
  const signed = new Uint8Array(prefix.length + body.length);
  signed.set(prefix);
  signed.set(body, prefix.length);

  const subtle = await subtleCrypto();
  const hmacKey = await subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  for (const candidate of signatures.split(' ')) {
    const [version, encoded = ''] = candidate.split(',', 2);
    const signature = version === 'v1' ? base64Bytes(encoded) : undefined;
    // subtle.verify compares in constant time.
    if (signature?.length === 32 && (await subtle.verify('HMAC', hmacKey, signature, signed))) {
      try {
        return parseJsonExact<WebhookEvent<T>>(new TextDecoder().decode(body));
      } catch {
        throw new WebhookVerificationError('the body is not JSON');
      }
    }
  }
  throw new WebhookVerificationError('no matching signature');
}
