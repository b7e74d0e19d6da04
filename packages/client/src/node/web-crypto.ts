// Node 18 only: it has no global Web Crypto without a flag. Loaded by a dynamic import, and
// `false` in package.json "browser", so browser bundles never see node:crypto.
import { webcrypto } from 'node:crypto';
import type { HmacSubtle } from '../webhooks.js';

export function nodeSubtle(): HmacSubtle {
  return webcrypto.subtle;
}
