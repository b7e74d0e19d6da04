import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINE, openTestDatabase, type TestDatabase } from '../engine.js';
import { build, cli, request, type ServerProcess, serve } from './process.js';

if (ENGINE !== 'postgres') console.log('PostgreSQL outage test skipped: set DATABASE_URL');

/**
 * A TCP proxy in front of PostgreSQL that the test controls: `open` forwards, `refuse` closes
 * every connection at once, `blackhole` accepts connections and never answers (a database that
 * stopped responding without closing anything — what only timeouts can detect).
 */
async function databaseProxy(target: URL) {
  const sockets = new Set<net.Socket>();
  let mode: 'open' | 'refuse' | 'blackhole' = 'open';
  const track = (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
  };
  const server = net.createServer((client) => {
    track(client);
    if (mode === 'refuse') return void client.destroy();
    if (mode === 'blackhole') return;
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    track(upstream);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as net.AddressInfo).port);
  return {
    url: url.toString(),
    set(next: typeof mode) {
      mode = next;
      if (next !== 'open') for (const s of sockets) s.destroy();
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe.skipIf(ENGINE !== 'postgres')('PostgreSQL outage (end to end)', () => {
  let dataDir: string;
  let testDb: TestDatabase;
  let proxy: Awaited<ReturnType<typeof databaseProxy>>;
  let server: ServerProcess;
  let key: string;
  let storeId: string;

  beforeAll(async () => {
    build();
    dataDir = mkdtempSync(path.join(tmpdir(), 'waytrack-outage-'));
    testDb = await openTestDatabase(dataDir);
    await testDb.database.close();
    proxy = await databaseProxy(new URL(testDb.env.DATABASE_URL as string));
    const env = { ...testDb.env, DATABASE_URL: proxy.url };
    server = await serve(env);
    // Straight to the database: spawnSync blocks this process, and the proxy with it.
    key = JSON.parse(cli(['account', 'create', '--email', 'outage@example.com', '--json'], testDb.env).stdout).keys.live;
    const store = await request(server, 'POST', '/v1/stores', {
      key,
      body: { name: 'Outage', domain: 'outage.example.com', platform: 'custom' },
    });
    storeId = store.body.data.id;
  });
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await proxy?.close();
    await testDb?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const click = (fbclid: string) =>
    request(server, 'POST', '/v1/track/click', {
      key,
      body: { fbclid, storeId, landingPage: `https://outage.example.com/?fbclid=${fbclid}` },
    });
  const timed = async <T>(work: () => Promise<T>) => {
    const started = performance.now();
    const result = await work();
    return { result, ms: performance.now() - started };
  };

  it.each(['blackhole', 'refuse'] as const)(
    '%s: 503 within 5 s, /readyz 503, recovery without restart, nothing lost',
    async (mode) => {
      const before = await click(`before-${mode}`);
      expect(before.status).toBe(200);

      proxy.set(mode);
      for (const attempt of [() => click(`during-${mode}`), () => request(server, 'GET', '/v1/stores', { key })]) {
        const { result, ms } = await timed(attempt);
        expect(result.status).toBe(503);
        expect(result.body.error.code).toBe('service_unavailable');
        expect(ms).toBeLessThan(5_000);
      }
      const ready = await timed(() => request(server, 'GET', '/readyz'));
      expect(ready.result.status).toBe(503);
      expect(ready.ms).toBeLessThan(5_000);
      expect((await request(server, 'GET', '/healthz')).status).toBe(200); // the process is alive

      proxy.set('open');
      const deadline = Date.now() + 10_000;
      for (;;) {
        const res = await request(server, 'GET', '/readyz');
        if (res.status === 200) break;
        if (Date.now() > deadline) throw new Error('the server did not recover');
        await new Promise((r) => setTimeout(r, 200));
      }
      // Acknowledged before the outage: there, once. The retried click is recorded once.
      const again = await click(`before-${mode}`);
      expect(again.body.data).toMatchObject({ clickId: before.body.data.clickId, duplicate: true });
      expect((await click(`during-${mode}`)).status).toBe(200);
      const listed = await request(server, 'GET', `/v1/clicks?storeId=${storeId}&limit=100`, { key });
      const fbclids = listed.body.data.clicks.map((c: { fbclid: string }) => c.fbclid);
      expect(fbclids.filter((f: string) => f === `before-${mode}`)).toHaveLength(1);
      expect(fbclids.filter((f: string) => f === `during-${mode}`)).toHaveLength(1);
    },
  );
});
