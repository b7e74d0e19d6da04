import { chmodSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { LOG_REDACT } from '../../src/observability.js';
import { type RunningServer, startServer } from '../../src/server.js';
import { ENGINE, openTestDatabase, type TestDatabase } from '../engine.js';
import { tempDir } from '../helpers.js';

const modeOf = (file: string) => `0${(statSync(file).mode & 0o777).toString(8)}`;

/** Every file and directory under `dir`, relative to it, with its mode. */
function modes(dir: string): Record<string, string> {
  const found: Record<string, string> = { '.': modeOf(dir) };
  for (const entry of readdirSync(dir, { recursive: true }) as string[]) found[entry] = modeOf(path.join(dir, entry));
  return found;
}

// `waytrack serve` in this process: what it makes in DATA_DIR, what it logs at start, where /metrics is.
describe('serve: a first start', () => {
  interface Instance {
    dataDir: string;
    parent: string;
    testDb: TestDatabase;
    server?: RunningServer;
  }
  const instances: Instance[] = [];
  afterEach(async () => {
    for (const { server, testDb, parent } of instances.splice(0)) {
      await server?.close();
      await testDb.drop();
      rmSync(parent, { recursive: true, force: true });
    }
  });

  /** A database for a server, and a DATA_DIR that does not exist yet (on SQLite, one holds the other). */
  async function instance(): Promise<Instance> {
    const parent = tempDir();
    const dataDir = path.join(parent, 'data');
    const testDb = await openTestDatabase(dataDir);
    await testDb.database.close(); // the server opens it itself
    if (ENGINE === 'sqlite') rmSync(dataDir, { recursive: true, force: true });
    const made = { dataDir, parent, testDb };
    instances.push(made);
    return made;
  }

  /** Starts (or restarts) `waytrack serve` on the instance; its JSON log lines and printed lines. */
  async function serve(target: Instance, env: Record<string, string> = {}) {
    await target.server?.close();
    const logs: Array<Record<string, unknown>> = [];
    const stream = new Writable({
      write(chunk, _enc, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) logs.push(JSON.parse(line));
        done();
      },
    });
    const printed: string[] = [];
    const config = loadConfig({ ...target.testDb.env, PORT: '0', ...env });
    target.server = await startServer(config, (line) => printed.push(line), {
      logger: { level: 'info', redact: LOG_REDACT, stream },
    });
    return { server: target.server, logs, printed };
  }

  it('creates DATA_DIR 0700 and every file in it 0600, and logs the migrations it applied', async () => {
    const target = await instance();
    const { logs } = await serve(target);
    const expected: Record<string, string> = {
      '.': '0700',
      'secrets.key': '0600',
      tls: '0700',
      'tls/localhost-cert.pem': '0600',
      'tls/localhost-key.pem': '0600',
    };
    if (ENGINE === 'sqlite')
      Object.assign(expected, { 'waytrack.db': '0600', 'waytrack.db-wal': '0600', 'waytrack.db-shm': '0600' });
    expect(modes(target.dataDir)).toEqual(expected);

    const migrations = logs.find((l) => Array.isArray(l.migrations));
    expect(migrations?.level).toBe(30);
    expect(migrations?.migrations).toEqual(expect.arrayContaining(['0001_initial', '0005_rollup_queue']));
    expect(logs.filter((l) => l.level === 40)).toEqual([]); // nothing to warn about on a fresh start
  });

  it('tightens files an earlier version left readable, with one warning', async () => {
    const target = await instance();
    await serve(target);
    await target.server?.close();
    chmodSync(target.dataDir, 0o755);
    chmodSync(path.join(target.dataDir, 'secrets.key'), 0o644);
    chmodSync(path.join(target.dataDir, 'tls', 'localhost-key.pem'), 0o644);

    const { logs } = await serve(target);
    expect(modeOf(target.dataDir)).toBe('0700');
    expect(modeOf(path.join(target.dataDir, 'secrets.key'))).toBe('0600');
    expect(modeOf(path.join(target.dataDir, 'tls', 'localhost-key.pem'))).toBe('0600');
    const warnings = logs.filter((l) => l.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.msg).toContain('DATA_DIR was readable by other users');
    const files = warnings[0]?.files as Array<{ path: string; mode: string }>;
    expect(files.map((f) => [path.relative(target.dataDir, f.path), f.mode])).toEqual([
      ['', '0755'],
      ['secrets.key', '0644'],
      [path.join('tls', 'localhost-key.pem'), '0644'],
    ]);
    expect(logs.some((l) => l.msg === 'database schema is up to date')).toBe(true);
  });

  it('METRICS_PORT: /metrics on its own plain-HTTP listener, not on the API port', async () => {
    const { server, printed } = await serve(await instance(), { METRICS_PORT: '0' });
    const line = printed.find((l) => l.startsWith('Prometheus metrics: '));
    const url = line?.slice('Prometheus metrics: '.length) as string;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect(printed.at(-1)).toContain('Waytrack API listening on'); // still the last line: scripts wait for it
    const scraped = await fetch(url);
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toContain('waytrack_http_request_duration_seconds');
    expect((await server.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(404);
    await server.close();
    await expect(fetch(url)).rejects.toThrow(); // closed with the server
  });
});
