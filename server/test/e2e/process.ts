import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../engine.js';

/** Runs the real CLI the way README says (`npx waytrack …` resolves to this file). */
export const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/waytrack.js');

/**
 * For a test that kills a server mid-delivery: the outbox dispatchers lease what they claim for
 * 4 s instead of 15–20 s (server/src/crash-point.ts), so the restarted process takes the killed
 * one's jobs again after 4 s. A request to a local fake and its recording take milliseconds.
 */
export const SHORT_LEASES = { WAYTRACK_TEST_LEASE_MS: '4000' } as const;

/**
 * A DATA_DIR and a database of the run's engine for the processes a describe block starts (the
 * CLI, `waytrack serve`): made before its tests (the test's own connection closed: the processes
 * open it themselves), dropped with the directory after them. Read its fields inside hooks and
 * tests.
 */
export function databaseForProcesses(prefix: string): { readonly dataDir: string; readonly env: Record<string, string> } {
  let dataDir = '';
  let testDb: TestDatabase | undefined;
  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), prefix));
    testDb = await openTestDatabase(dataDir);
    await testDb.database.close();
  }, 120_000);
  afterAll(async () => {
    await testDb?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }, 120_000);
  return {
    get dataDir() {
      return dataDir;
    },
    get env() {
      if (!testDb) throw new Error('databaseForProcesses: read inside a hook or a test');
      return testDb.env;
    },
  };
}

// server/dist, which the CLI runs, is built from the current sources once per test run by
// server/test/global-setup.ts.

/**
 * The environment of a process a test starts: the runner's, without the runner's own
 * DATABASE_URL (a test names its database, from openTestDatabase, in `env`), then `env`.
 */
function processEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const { DATABASE_URL: _runnerDatabase, ...inherited } = process.env;
  return { ...inherited, LOG_LEVEL: 'silent', ...env };
}

export function cli(args: string[], env: Record<string, string>) {
  const result = spawnSync(process.execPath, [BIN, ...args], {
    env: processEnv(env),
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  output: () => string;
  ca: Buffer;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * How long a start may take before the test gives up on it. A start costs 2–3 s of CPU (loading
 * the bundle, compiling every route's schemas, the database workers, migrations checked), which a
 * machine busy with other test files (load 15+ on 2 cores) stretched past 20 s. It bounds a wait
 * for the server's line, so a generous bound costs nothing when the server starts sooner.
 */
const START_TIMEOUT_MS = 90_000;

/**
 * Starts `waytrack serve` and waits for the line that says where it listens. `wrap` runs it under
 * another command (e.g. strace …): then `child` is that command's process, not the server's.
 */
export async function serve(env: Record<string, string>, options: { wrap?: string[] } = {}): Promise<ServerProcess> {
  const [command, ...args] = [...(options.wrap ?? []), process.execPath, BIN, 'serve'];
  const child = spawn(command as string, args, {
    env: processEnv({ PORT: '0', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d) => {
    out += d;
  });
  child.stderr?.on('data', (d) => {
    out += d;
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL'); // not left running beside the tests that follow
      reject(new Error(`server did not start within ${START_TIMEOUT_MS / 1000} s:\n${out}`));
    }, START_TIMEOUT_MS);
    const check = () => {
      const match = /listening on (https:\/\/\S+?)\/v1/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1] as string);
      }
    };
    child.stdout?.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${out}`));
    });
  });
  const certPath = /certificate for localhost: (\S+)/.exec(out)?.[1];
  const ca = certPath ? readFileSync(certPath) : Buffer.alloc(0);
  return {
    child,
    url,
    ca,
    output: () => out,
    stop(signal = 'SIGTERM') {
      return new Promise((resolve) => {
        // Already gone (exited, or killed by a signal): nothing to wait for.
        if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
        child.once('exit', (code) => resolve(code));
        child.kill(signal);
      });
    },
  };
}

export interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary response shapes
  body: any;
}

/** One HTTPS request that trusts only the server's own certificate (no verification is switched off). */
export function request(
  server: ServerProcess,
  method: string,
  urlPath: string,
  options: { key?: string; body?: unknown } = {},
): Promise<HttpResult> {
  const url = new URL(urlPath, server.url);
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      {
        method,
        // A connection per request: a pooled one may have been closed by the server's keep-alive
        // timeout while the test process was blocked (cli() waits synchronously).
        agent: false,
        ca: server.ca,
        servername: 'localhost',
        headers: {
          ...(options.key && { authorization: `Bearer ${options.key}` }),
          ...(payload && { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
        },
      },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          data += chunk;
        });
        res.on('end', () => {
          let body: unknown = data;
          try {
            body = JSON.parse(data);
          } catch {}
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        });
      },
    );
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

/**
 * Runs the real CLI without blocking this process (process.ts's `cli` is synchronous): a server
 * the test started keeps being talked to while it runs.
 */
export function cliAsync(
  args: string[],
  env: Record<string, string>,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const { DATABASE_URL: _runnerDatabase, ...inherited } = process.env;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      // Generous: a run costs ~1 s of CPU, many times that on a machine busy with other tests.
      { env: { ...inherited, LOG_LEVEL: 'silent', ...env }, encoding: 'utf8', timeout: 120_000 },
      (error, stdout, stderr) => {
        if (!error) return resolve({ status: 0, stdout, stderr });
        // Killed (the timeout) or not started: no exit status, as spawnSync reports it, and why.
        if (typeof error.code !== 'number') return resolve({ status: null, stdout, stderr: `${stderr}${error.message}` });
        resolve({ status: error.code, stdout, stderr });
      },
    );
  });
}
