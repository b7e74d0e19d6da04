// api.md §13 "Cookies that last" in a real Chromium: a shop served over https by nginx with the
// recipe of deploy/first-party/nginx.conf, its page loading the tag from /wt/tag.js. After an ad
// click the browser holds _fbc, _fbp and _wt_vid as Waytrack's answer set them: 400 days (the
// tag alone writes _fbc and _fbp for 90), host-only, and _fbc is the click Waytrack recorded.
//
// Chromium trusts the shop's certificate (the server's own, for localhost) through an SPKI pin,
// and reaches the made-up store domain through --host-resolver-rules, as in tag.test.ts.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash, createPublicKey } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliAsync, databaseForProcesses, freePort, request, type ServerProcess, serve } from './process.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const CHROMIUM = '/usr/bin/chromium';
const NGINX = '/usr/sbin/nginx';
const READY = existsSync(CHROMIUM) && existsSync(NGINX);
if (!READY) console.log('first-party cookies in Chromium skipped: install chromium and nginx');

const DOMAIN = 'shop.acme.test';
const DAY_S = 24 * 60 * 60;

function spkiPin(certPem: Buffer): string {
  const der = createPublicKey(certPem).export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(der).digest('base64');
}

async function waitForPort(port: number, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}:\n${output()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`nginx did not listen on ${port} within 60 s:\n${output()}`);
}

describe.skipIf(!READY)('lasting first-party cookies in Chromium, through nginx (end to end)', () => {
  const testDb = databaseForProcesses('waytrack-first-party-browser-');
  let server: ServerProcess;
  let secretKey: string;
  let work: string;
  let nginx: ChildProcess | undefined;
  let nginxOutput = '';
  let port: number;
  let browser: Browser;

  beforeAll(async () => {
    execFileSync(process.execPath, [path.join(ROOT, 'packages/tag/scripts/build.mjs')], { stdio: 'inherit' });
    work = mkdtempSync(path.join(tmpdir(), 'waytrack-fp-browser-'));
    // Without Redis: per-visitor buckets of 127.0.0.1 would be shared with every other test server of the run.
    server = await serve({ ...testDb.env, REDIS_URL: '' });
    const certPath = /certificate for localhost: (\S+)/.exec(server.output())?.[1] as string;
    const keyPath = certPath.replace(/cert\.pem$/, 'key.pem');
    expect(existsSync(keyPath)).toBe(true);
    const made = await cliAsync(['account', 'create', '--email', 'fp-browser@example.com', '--json'], testDb.env);
    expect(made.status, made.stderr).toBe(0);
    secretKey = JSON.parse(made.stdout).keys.live;
    const store = await request(server, 'POST', '/v1/stores', {
      key: secretKey,
      body: { name: 'Acme Outdoor', domain: DOMAIN, platform: 'custom' },
    });
    expect(store.status).toBe(201);
    const created = await cliAsync(['keys', 'create', '--publishable', '--store', store.body.data.id, '--json'], testDb.env);
    expect(created.status, created.stderr).toBe(0);
    const key = JSON.parse(created.stdout).key as string;

    port = await freePort();
    const prefix = path.join(work, 'nginx');
    mkdirSync(prefix, { recursive: true });
    const recipe = readFileSync(path.join(ROOT, 'deploy/first-party/nginx.conf'), 'utf8')
      .replaceAll('waytrack.example.com', `localhost:${new URL(server.url).port}`)
      .replaceAll('/etc/ssl/certs/ca-certificates.crt', certPath);
    writeFileSync(path.join(prefix, 'waytrack.conf'), recipe);
    const landing = `<!doctype html><html><head><meta charset="utf-8"><title>Shop</title><script async src="/wt/tag.js" data-key="${key}"></script></head><body><h1>Tent</h1></body></html>`;
    const temp = (name: string) => `${name}_temp_path ${path.join(prefix, name)};`;
    writeFileSync(
      path.join(prefix, 'nginx.conf'),
      [
        'daemon off;',
        'master_process off;',
        `pid ${path.join(prefix, 'nginx.pid')};`,
        'error_log stderr warn;',
        'events { worker_connections 64; }',
        'http {',
        '  access_log off;',
        `  ${['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(temp).join(' ')}`,
        '  server {',
        `    listen 127.0.0.1:${port} ssl;`,
        `    server_name ${DOMAIN};`,
        `    ssl_certificate ${certPath};`,
        `    ssl_certificate_key ${keyPath};`,
        `    include ${path.join(prefix, 'waytrack.conf')};`,
        `    location = /landing { default_type text/html; return 200 '${landing}'; }`,
        '    location / { return 404; }',
        '  }',
        '}',
      ].join('\n'),
    );
    const child = spawn(NGINX, ['-p', prefix, '-c', path.join(prefix, 'nginx.conf'), '-e', 'stderr'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    nginx = child;
    child.stdout?.on('data', (d) => {
      nginxOutput += d;
    });
    child.stderr?.on('data', (d) => {
      nginxOutput += d;
    });
    await waitForPort(port, child, () => nginxOutput);

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      chromiumSandbox: false,
      args: [
        '--no-sandbox',
        `--ignore-certificate-errors-spki-list=${spkiPin(readFileSync(certPath))}`,
        `--host-resolver-rules=MAP ${DOMAIN} 127.0.0.1`,
      ],
    });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    if (nginx && nginx.exitCode === null) {
      const stopped = new Promise((resolve) => nginx?.once('exit', resolve));
      nginx.kill('SIGKILL');
      await stopped;
    }
    await server?.stop('SIGKILL');
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('keeps _fbc, _fbp and _wt_vid for 400 days, host-only, _fbc being the click recorded', { timeout: 120_000 }, async () => {
    const probe = await browser.newPage();
    const userAgent = (await probe.evaluate('navigator.userAgent')) as string;
    await probe.close();
    const context = await browser.newContext({ userAgent: userAgent.replace('HeadlessChrome', 'Chrome') });
    try {
      const page = await context.newPage();
      const fbclid = `IwAR${Date.now().toString(36)}`;
      const answer = page.waitForResponse(
        (res) => res.request().method() === 'POST' && res.url() === `https://${DOMAIN}:${port}/wt/v1/track/click`,
      );
      await page.goto(`https://${DOMAIN}:${port}/landing?fbclid=${fbclid}`);
      const res = await answer;
      expect(res.status(), nginxOutput).toBe(200);
      const now = Date.now() / 1000;

      const cookies = await context.cookies(`https://${DOMAIN}:${port}/`);
      const byName = new Map(cookies.map((cookie) => [cookie.name, cookie]));
      for (const name of ['_wt_vid', '_fbc', '_fbp']) {
        const cookie = byName.get(name);
        expect(cookie, name).toBeDefined();
        // 400 days from the answer (Chromium's own cap is 400 days too), not the tag's 90.
        expect(cookie?.expires, name).toBeGreaterThan(now + 399 * DAY_S);
        expect(cookie?.expires, name).toBeLessThan(now + 401 * DAY_S);
        // Host-only: Playwright shows a Domain cookie with a leading dot.
        expect(cookie, name).toMatchObject({ domain: DOMAIN, path: '/', secure: true, sameSite: 'Lax' });
      }
      // One of each (no twin under another domain).
      expect(cookies.filter((cookie) => cookie.name === '_fbc')).toHaveLength(1);
      // The click as recorded (the answer's body is not read: a keepalive request's may not be kept).
      const list = await request(server, 'GET', '/v1/clicks?limit=10', { key: secretKey });
      const click = (list.body.data.clicks as Record<string, unknown>[]).find((c) => c.fbclid === fbclid);
      expect(click).toMatchObject({ visitorId: byName.get('_wt_vid')?.value, fbp: byName.get('_fbp')?.value });
      expect(byName.get('_fbc')?.value).toBe(click?.fbc);
    } finally {
      await context.close();
    }
  });
});
