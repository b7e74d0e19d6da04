// Node 18 only: it has no global Web Crypto without a flag. Loaded by a dynamic import, and
// `false` in package.json "browser", so browser bundles never see node:crypto.
import { webcrypto } from 'node:crypto';

// Typed by what it returns: webhooks.ts checks it fits its HmacSubtle (no import back, no circle).
export function nodeSubtle() {
  return webcrypto.subtle;
}
