// Node 18 only: it has no global Web Crypto without a flag. Loaded by a dynamic import, and
// `false` in package.json "browser", so browser bundles never see node:crypto.
import { randomUUID } from 'node:crypto';

export function nodeRandomId(): string {
  return randomUUID();
}
