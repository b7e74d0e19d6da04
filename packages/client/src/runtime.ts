import { VERSION } from './version.js';

/** Node (or a runtime that presents itself as Node): where `ca` works and User-Agent may be set. */
export function isNode(): boolean {
  return typeof process !== 'undefined' && typeof process.versions?.node === 'string';
}

/** `waytrack-node/<version>` in Node; null in browsers, which forbid setting User-Agent. */
export function userAgent(): string | null {
  return isNode() ? `waytrack-node/${VERSION}` : null;
}

/** A random UUID for Idempotency-Key: Web Crypto where present (browsers, Node ≥ 19), else node:crypto (Node 18). */
export async function randomId(): Promise<string> {
  const webCrypto = globalThis.crypto;
  if (typeof webCrypto?.randomUUID === 'function') return webCrypto.randomUUID();
  if (typeof webCrypto?.getRandomValues === 'function') return uuidFromBytes(webCrypto.getRandomValues(new Uint8Array(16)));
  return (await import('./node/random-id.js')).nodeRandomId();
}

/** RFC 9562 version 4 UUID from 16 random bytes (browsers on plain-HTTP pages lack randomUUID). */
function uuidFromBytes(bytes: Uint8Array): string {
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
