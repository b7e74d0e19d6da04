// api.md §13 "Cookies that last" (docs/first-party.md): the proxy recipes of deploy/first-party/
// (nginx, Caddy, a Cloudflare Worker), each run as it is written in front of a real Waytrack
// server. A tag click through the shop's origin is recorded and answered with the lasting
// cookies; through a foreign host it is answered with none; nothing but the tag's paths passes.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliAsync, databaseForProcesses, freePort, request, type ServerProcess, serve } from './process.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const RECIPES = path.join(ROOT, 'deploy/first-party');
const NGINX = '/usr/sbin/nginx';
const CADDY = '/usr/bin/caddy';
if (!existsSync(NGINX)) console.log('first-party nginx recipe skipped: install nginx (/usr/sbin/nginx)');
if (!existsSync(CADDY)) console.log('first-party Caddy recipe skipped: install caddy (/usr/bin/caddy)');

const DOMAIN = 'shop.acme.test';
const VISITOR = 'wt.4f9c2a7d1e8b6c3f5a0d9e2b';
const FBP = 'fb.1.1764300000000.1234567890';
const TTP = '2PQ0AkXFi7kbQ8pK9ZbNnD4bLYl';
const ATTRIBUTES = 'Max-Age=34560000; Path=/; Secure; SameSite=Lax';

/** What a proxy answered. */
interface Answer {
  status: number;
  setCookie: string[];
  contentType: string | undefined;
  body: string;
}

/** A recipe with the placeholders of its documentation replaced by the test server's. */
function recipe(file: string, server: ServerProcess, certPath: string, hostname = '127.0.0.1'): string {
  const host = `${hostname}:${new URL(server.url).port}`;
  return readFileSync(path.join(RECIPES, file), 'utf8')
    .replaceAll('waytrack.example.com', host)
    .replaceAll('/etc/ssl/certs/ca-certificates.crt', certPath);
}

async function waitForPort(port: number, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`proxy exited with ${child.exitCode}:\n${output()}`);
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
  throw new Error(`proxy did not listen on ${port} within 60 s:\n${output()}`);
}

function startProxy(command: string, args: string[], port: number, env: NodeJS.ProcessEnv = process.env) {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d) => {
    out += d;
  });
  child.stderr?.on('data', (d) => {
    out += d;
  });
  return {
    child,
    output: () => out,
    ready: () => waitForPort(port, child, () => out),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}

/** A plain-HTTP request to a proxy on 127.0.0.1, as the shop's page at `host` sends it. */
function viaProxy(
  port: number,
  method: string,
  urlPath: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<Answer> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: urlPath,
        method,
        agent: false,
        headers: {
          ...headers,
          ...(payload && { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
        },
      },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          data += chunk;
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            setCookie: res.headers['set-cookie'] ?? [],
            contentType: res.headers['content-type'],
            body: data,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** The tag's click body (the key names the store; no IP). */
function tagClick() {
  return {
    fbclid: `fp-${Date.now()}-${Math.random().toString(36).slice(2)}`,
    landingPage: `https://${DOMAIN}/products/tent`,
    userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)',
    visitorId: VISITOR,
    fbp: FBP,
    ttp: TTP,
  };
}

type Send = (method: string, urlPath: string, headers: Record<string, string>, body?: unknown) => Promise<Answer>;

describe('first-party proxy recipes in front of a real server (deploy/first-party)', () => {
  const testDb = databaseForProcesses('waytrack-first-party-');
  let server: ServerProcess;
  let certPath: string;
  let secretKey: string;
  let key: string;
  let work: string;

  beforeAll(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'waytrack-proxies-'));
    server = await serve(testDb.env);
    certPath = /certificate for localhost: (\S+)/.exec(server.output())?.[1] as string;
    expect(certPath).toBeTruthy();
    const made = await cliAsync(['account', 'create', '--email', 'fp@example.com', '--json'], testDb.env);
    expect(made.status, made.stderr).toBe(0);
    const account = JSON.parse(made.stdout);
    secretKey = account.keys.live;
    const store = await request(server, 'POST', '/v1/stores', {
      key: secretKey,
      body: { name: 'Acme Outdoor', domain: DOMAIN, platform: 'custom' },
    });
    expect(store.status).toBe(201);
    const created = await cliAsync(['keys', 'create', '--publishable', '--store', store.body.data.id, '--json'], testDb.env);
    expect(created.status, created.stderr).toBe(0);
    key = JSON.parse(created.stdout).key;
  }, 180_000);

  afterAll(async () => {
    await server?.stop('SIGKILL');
    if (work) rmSync(work, { recursive: true, force: true });
  });

  /** The checks every recipe must pass, through `send`. */
  function behaves(send: () => Send, log: () => string = () => '') {
    it('passes a tag click from the store’s host: recorded, answered with the four lasting cookies', async () => {
      const body = tagClick();
      const res = await send()(
        'POST',
        '/wt/v1/track/click',
        { host: DOMAIN, origin: `https://${DOMAIN}`, authorization: `Bearer ${key}`, cookie: 'shop_session=secret' },
        body,
      );
      expect(res.status, `${res.body}\n${log()}`).toBe(200);
      const clickId = JSON.parse(res.body).data.clickId as string;
      const click = await request(server, 'GET', `/v1/clicks/${clickId}`, { key: secretKey });
      expect(click.status).toBe(200);
      expect(click.body.data).toMatchObject({ fbclid: body.fbclid, visitorId: VISITOR, fbp: FBP, ttp: TTP });
      expect(res.setCookie).toEqual([
        `_wt_vid=${VISITOR}; ${ATTRIBUTES}`,
        `_fbc=${click.body.data.fbc}; ${ATTRIBUTES}`,
        `_fbp=${FBP}; ${ATTRIBUTES}`,
        `_ttp=${TTP}; ${ATTRIBUTES}`,
      ]);
    });

    it('answers a click from a foreign host without cookies (a Forwarded header the client sent is replaced)', async () => {
      const res = await send()(
        'POST',
        '/wt/v1/track/click',
        {
          host: 'evil.example',
          origin: `https://${DOMAIN}`,
          forwarded: `host=${DOMAIN}`,
          authorization: `Bearer ${key}`,
        },
        tagClick(),
      );
      // The key's origin rule still admits the page; only the cookies are withheld.
      expect(res.status, `${res.body}\n${log()}`).toBe(200);
      expect(res.setCookie).toEqual([]);
    });

    it('serves the tag at /wt/tag.js and nothing else of Waytrack', async () => {
      const tag = await send()('GET', '/wt/tag.js', { host: DOMAIN });
      expect(tag.status, log()).toBe(200);
      expect(tag.contentType).toMatch(/^text\/javascript/);
      expect(tag.body).toContain('v1/track/click');
      for (const other of ['/wt/v1/clicks', '/wt/dashboard', '/wt/healthz']) {
        const res = await send()('GET', other, { host: DOMAIN, authorization: `Bearer ${secretKey}` });
        expect(res.status, other).toBe(404);
        expect(res.body, other).not.toContain('"data"');
      }
    });
  }

  describe.skipIf(!existsSync(NGINX))('nginx (deploy/first-party/nginx.conf)', () => {
    let port: number;
    let proxy: ReturnType<typeof startProxy>;
    beforeAll(async () => {
      port = await freePort();
      const prefix = path.join(work, 'nginx');
      mkdirSync(prefix, { recursive: true });
      writeFileSync(path.join(prefix, 'waytrack.conf'), recipe('nginx.conf', server, certPath, 'localhost'));
      // nginx checks the certificate's DNS names only (the test server's is for localhost).
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
          `    listen 127.0.0.1:${port};`,
          `    server_name ${DOMAIN} .${DOMAIN};`,
          `    include ${path.join(prefix, 'waytrack.conf')};`,
          '    location / { return 404; }',
          '  }',
          '}',
        ].join('\n'),
      );
      proxy = startProxy(NGINX, ['-p', prefix, '-c', path.join(prefix, 'nginx.conf'), '-e', 'stderr'], port);
      await proxy.ready();
    }, 90_000);
    afterAll(async () => proxy?.stop());

    behaves(
      () => (method, urlPath, headers, body) => viaProxy(port, method, urlPath, headers, body),
      () => proxy.output(),
    );
  });

  describe.skipIf(!existsSync(CADDY))('Caddy (deploy/first-party/Caddyfile)', () => {
    let port: number;
    let proxy: ReturnType<typeof startProxy>;
    beforeAll(async () => {
      port = await freePort();
      const dir = path.join(work, 'caddy');
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, 'waytrack.caddy'), recipe('Caddyfile', server, certPath));
      const config = path.join(dir, 'Caddyfile');
      writeFileSync(
        config,
        [
          '{',
          '\tadmin off',
          '\tauto_https off',
          `\tstorage file_system ${path.join(dir, 'data')}`,
          '}',
          `http://:${port} {`,
          '\tbind 127.0.0.1',
          `\timport ${path.join(dir, 'waytrack.caddy')}`,
          '\trespond 404',
          '}',
          '',
        ].join('\n'),
      );
      proxy = startProxy(CADDY, ['run', '--config', config, '--adapter', 'caddyfile'], port, {
        ...process.env,
        HOME: dir,
        XDG_DATA_HOME: path.join(dir, 'data'),
        XDG_CONFIG_HOME: path.join(dir, 'config'),
        // Go's TLS trusts the test server's self-signed certificate instead of the system's CAs.
        SSL_CERT_FILE: certPath,
      });
      await proxy.ready();
    }, 90_000);
    afterAll(async () => proxy?.stop());

    behaves(
      () => (method, urlPath, headers, body) => viaProxy(port, method, urlPath, headers, body),
      () => proxy.output(),
    );
  });

  describe('Cloudflare Worker (deploy/first-party/cloudflare-worker.js)', () => {
    /**
     * The worker's `fetch`, called in a Node 20 process of its own with a standard `Request`
     * (Node's Request, Response, Headers and fetch are the Workers API's), trusting the test
     * server's certificate (NODE_EXTRA_CA_CERTS is read only when a process starts).
     */
    function viaWorker(method: string, urlPath: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
      const { host, ...rest } = headers;
      const script = [
        'const { default: worker } = await import(process.env.WORKER);',
        'const input = JSON.parse(process.env.INPUT);',
        'const response = await worker.fetch(new Request(input.url, input.init), { WAYTRACK_ORIGIN: process.env.ORIGIN });',
        "const answer = { status: response.status, setCookie: response.headers.getSetCookie(), contentType: response.headers.get('content-type') ?? undefined, body: await response.text() };",
        'process.stdout.write(JSON.stringify(answer));',
      ].join('\n');
      const input = {
        url: `https://${host}${urlPath}`,
        init: {
          method,
          headers: {
            ...rest,
            'cf-connecting-ip': '198.51.100.4',
            ...(body !== undefined && { 'content-type': 'application/json' }),
          },
          ...(body !== undefined && { body: JSON.stringify(body) }),
        },
      };
      return new Promise((resolve, reject) => {
        execFile(
          process.execPath,
          ['--input-type=module', '-e', script],
          {
            env: {
              ...process.env,
              NODE_EXTRA_CA_CERTS: certPath,
              WORKER: path.join(RECIPES, 'cloudflare-worker.js'),
              INPUT: JSON.stringify(input),
              ORIGIN: server.url,
            },
            timeout: 60_000,
          },
          (error, stdout, stderr) => {
            if (error) reject(new Error(`${error.message}\n${stderr}`));
            else resolve(JSON.parse(stdout) as Answer);
          },
        );
      });
    }

    behaves(() => viaWorker);
  });
});

describe('docs/first-party.md', () => {
  it.each([
    ['nginx', 'nginx.conf'],
    ['caddyfile', 'Caddyfile'],
    ['js', 'cloudflare-worker.js'],
  ])('shows the ```%s recipe exactly as deploy/first-party/%s has it', (language, file) => {
    const doc = readFileSync(path.join(ROOT, 'docs/first-party.md'), 'utf8');
    const block = new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\`\\n`).exec(doc)?.[1];
    expect(block).toBe(readFileSync(path.join(RECIPES, file), 'utf8'));
  });
});
