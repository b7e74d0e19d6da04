import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, databaseForProcesses, request, type ServerProcess, SHORT_LEASES, serve } from '../../e2e/process.js';
import { FakeGraph } from './fake-graph.js';
import { countBy, PIXEL, sleep, TOKEN } from './setup.js';

// The real `waytrack serve` process (compiled by the global setup), killed with SIGKILL while
// Meta is failing: every acknowledged conversion reaches Meta after the restart, exactly once.
describe('forwarding survives kill -9 (end to end)', () => {
  let fake: FakeGraph;
  let server: ServerProcess | undefined;
  const testDb = databaseForProcesses('waytrack-capi-e2e-');

  beforeAll(async () => {
    fake = await FakeGraph.start();
  });
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await fake.close();
  });

  it('delivers the outbox after a restart, each event once', async () => {
    const env = { ...testDb.env, ...SHORT_LEASES, META_GRAPH_URL: fake.url, CAPI_SYNC_WAIT_MS: '0' };
    fake.outage = { type: 'http500' };
    server = await serve(env);
    const account = JSON.parse(cli(['account', 'create', '--email', 'kill9@example.com', '--json'], env).stdout);
    const key = account.keys.live as string;
    const store = await request(server, 'POST', '/v1/stores', {
      key,
      body: { name: 'Kill -9', domain: 'kill9.example.com', platform: 'custom', pixelId: PIXEL, capiAccessToken: TOKEN },
    });
    expect(store.status).toBe(201);
    const body = (i: number) => ({
      storeId: store.body.data.id,
      eventType: 'Purchase',
      orderId: `k-${i}`,
      eventValue: 10,
      currency: 'USD',
    });
    for (let i = 0; i < 20; i++) {
      const res = await request(server, 'POST', '/v1/track/conversion', { key, body: body(i) });
      expect(res.status).toBe(200);
      expect(res.body.data.capiSent).toBe(false);
    }
    // Killed once every failed attempt is recorded (the next retry is ≥ 0.5 s away): a job
    // killed mid-request would instead wait for its lease (SHORT_LEASES) after the restart.
    const live = server;
    const recorded = async () => {
      const list = await request(live, 'GET', '/v1/conversions?capiStatus=pending&limit=100', { key });
      return list.body.data.conversions.filter((c: { capi: { attempts: number } }) => c.capi.attempts >= 1).length;
    };
    const deadline = Date.now() + 5000;
    while ((await recorded()) < 20 && Date.now() < deadline) await sleep(20);
    await server.stop('SIGKILL');
    expect(fake.acceptedEvents()).toHaveLength(0);

    fake.outage = undefined;
    server = await serve(env);
    await fake.waitFor(() => new Set(fake.acceptedEventIds()).size === 20, 15_000, 'the 20 events after restart');
    await sleep(300);
    const counts = countBy(fake.acceptedEventIds());
    expect(counts.size).toBe(20);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(fake.acceptedRequests().every((r) => r.accessToken === TOKEN)).toBe(true);

    const restarted = server;
    const sentList = async () =>
      (await request(restarted, 'GET', '/v1/conversions?capiStatus=sent&limit=100', { key })).body.data;
    let sent = await sentList();
    for (const deadline = Date.now() + 20_000; sent.conversions.length < 20 && Date.now() < deadline; ) {
      await sleep(20);
      sent = await sentList();
    }
    expect(sent.conversions).toHaveLength(20);
    expect(sent.conversions.every((c: { capi: { attempts: number } }) => c.capi.attempts >= 2)).toBe(true);
    expect(await server.stop('SIGTERM')).toBe(0);
    server = undefined;
  }, 120_000); // two process starts and a lease's expiry: slow on a loaded machine
});
