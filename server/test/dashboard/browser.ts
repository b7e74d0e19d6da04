import { execFileSync } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium } from 'playwright-core';

/** Debian's Chromium (architecture.md: browsers cannot be downloaded here). */
export const CHROMIUM = '/usr/bin/chromium';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const DASHBOARD = path.join(ROOT, 'dashboard');

/** Screenshots of every page, kept by each run (git-ignored). */
export const ARTIFACTS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'artifacts');
/** The screenshots docs/dashboard.md shows, refreshed by a run with UPDATE_DASHBOARD_SCREENSHOTS=1. */
export const DOCS_SCREENSHOTS = path.join(ROOT, 'docs', 'dashboard');

function newestChange(entry: string): number {
  const stat = statSync(entry);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(entry).map((name) => newestChange(path.join(entry, name))));
}

/**
 * Builds dashboard/dist unless it is newer than every source. Test files of both engines run
 * at once: a lock directory (mkdir is atomic) lets one build while the others wait, then find
 * it up to date — no server ever serves a dist/ being rewritten.
 */
export async function buildDashboard(): Promise<void> {
  const lock = path.join(DASHBOARD, '.build-lock');
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // A lock older than any build is a leftover of a killed run.
      if (existsSync(lock) && Date.now() - statSync(lock).mtimeMs > 120_000) rmSync(lock, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error('dashboard build lock held for 2 minutes');
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  try {
    const built = path.join(DASHBOARD, 'dist', 'index.html');
    const sources = ['src', 'index.html', 'vite.config.ts', 'package.json', 'tsconfig.json'].map((p) => path.join(DASHBOARD, p));
    if (existsSync(built) && statSync(built).mtimeMs > Math.max(...sources.map(newestChange))) return;
    execFileSync('npm', ['run', 'build', '--workspace', 'dashboard'], { cwd: ROOT, stdio: 'pipe', timeout: 120_000 });
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

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
