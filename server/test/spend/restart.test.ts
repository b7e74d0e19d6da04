import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep } from '../destinations/meta/setup.js';
import { cli, databaseForProcesses, request, type ServerProcess, SHORT_LEASES, serve } from '../e2e/process.js';
import { FakeMetaInsights } from './fake-meta-insights.js';

// The real `waytrack serve` process killed with SIGKILL (WAYTRACK_TEST_CRASH_AT=spend) after it
// fetched a spend source's report and before it recorded it: the source stays leased to the dead
// process; a new process takes it over when the lease ends and records the spend once.
describe('a spend sync survives kill -9 (end to end)', () => {
  let meta: FakeMetaInsights;
  let server: ServerProcess | undefined;
  const testDb = databaseForProcesses('waytrack-spend-e2e-');

  beforeAll(async () => {
    meta = await FakeMetaInsights.start();
  });
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await meta.close();
  });

  it('takes over the killed instance’s source after its lease and records the spend', async () => {
    const env = { ...testDb.env, ...SHORT_LEASES, META_GRAPH_URL: meta.url };
    const today = new Date().toISOString().slice(0, 10);
    meta.setSpend('act_555', 'USD', [{ date: today, campaignId: '42', campaignName: 'Kill', spend: '12.34' }]);
    server = await serve({ ...env, WAYTRACK_TEST_CRASH_AT: 'spend' });
    const account = JSON.parse(cli(['account', 'create', '--email', 'kill9-spend@example.com', '--json'], env).stdout);
    const key = account.keys.live as string;
    const store = await request(server, 'POST', '/v1/stores', {
      key,
      body: { name: 'Kill -9', domain: 'kill9.example.com', platform: 'custom', currency: 'USD', capiAccessToken: meta.token },
    });
    const storeId = store.body.data.id as string;
    const exited = new Promise<void>((resolve) => server?.child.once('exit', () => resolve()));
    const put = await request(server, 'PUT', `/v1/stores/${storeId}/spend-sources/meta`, {
      key,
      body: { adAccountIds: ['act_555'] },
    });
    expect(put.status).toBe(200);
    await exited; // the crash point: fetched, not recorded
    expect(server.output()).toContain('crash point spend reached');
    expect(meta.requests).toHaveLength(1);

    const killedAt = Date.now();
    server = await serve(env);
    const live = server;
    let shown: { status: string; syncedThrough: string | null } | undefined;
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(50)) {
      const list = await request(live, 'GET', `/v1/stores/${storeId}/spend-sources`, { key });
      shown = list.body.data.spendSources.find((s: { kind: string }) => s.kind === 'meta');
      if (shown?.status === 'ok') break;
    }
    expect(shown).toMatchObject({ status: 'ok', syncedThrough: today });
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual(3000); // not before the dead process's lease (4 s) ended
    const spend = await request(live, 'GET', `/v1/stores/${storeId}/ad-spend?startDate=${today}&endDate=${today}`, { key });
    expect(spend.body.data.entries).toMatchObject([{ campaignId: '42', amount: 12.34, currency: 'USD', source: 'sync' }]);
    expect(meta.requests).toHaveLength(2);
    expect(await server.stop('SIGTERM')).toBe(0);
    server = undefined;
  }, 120_000);
});
