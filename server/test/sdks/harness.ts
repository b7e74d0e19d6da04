import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cli, freePort, type ServerProcess, serve } from '../e2e/process.js';
import { openTestDatabase, type TestDatabase } from '../engine.js';

/**
 * A real Waytrack server for the client libraries' tests (TypeScript, Python, PHP), plus a proxy
 * in front of it that a test can tell to fail, so retries are tested over the wire.
 *
 * A library's test process reads everything from the environment `SdkServer.env` returns:
 * - WAYTRACK_TEST_BASE_URL   https://localhost:PORT/v1 — the server itself
 * - WAYTRACK_TEST_CA_FILE    the server's self-signed certificate (PEM), to trust it
 * - WAYTRACK_TEST_LIVE_KEY / WAYTRACK_TEST_TEST_KEY  secret keys of one account, scope `*`
 * - WAYTRACK_TEST_PROXY_URL  https://localhost:PORT/v1 — the failing proxy (same certificate)
 * - WAYTRACK_TEST_CONTROL_URL http://127.0.0.1:PORT — the proxy's control:
 *     POST /fail {"status":503,"count":2,"retryAfter":1}  the next `count` requests get `status`
 *       (with an error envelope and, when given, a `Retry-After: retryAfter` header), then the
 *       proxy forwards again; `"status":0` closes the connection instead of answering
 *     GET /requests  → [{method, path, idempotencyKey, userAgent, authorization}] seen since the last reset
 *     POST /reset    clears the plan and the log
 * - WAYTRACK_TEST_DEAD_URL   https://localhost:PORT/v1 where nothing listens (connection errors)
 */
export interface SdkServer {
  server: ServerProcess;
  env: Record<string, string>;
  close(): Promise<void>;
}

interface Seen {
  method: string;
  path: string;
  idempotencyKey: string | null;
  userAgent: string | null;
  authorization: string | null;
}

interface Plan {
  status: number;
  count: number;
  retryAfter?: number;
}

function header(req: http.IncomingMessage, name: string): string | null {
  const value = req.headers[name];
  return typeof value === 'string' ? value : null;
}

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** The proxy: HTTPS with the server's certificate, forwarding to it unless told to fail. */
async function startProxy(target: ServerProcess, tlsFiles: { cert: string; key: string }) {
  const seen: Seen[] = [];
  let plan: Plan | null = null;
  const targetUrl = new URL(target.url);
  const agent = new https.Agent({ keepAlive: true, ca: target.ca, servername: 'localhost' });

  const proxy = https.createServer(tlsFiles, async (req, res) => {
    const body = await readBody(req);
    seen.push({
      method: req.method ?? '',
      path: req.url ?? '',
      idempotencyKey: header(req, 'idempotency-key'),
      userAgent: header(req, 'user-agent'),
      authorization: header(req, 'authorization'),
    });
    if (plan && plan.count > 0) {
      plan.count--;
      const { status, retryAfter } = plan;
      if (plan.count === 0) plan = null;
      if (status === 0) {
        req.socket.destroy();
        return;
      }
      const code = status === 429 ? 'rate_limit_exceeded' : 'service_unavailable';
      res.writeHead(status, {
        'content-type': 'application/json',
        'request-id': 'req_proxy',
        ...(retryAfter !== undefined && { 'retry-after': String(retryAfter) }),
      });
      const meta = { timestamp: new Date().toISOString(), requestId: 'req_proxy' };
      res.end(JSON.stringify({ success: false, error: { code, message: `proxy answered ${status} as told` }, meta }));
      return;
    }
    const headers = { ...req.headers, host: targetUrl.host };
    const upstream = https.request(
      { hostname: targetUrl.hostname, port: targetUrl.port, path: req.url, method: req.method, headers, agent },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    upstream.end(body);
  });

  const control = http.createServer(async (req, res) => {
    const body = await readBody(req);
    if (req.method === 'POST' && req.url === '/fail') {
      plan = JSON.parse(body.toString() || '{}') as Plan;
      res.writeHead(204).end();
    } else if (req.method === 'GET' && req.url === '/requests') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(seen));
    } else if (req.method === 'POST' && req.url === '/reset') {
      plan = null;
      seen.length = 0;
      res.writeHead(204).end();
    } else {
      res.writeHead(404).end();
    }
  });

  const listen = (server: http.Server | https.Server) =>
    new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
  const proxyPort = await listen(proxy);
  const controlPort = await listen(control);
  return {
    proxyUrl: `https://localhost:${proxyPort}/v1`,
    controlUrl: `http://127.0.0.1:${controlPort}`,
    close() {
      agent.destroy();
      proxy.closeAllConnections();
      control.closeAllConnections();
      proxy.close();
      control.close();
    },
  };
}

/** Builds and starts a server on a fresh test database, with an account and the failing proxy. */
export async function startSdkServer(name: string): Promise<SdkServer> {
  const dataDir = mkdtempSync(path.join(tmpdir(), `waytrack-sdk-${name}-`));
  let testDb: TestDatabase | undefined;
  let server: ServerProcess | undefined;
  try {
    testDb = await openTestDatabase(dataDir);
    await testDb.database.close();
    const created = cli(['account', 'create', '--email', `${name}@example.com`, '--json'], testDb.env);
    if (created.status !== 0) throw new Error(`account create failed: ${created.stderr}`);
    const keys = (JSON.parse(created.stdout) as { keys: { live: string; test: string } }).keys;
    server = await serve({ ...testDb.env, RATE_LIMIT_RPS: '10000', RATE_LIMIT_BURST: '10000' });
    const caFile = path.join(dataDir, 'tls', 'localhost-cert.pem');
    const proxy = await startProxy(server, {
      cert: readFileSync(caFile, 'utf8'),
      key: readFileSync(path.join(dataDir, 'tls', 'localhost-key.pem'), 'utf8'),
    });
    const deadPort = await freePort();
    const running = server;
    const db = testDb;
    return {
      server: running,
      env: {
        WAYTRACK_TEST_BASE_URL: `${running.url}/v1`,
        WAYTRACK_TEST_CA_FILE: caFile,
        WAYTRACK_TEST_LIVE_KEY: keys.live,
        WAYTRACK_TEST_TEST_KEY: keys.test,
        WAYTRACK_TEST_PROXY_URL: proxy.proxyUrl,
        WAYTRACK_TEST_CONTROL_URL: proxy.controlUrl,
        WAYTRACK_TEST_DEAD_URL: `https://localhost:${deadPort}/v1`,
      },
      async close() {
        proxy.close();
        await running.stop();
        await db.drop();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await server?.stop('SIGKILL');
    await testDb?.drop();
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
}

export interface ChildRun {
  code: number | null;
  output: string;
}

/**
 * Runs a library's test command (or an interpreter check) without blocking this process — the
 * proxy the tests talk to lives in it — and collects its output; killed after `timeoutMs`.
 */
export function runChild(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<ChildRun> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  return new Promise<ChildRun>((resolve) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => {
      output += d;
    });
    child.stderr.on('data', (d) => {
      output += d;
    });
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      resolve({ code: null, output: String(error) });
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output: killed ? `${output}\n(killed after ${timeoutMs} ms)` : output });
    });
  });
}
