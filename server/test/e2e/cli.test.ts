import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../engine.js';
import { cli, freePort, request, type ServerProcess, serve } from './process.js';

// The real CLI and server process over HTTPS, as README's quick start runs them
// (compiled from the current sources first).
describe('waytrack CLI and server (end to end)', () => {
  let dataDir: string;
  let env: Record<string, string>;
  let account: { accountId: string; email: string; keys: { live: string; test: string } };
  let server: ServerProcess;
  let httpPort: number;
  let testDb: TestDatabase;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'waytrack-e2e-'));
    httpPort = await freePort();
    // The processes open the database themselves: this handle only names it and drops it after.
    testDb = await openTestDatabase(dataDir);
    await testDb.database.close();
    env = { ...testDb.env, HTTP_PORT: String(httpPort) };
    server = await serve(env);
  });

  afterAll(async () => {
    await server?.stop('SIGKILL');
    await testDb?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('serve prints where it listens, the self-signed certificate and how to create the first account', () => {
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(server.output()).toContain(`certificate for localhost: ${path.join(dataDir, 'tls', 'localhost-cert.pem')}`);
    expect(server.output()).toContain('npx waytrack account create --email');
  });

  it('account create --json prints exactly the documented object', () => {
    const result = cli(
      ['account', 'create', '--email', 'Owner@Example.com', '--password', 'correct horse battery', '--json'],
      env,
    );
    expect(result.status).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    account = JSON.parse(lines[0] as string);
    expect(Object.keys(account).sort()).toEqual(['accountId', 'email', 'keys']);
    expect(account.accountId).toMatch(/^acct_[0-9a-z]{26}$/);
    expect(account.email).toBe('owner@example.com');
    expect(Object.keys(account.keys).sort()).toEqual(['live', 'test']);
    expect(account.keys.live).toMatch(/^wt_live_[0-9A-Za-z]{32,}$/);
    expect(account.keys.test).toMatch(/^wt_test_[0-9A-Za-z]{32,}$/);
  });

  it('account create refuses a second account with the same email, non-zero exit and a clear message', () => {
    const result = cli(['account', 'create', '--email', 'owner@example.com'], env);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain('already exists');
  });

  it('serves the API over HTTPS with the keys the CLI printed', async () => {
    const health = await request(server, 'GET', '/healthz');
    expect(health.status).toBe(200);
    expect(health.headers['strict-transport-security']).toContain('max-age=');

    const store = await request(server, 'POST', '/v1/stores', {
      key: account.keys.live,
      body: { name: 'E2E', domain: 'e2e.example.com', platform: 'custom' },
    });
    expect(store.status).toBe(201);
    const storeId = store.body.data.id;
    const click = await request(server, 'POST', '/v1/track/click', {
      key: account.keys.live,
      body: { fbclid: 'E2E.click-1', storeId, landingPage: 'https://e2e.example.com/?fbclid=E2E.click-1' },
    });
    expect(click.status).toBe(200);
    const conversion = await request(server, 'POST', '/v1/track/conversion', {
      key: account.keys.live,
      body: { storeId, eventType: 'Purchase', orderId: 'e2e-1', eventValue: 10.1, currency: 'usd', fbclid: 'E2E.click-1' },
    });
    expect(conversion.status).toBe(200);
    expect(conversion.body.data.attributedTo).toEqual({
      clickId: click.body.data.clickId,
      fbclid: 'E2E.click-1',
      clickIds: { fbclid: 'E2E.click-1' },
      channel: 'meta',
      confidenceScore: 100,
    });
    // The compiled server folds them into the analytics rollups in the background (a worker
    // thread), before any analytics read asks for them.
    const backlog = async () => {
      const text = String((await request(server, 'GET', '/metrics')).body);
      return [...text.matchAll(/^waytrack_rollup_backlog_rows\{table="(\w+)"\} (\d+)$/gm)].map((m) => `${m[1]} ${m[2]}`);
    };
    await vi.waitFor(async () => expect(await backlog()).toEqual(['clicks 0', 'conversions 0', 'refunds 0']), {
      timeout: 10_000,
      interval: 100,
    });
    const metrics = await request(server, 'GET', `/v1/analytics/metrics?storeId=${storeId}`, { key: account.keys.live });
    expect(metrics.body.data).toMatchObject({ totalClicks: 1, totalConversions: 1, totalRevenue: 10.1, conversionRate: 100 });
  });

  it('the plain-HTTP listener answers 403 https_required and stores nothing', async () => {
    const stores = await request(server, 'GET', '/v1/stores', { key: account.keys.live });
    const storeId = stores.body.data.stores[0].id;
    const body = JSON.stringify({ fbclid: 'plain-http-click', storeId, landingPage: 'https://e2e.example.com/' });
    const answer = await new Promise<{ status: number; body: string; requestId: unknown }>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port: httpPort,
          path: '/v1/track/click',
          method: 'POST',
          headers: {
            authorization: `Bearer ${account.keys.live}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          },
        },
        (res) => {
          let data = '';
          res.on('data', (c) => {
            data += c;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data, requestId: res.headers['request-id'] }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    expect(answer.status).toBe(403);
    const parsed = JSON.parse(answer.body);
    expect(parsed.success).toBe(false);
    expect(parsed.error.code).toBe('https_required');
    expect(parsed.meta.requestId).toBe(answer.requestId);
    const clicks = await request(server, 'GET', `/v1/clicks?storeId=${storeId}`, { key: account.keys.live });
    expect(clicks.body.data.clicks.map((c: { fbclid: string }) => c.fbclid)).not.toContain('plain-http-click');
  });

  it('keys create / list / revoke, and a revoked key is refused within 5 seconds by the running server', async () => {
    const created = cli(
      [
        'keys',
        'create',
        '--account',
        account.accountId,
        '--mode',
        'test',
        '--scopes',
        'clicks:write,stores:read',
        '--name',
        'ci',
        '--json',
      ],
      env,
    );
    expect(created.status).toBe(0);
    const key = JSON.parse(created.stdout.trim());
    expect(Object.keys(key).sort()).toEqual(['key', 'keyId', 'mode', 'scopes']);
    expect(key).toMatchObject({ mode: 'test', scopes: ['clicks:write', 'stores:read'] });
    expect(key.keyId).toMatch(/^key_/);
    expect(key.key).toMatch(/^wt_test_/);

    const listed = cli(['keys', 'list', '--account', account.accountId, '--json'], env);
    expect(listed.status).toBe(0);
    const keys = JSON.parse(listed.stdout.trim());
    expect(keys.map((k: { keyId: string }) => k.keyId)).toContain(key.keyId);
    expect(listed.stdout).not.toContain(key.key); // the plaintext is shown once only

    const before = await request(server, 'GET', '/v1/stores', { key: key.key });
    expect(before.status).toBe(200);
    expect(cli(['keys', 'revoke', key.keyId], env).status).toBe(0);
    const deadline = Date.now() + 5_000;
    let status = 200;
    while (Date.now() < deadline) {
      status = (await request(server, 'GET', '/v1/stores', { key: key.key })).status;
      if (status === 401) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(status).toBe(401);
    expect(cli(['keys', 'revoke', key.keyId], env).status).not.toBe(0);
  });

  it('every acknowledged click survives kill -9 exactly once', async () => {
    const stores = await request(server, 'GET', '/v1/stores', { key: account.keys.live });
    const storeId = stores.body.data.stores[0].id;
    const acknowledged: string[] = [];
    let killed = false;
    const send = async (i: number) => {
      try {
        const res = await request(server, 'POST', '/v1/track/click', {
          key: account.keys.live,
          body: { fbclid: `durable-${i}`, storeId, landingPage: 'https://e2e.example.com/' },
        });
        if (res.status === 200) acknowledged.push(res.body.data.clickId);
      } catch {
        // connection cut by the kill: not acknowledged
      }
      if (!killed && acknowledged.length >= 100) {
        killed = true;
        server.child.kill('SIGKILL');
      }
    };
    const workers = Array.from({ length: 20 }, async (_, w) => {
      for (let i = w; i < 400 && !killed; i += 20) await send(i);
    });
    await Promise.all(workers);
    await server.stop('SIGKILL');
    expect(acknowledged.length).toBeGreaterThanOrEqual(100);

    server = await serve(env);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<typeof request>> = await request(
        server,
        'GET',
        `/v1/clicks?storeId=${storeId}&limit=100${cursor ? `&cursor=${cursor}` : ''}`,
        { key: account.keys.live },
      );
      seen.push(...page.body.data.clicks.map((c: { clickId: string }) => c.clickId));
      cursor = page.body.data.nextCursor;
    } while (cursor);
    for (const id of acknowledged) expect(seen.filter((s) => s === id)).toHaveLength(1);
  });

  it('migrate applies nothing on an up-to-date database; SIGTERM shuts down cleanly', async () => {
    const migrated = cli(['migrate'], env);
    expect(migrated.status).toBe(0);
    expect(migrated.stdout).toContain('up to date');
    expect(await server.stop('SIGTERM')).toBe(0);
  });

  it('invalid configuration stops the process with a one-line message naming the variable', () => {
    const result = cli(['migrate'], { ...env, PORT: 'eighty' });
    expect(result.status).not.toBe(0);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain('PORT');
    const usage = cli(['frobnicate'], env);
    expect(usage.status).not.toBe(0);
    expect(usage.stderr).toContain('unknown command');
  });
});
