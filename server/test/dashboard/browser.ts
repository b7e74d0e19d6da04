import { createHash, X509Certificate } from 'node:crypto';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  type ConsoleMessage,
  chromium,
  type Locator,
  type Page,
} from 'playwright-core';
import { cli, type ServerProcess, serve } from '../e2e/process.js';
import { openTestDatabase } from '../engine.js';
import { tempDir } from '../helpers.js';

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

/** A real `waytrack serve` over HTTPS for a browser test file, and Chromium trusting it. */
export interface DashboardServer {
  server: ServerProcess;
  browser: Browser;
  /** The server's origin as the browser reaches it: localhost, the name its certificate holds. */
  base: string;
  /** The account `email` signs in to, with its API keys. */
  account: { accountId: string; keys: { live: string; test: string } };
  /** The environment of a CLI command on the server's database. */
  env: Record<string, string>;
  /** Closes the browser, stops the server, drops the database. */
  close(): Promise<void>;
}

/**
 * What a browser test file starts once: a database with one account that has a dashboard
 * password (made by the CLI, as an operator does), the server on it, and Chromium. Without Redis
 * unless `env` says otherwise: the sign-in buckets (per IP, per email) would be shared with
 * other files and runs signing in from the same address.
 */
export async function startDashboard(options: {
  prefix: string;
  email: string;
  password: string;
  env?: Record<string, string>;
}): Promise<DashboardServer> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const dataDir = tempDir(options.prefix);
  const database = await openTestDatabase(dataDir);
  await database.database.close();
  let server: ServerProcess | undefined;
  const close = async () => {
    await server?.stop();
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const created = cli(['account', 'create', '--email', options.email, '--password', options.password, '--json'], database.env);
    if (created.status !== 0) throw new Error(created.stderr);
    server = await serve({ ...database.env, REDIS_URL: '', ...options.env });
    const browser = await launchChromium(server.ca);
    return {
      server,
      browser,
      base: server.url.replace('//127.0.0.1', '//localhost'),
      account: JSON.parse(created.stdout),
      env: database.env,
      async close() {
        await browser.close();
        await close();
      },
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Signs in from the sign-in page; returns the browser's cookies for the contexts of later tests. */
export async function signIn(page: Page, base: string, email: string, password: string) {
  await page.goto(`${base}/dashboard`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  return page.context().storageState();
}

/**
 * The browser contexts of one test, each page watched for uncaught errors and (unless
 * `console: false`) console errors and warnings; `closeAll` after each test closes them and
 * returns what was seen and not `expected`.
 */
export class TestPages {
  /** What the running test expects to see (the browser logs a 4xx answer as an error); reset by closeAll. */
  expected: RegExp[] = [];
  private readonly contexts: BrowserContext[] = [];
  private seen: string[] = [];

  constructor(
    private readonly browser: () => Browser,
    private readonly watch: { console: boolean } = { console: true },
  ) {}

  async open(options: BrowserContextOptions): Promise<Page> {
    const context = await this.browser().newContext({ locale: 'en-US', timezoneId: 'UTC', ...options });
    // A step that never completes fails with Playwright's error naming what it waited for,
    // before the test's own 30 s limit says only that the test timed out.
    context.setDefaultTimeout(20_000);
    this.contexts.push(context);
    const page = await context.newPage();
    if (this.watch.console) {
      page.on('console', (m: ConsoleMessage) => {
        if (m.type() === 'error' || m.type() === 'warning') this.seen.push(`${m.type()}: ${m.text()} (${m.location().url})`);
      });
    }
    page.on('pageerror', (error) => this.seen.push(`page error: ${error.message}`));
    return page;
  }

  async closeAll(): Promise<string[]> {
    for (const context of this.contexts.splice(0)) await context.close();
    const unexpected = this.seen.filter((e) => !this.expected.some((pattern) => pattern.test(e)));
    this.seen = [];
    this.expected = [];
    return unexpected;
  }
}

/**
 * Waits for `check` to pass, up to `ms` (what a page shows follows the server within a moment).
 * 15 s: under a whole suite on two cores (the PostgreSQL project and Chromium at once) a page
 * once took more than 5 s to show a new publishable key; a page that never shows it still fails.
 */
export async function eventually(check: () => Promise<void>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

// biome-ignore lint/performance/useDomNodeTextContent: the text as rendered, as a person reads it (table cells apart)
export const text = (locator: Locator) => locator.innerText();

/** The value shown for a figure of the Overview's description list. */
export const figure = (page: Page, label: string) =>
  page
    .locator('dl.figures div')
    .filter({ has: page.locator('dt', { hasText: new RegExp(`^${label}$`) }) })
    .locator('dd');

/** To ./artifacts; with UPDATE_DASHBOARD_SCREENSHOTS=1 also to the ones docs/dashboard.md shows. */
export async function screenshot(page: Page, name: string): Promise<void> {
  const file = path.join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  if (process.env.UPDATE_DASHBOARD_SCREENSHOTS === '1') {
    mkdirSync(DOCS_SCREENSHOTS, { recursive: true });
    copyFileSync(file, path.join(DOCS_SCREENSHOTS, `${name}.png`));
  }
}
