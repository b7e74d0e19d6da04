import { createHash, X509Certificate } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium } from 'playwright-core';

/** Debian's Chromium (architecture.md: browsers cannot be downloaded here). */
export const CHROMIUM = '/usr/bin/chromium';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** Screenshots of every page, kept by each run (git-ignored). */
export const ARTIFACTS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'artifacts');
/** The screenshots docs/dashboard.md shows, refreshed by a run with UPDATE_DASHBOARD_SCREENSHOTS=1. */
export const DOCS_SCREENSHOTS = path.join(ROOT, 'docs', 'dashboard');

/**
 * The base64 SHA-256 of the certificate's public key (SubjectPublicKeyInfo). Chromium is told
 * to accept that one key, the server's own: any other certificate is refused as usual, so the
 * browser does not stop verifying (no --ignore-certificate-errors).
 */
export function spkiHash(certificatePem: Buffer | string): string {
  const spki = new X509Certificate(certificatePem).publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(spki).digest('base64');
}

export function launchChromium(certificatePem: Buffer): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', `--ignore-certificate-errors-spki-list=${spkiHash(certificatePem)}`],
  });
}
