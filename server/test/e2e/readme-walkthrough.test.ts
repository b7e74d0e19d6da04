import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../engine.js';
import { tempDir } from '../helpers.js';
import { cli, request, type ServerProcess, serve } from './process.js';

// README's quick-start walkthrough, taken from README.md as it is and run by bash with curl and
// Node against the real server process, as a new user pastes it: only the key (when the test
// "pastes" one) and the port are replaced.

const README = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../README.md');
const PLACEHOLDER_KEY = 'KEY=wt_test_...';

/** The README's walkthrough: the `sh` block that starts with the key to paste. */
function walkthrough(): string {
  const blocks = [...readFileSync(README, 'utf8').matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1] as string);
  const found = blocks.filter((b) => b.startsWith(PLACEHOLDER_KEY));
  expect(found, 'README has one sh block starting with KEY=wt_test_...').toHaveLength(1);
  return found[0] as string;
}

/** Replaces `from` (which must be in `text`, once) with `to`. */
function replaceOnce(text: string, from: string, to: string): string {
  expect(text.split(from), `the walkthrough contains ${from} once`).toHaveLength(2);
  return text.replace(from, to);
}

describe('README walkthrough (bash, curl and node against the real server)', () => {
  let root: string;
  let env: Record<string, string>;
  let testDb: TestDatabase;
  let server: ServerProcess;
  let keys: { live: string; test: string };

  /** Runs the walkthrough from the directory `npm start` ran in (it names data/tls/… relative to it). */
  // Not spawnSync: the test's own HTTPS connections must see the server close them meanwhile.
  async function run(key?: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
    let script = walkthrough();
    if (key !== undefined) script = replaceOnce(script, PLACEHOLDER_KEY, `KEY=${key}`);
    script = replaceOnce(script, 'API=https://localhost:8443/v1', `API=https://localhost:${new URL(server.url).port}/v1`);
    const file = path.join(root, 'walkthrough.sh');
    writeFileSync(file, script);
    return new Promise((resolve) => {
      execFile('bash', [file], { cwd: root, encoding: 'utf8', timeout: 60_000 }, (error, stdout, stderr) =>
        resolve({ status: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
    });
  }

  const stores = async () => (await request(server, 'GET', '/v1/stores?limit=100', { key: keys.test })).body.data.stores;

  beforeAll(async () => {
    root = tempDir('waytrack-readme-');
    const dataDir = path.join(root, 'data');
    mkdirSync(dataDir);
    testDb = await openTestDatabase(dataDir);
    await testDb.database.close();
    env = { ...testDb.env, CAPI_SYNC_WAIT_MS: '0' };
    server = await serve(env);
    const created = cli(['account', 'create', '--email', 'you@example.com', '--json'], env);
    expect(created.status, created.stderr).toBe(0);
    keys = JSON.parse(created.stdout).keys;
  }, 60_000);

  afterAll(async () => {
    await server?.stop('SIGKILL');
    await testDb?.drop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it.each([
    ['the key not pasted', undefined, 'wt_test_...'],
    ['a mistyped key', `wt_test_${'x'.repeat(40)}`, `wt_test_${'x'.repeat(40)}`],
  ])('with %s: prints the API 401 message and stops, creating nothing', async (_case, key, sent) => {
    const direct = await request(server, 'GET', '/v1/stores', { key: sent });
    expect(direct.status).toBe(401);
    const result = await run(key);
    expect(result.status).not.toBe(0);
    expect(result.stderr.trim()).toBe(`API error unauthorized: ${direct.body.error.message}`);
    // Nothing after the failed step ran: no store, no stack trace, no "storeId is required".
    expect(result.stdout).toBe('');
    expect(await stores()).toEqual([]);
  });

  it('with the right key, run twice: one store, the click and the order recorded once, the figures printed', async () => {
    const first = await run(keys.test);
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    const storeId = /^store (st_[0-9a-z]+)$/m.exec(first.stdout)?.[1];
    expect(storeId).toBeDefined();
    expect(first.stdout).toContain('"duplicate": false');
    // The last thing printed is the metrics' data.
    const metrics = JSON.parse(first.stdout.slice(first.stdout.lastIndexOf('{\n  "storeId"')));
    expect(metrics).toMatchObject({ storeId, totalClicks: 1, totalConversions: 1, totalRevenue: 49.99, conversionRate: 100 });

    const second = await run(keys.test);
    expect(second.stderr).toBe('');
    expect(second.status).toBe(0);
    expect(second.stdout).toContain(`store ${storeId}\n`);
    expect(second.stdout).not.toContain('"duplicate": false');

    const listed = await stores();
    expect(listed.map((s: { id: string; name: string; domain: string }) => [s.id, s.name, s.domain])).toEqual([
      [storeId, 'My shop', 'shop.example.com'],
    ]);
    const conversions = await request(server, 'GET', `/v1/conversions?storeId=${storeId}`, { key: keys.test });
    expect(conversions.body.data.conversions).toHaveLength(1);
  });

  it('a later step that fails prints the API error and stops there', async () => {
    const [store] = await stores();
    const patched = await request(server, 'PATCH', `/v1/stores/${store.id}`, { key: keys.test, body: { status: 'inactive' } });
    expect(patched.status).toBe(200);
    try {
      const result = await run(keys.test);
      expect(result.status).not.toBe(0);
      expect(result.stdout).toBe(`store ${store.id}\n`);
      expect(result.stderr).toMatch(/^API error store_not_found: .+\n$/);
    } finally {
      await request(server, 'PATCH', `/v1/stores/${store.id}`, { key: keys.test, body: { status: 'active' } });
    }
  });
});
