import { rmSync } from 'node:fs';
import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import type { Database } from '../../src/db/database.js';
import type { SpendSyncTuning } from '../../src/spend/sync.js';
import { openTestDatabase } from '../engine.js';
import { call, makeStore, tempDir } from '../helpers.js';
import { FakeMetaInsights } from './fake-meta-insights.js';

/**
 * The spend sync (api.md §11 "Sync") against a local Insights API: the backfill on connect (pages
 * followed, amounts exact), the restatement of the last SPEND_RESTATE_DAYS days (revised figures,
 * days no longer reported set to 0), the later write of a key winning between the API and the
 * sync, the status never → ok → failing → ok with one warning, one recovery line and one webhook
 * each way, errors saying whose side failed, a malformed page keeping the old figures, and two
 * instances on one database syncing once.
 */

let meta: FakeMetaInsights;
beforeAll(async () => {
  meta = await FakeMetaInsights.start();
});
afterAll(async () => meta.close());

interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

const SECRETS_KEY = 'ef'.repeat(32);
const TUNING: Partial<SpendSyncTuning> = { pollMs: 50, leaseMs: 10_000, requestTimeoutMs: 5000, retryBaseMs: 3_600_000 };

function configFor(dataDir: string, env: Record<string, string>) {
  return loadConfig({
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    RATE_LIMIT_RPS: '100000',
    RATE_LIMIT_BURST: '100000',
    META_GRAPH_URL: meta.url,
    WEBHOOKS_ALLOW_PRIVATE: 'true',
    SECRETS_KEY,
    ...env,
  });
}

async function instance(database: Database, env: Record<string, string> = {}, tuning: Partial<SpendSyncTuning> = {}) {
  const dataDir = tempDir();
  const lines: LogLine[] = [];
  const app = await buildApp({
    config: configFor(dataDir, env),
    database,
    logger: { level: 'info', stream: { write: (line: string) => lines.push(JSON.parse(line) as LogLine) } },
    spendSync: { ...TUNING, ...tuning },
  });
  await app.ready();
  return { app, lines, dataDir };
}

async function spendApp(env: Record<string, string> = {}) {
  const dataDir = tempDir();
  const store = await openTestDatabase(dataDir, { migrated: true });
  await store.database.migrate();
  const first = await instance(store.database, env);
  const owner = await createAccount(store.database, { email: 'owner@example.com' });
  const others: Array<Awaited<ReturnType<typeof instance>>> = [];
  return {
    ...first,
    database: store.database,
    key: owner.keys.live,
    testKey: owner.keys.test,
    spendLines: () => first.lines.filter((l) => typeof l.msg === 'string' && l.msg.startsWith('Spend source')),
    async another(tuning: Partial<SpendSyncTuning> = {}) {
      const other = await instance(store.database, env, tuning);
      others.push(other);
      return other;
    },
    async close() {
      for (const other of others) {
        await other.app.close();
        rmSync(other.dataDir, { recursive: true, force: true });
      }
      await first.app.close();
      await store.drop();
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(first.dataDir, { recursive: true, force: true });
    },
  };
}

type SpendApp = Awaited<ReturnType<typeof spendApp>>;
let ctx: SpendApp | undefined;
afterEach(async () => {
  await ctx?.close();
  ctx = undefined;
  meta.reset();
});

const today = new Date().toISOString().slice(0, 10);
const day = (offset: number) => new Date(Date.parse(`${today}T00:00:00Z`) + offset * 86_400_000).toISOString().slice(0, 10);
const TOKEN = 'meta-spend-token';

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out; last value ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function source(c: SpendApp, storeId: string) {
  const res = await call(c.app, 'GET', `/v1/stores/${storeId}/spend-sources`, { key: c.key });
  expect(res.status).toBe(200);
  return res.body.data.spendSources.find((s: { kind: string }) => s.kind === 'meta');
}

/** Waits for a sync that ends after `after` (its lastSyncedAt, or a failure recorded since). */
async function synced(c: SpendApp, storeId: string, status: 'ok' | 'failing', failures?: number) {
  return until(
    async () => c.database.read.selectFrom('spend_sources').selectAll().where('store_id', '=', storeId).executeTakeFirstOrThrow(),
    (row) =>
      row.status === status &&
      row.claimed_by === null &&
      (failures === undefined || Number(row.consecutive_failures) === failures),
  );
}

async function spend(c: SpendApp, storeId: string) {
  const res = await call(c.app, 'GET', `/v1/stores/${storeId}/ad-spend?startDate=${day(-80)}&endDate=${today}&limit=100`, {
    key: c.key,
  });
  expect(res.status).toBe(200);
  return Object.fromEntries(
    (res.body.data.entries ?? res.body.data.adSpend ?? res.body.data.spend).map(
      (e: { date: string; campaignId: string; amount: number; source: string; currency: string }) => [
        `${e.date} ${e.campaignId}`,
        `${e.amount} ${e.currency} ${e.source}`,
      ],
    ),
  );
}

const syncNow = async (c: SpendApp, storeId: string) =>
  expect((await call(c.app, 'POST', `/v1/stores/${storeId}/spend-sources/meta/sync`, { key: c.key })).status).toBe(202);

/** A store whose Meta destination's token the source borrows, connected and backfilled. */
async function connected(c: SpendApp, body: Record<string, unknown> = {}) {
  const storeId = await makeStore(c.app, c.key, { pixelId: '1234567890', capiAccessToken: TOKEN, currency: 'EUR' });
  const put = await call(c.app, 'PUT', `/v1/stores/${storeId}/spend-sources/meta`, {
    key: c.key,
    body: { adAccountIds: ['act_111'], ...body },
  });
  expect(put.status).toBe(200);
  return storeId;
}

const firstPages = () => meta.requests.filter((r) => r.query.after === undefined);

describe('backfill and restatement', () => {
  it('backfills backfillDays with every page, exactly; re-pulls the restated days, revising and zeroing', async () => {
    ctx = await spendApp({ SPEND_RESTATE_DAYS: '7' });
    const c = ctx;
    meta.setSpend('act_111', 'EUR', [
      { date: day(-40), campaignId: '901', campaignName: 'Old', spend: '50.00' },
      { date: day(-29), campaignId: '901', campaignName: 'Old', spend: '7.005' },
      { date: day(-5), campaignId: '901', campaignName: 'Old', spend: '0.1' },
      { date: day(-1), campaignId: '901', campaignName: 'Old', spend: '20.00' },
      { date: day(-1), campaignId: '902', campaignName: 'New', spend: '1234567.89' },
      { date: today, campaignId: '902', campaignName: 'New', spend: '3.30' },
    ]);
    const storeId = await connected(c);
    await synced(c, storeId, 'ok');
    // One first page (the range asked: 30 days through today), then paging.next followed.
    expect(firstPages()).toHaveLength(1);
    expect(JSON.parse(firstPages()[0]?.query.time_range as string)).toEqual({ since: day(-29), until: today });
    expect(meta.requests).toHaveLength(3);
    expect(meta.requests.every((r) => r.token === TOKEN)).toBe(true);
    expect(await spend(c, storeId)).toEqual({
      [`${day(-29)} 901`]: '7.01 EUR sync',
      [`${day(-5)} 901`]: '0.1 EUR sync',
      [`${day(-1)} 901`]: '20 EUR sync',
      [`${day(-1)} 902`]: '1234567.89 EUR sync',
      [`${today} 902`]: '3.3 EUR sync',
    });
    const shown = await source(c, storeId);
    expect(shown).toMatchObject({ status: 'ok', syncedThrough: today, accounts: ['act_111'] });
    expect(shown.lastSyncedAt).toEqual(expect.any(String));
    expect(shown.lastError).toBeUndefined();

    // The platform revises: 901 on day −1 costs more, 902 is no longer reported that day, an old day changes too.
    meta.setSpend('act_111', 'EUR', [
      { date: day(-29), campaignId: '901', campaignName: 'Old', spend: '99.00' },
      { date: day(-5), campaignId: '901', campaignName: 'Old', spend: '0.1' },
      { date: day(-1), campaignId: '901', campaignName: 'Old', spend: '25.50' },
      { date: today, campaignId: '902', campaignName: 'New', spend: '4.00' },
    ]);
    // The API's word on a campaign the platform does not report is not the sync's to zero.
    const api = await call(c.app, 'POST', `/v1/stores/${storeId}/ad-spend`, {
      key: c.key,
      body: { entries: [{ date: day(-2), amount: 5, currency: 'EUR', platform: 'meta', campaignId: '777' }] },
    });
    expect(api.status).toBe(200);
    meta.requests.length = 0;
    await syncNow(c, storeId);
    await until(
      () => spend(c, storeId),
      (s) => s[`${day(-1)} 901`] === '25.5 EUR sync',
    );
    await synced(c, storeId, 'ok');
    expect(JSON.parse(firstPages()[0]?.query.time_range as string)).toEqual({ since: day(-6), until: today });
    expect(await spend(c, storeId)).toEqual({
      [`${day(-29)} 901`]: '7.01 EUR sync', // outside the restated days: as it was
      [`${day(-5)} 901`]: '0.1 EUR sync',
      [`${day(-2)} 777`]: '5 EUR api',
      [`${day(-1)} 901`]: '25.5 EUR sync',
      [`${day(-1)} 902`]: '0 EUR sync', // no longer reported: 0, not stale
      [`${today} 902`]: '4 EUR sync',
    });
  });

  it('lets the later write of a key win, the API’s or the sync’s', async () => {
    ctx = await spendApp();
    const c = ctx;
    meta.setSpend('act_111', 'EUR', [{ date: day(-1), campaignId: '901', campaignName: 'Old', spend: '20.00' }]);
    const storeId = await connected(c);
    await synced(c, storeId, 'ok');
    const api = await call(c.app, 'POST', `/v1/stores/${storeId}/ad-spend`, {
      key: c.key,
      body: { entries: [{ date: day(-1), amount: 42.5, currency: 'EUR', platform: 'meta', campaignId: '901' }] },
    });
    expect(api.status).toBe(200);
    expect(api.body.data.entries[0]).toMatchObject({ amount: 42.5, source: 'api' });
    expect(await spend(c, storeId)).toEqual({ [`${day(-1)} 901`]: '42.5 EUR api' });
    await syncNow(c, storeId);
    await until(
      () => spend(c, storeId),
      (s) => s[`${day(-1)} 901`] === '20 EUR sync',
    );
    // Test mode's spend is its own: the sync writes live spend only.
    const testKeySpend = await call(c.app, 'GET', `/v1/stores/${storeId}/ad-spend?startDate=${day(-5)}&endDate=${today}`, {
      key: c.testKey,
    });
    expect(testKeySpend.status).toBe(200);
    expect(testKeySpend.body.data.entries).toEqual([]);
  });
});

/** A local port nothing listens on (one just closed). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function spendEvents(c: SpendApp) {
  const rows = await c.database.read
    .selectFrom('webhook_messages')
    .select(['event_type', 'payload'])
    .where('event_type', 'like', 'spend_source.%')
    .orderBy('created_at')
    .execute();
  return rows.map((r) => ({ type: r.event_type, data: JSON.parse(r.payload).data }));
}

describe('status and failures', () => {
  it('goes never → ok → failing → ok with one warning, one recovery line and one webhook each way', async () => {
    ctx = await spendApp();
    const c = ctx;
    const hook = await call(c.app, 'POST', '/v1/webhooks', {
      key: c.key,
      body: { url: 'https://hooks.invalid/spend', events: ['spend_source.failing', 'spend_source.recovered'] },
    });
    expect(hook.status).toBe(201);
    meta.setSpend('act_111', 'EUR', [{ date: day(-1), campaignId: '901', campaignName: 'Old', spend: '20.00' }]);
    meta.delayMs = 300;
    const storeId = await connected(c);
    expect((await source(c, storeId)).status).toBe('never');
    meta.delayMs = 0;
    await synced(c, storeId, 'ok');

    meta.outage = { type: 'expired' };
    await syncNow(c, storeId);
    await synced(c, storeId, 'failing', 1);
    const failing = await source(c, storeId);
    expect(failing.status).toBe('failing');
    expect(failing.lastError).toMatch(
      /^Meta refused the access token \(expired or invalid token, code 190, subcode 463\): Error validating access token/,
    );
    expect(failing.lastError).toMatch(/fbtrace_id AbCdEfTrace/);
    expect(failing.lastError).toMatch(/renew the access token/);
    // The figures stay.
    expect(await spend(c, storeId)).toEqual({ [`${day(-1)} 901`]: '20 EUR sync' });
    // A second failure: no second warning nor webhook.
    meta.outage = { type: 'permission' };
    await syncNow(c, storeId);
    await synced(c, storeId, 'failing', 2);
    expect((await source(c, storeId)).lastError).toMatch(/missing permission, code 200\): \(#200\) Requires ads_read/);
    expect(c.spendLines().map((l) => [l.level, l.msg.slice(0, 30)])).toEqual([[40, 'Spend source failing: Meta ref']]);
    expect((await spendEvents(c)).map((e) => e.type)).toEqual(['spend_source.failing']);

    meta.outage = undefined;
    await syncNow(c, storeId);
    await synced(c, storeId, 'ok');
    // The line follows the commit of the run's outcome.
    const lines = await until(
      async () => c.spendLines(),
      (l) => l.length >= 2,
    );
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ level: 30, storeId, source: 'meta' });
    expect(lines[1]?.msg).toMatch(/^Spend source recovered: Meta spend syncs again after 2 failed syncs/);
    const events = await spendEvents(c);
    expect(events.map((e) => e.type)).toEqual(['spend_source.failing', 'spend_source.recovered']);
    expect(events[0]?.data).toMatchObject({ storeId, source: 'meta', status: { status: 'failing' } });
    expect(events[1]?.data).toMatchObject({ storeId, source: 'meta', status: { status: 'ok', syncedThrough: today } });
    expect((await source(c, storeId)).lastError).toBeUndefined();
  });

  it('names an unknown account and a rate limit as Meta’s', async () => {
    ctx = await spendApp();
    const c = ctx;
    const storeId = await connected(c, { adAccountIds: ['act_404'] });
    await synced(c, storeId, 'failing', 1);
    expect((await source(c, storeId)).lastError).toMatch(
      /^Meta does not know ad account act_404 or the token cannot see it \(unknown account, code 100, subcode 33\)/,
    );
    meta.setSpend('act_404', 'EUR', []);
    meta.faults = [{ type: 'rate-limit' }];
    await syncNow(c, storeId);
    await synced(c, storeId, 'failing', 2);
    expect((await source(c, storeId)).lastError).toMatch(/^Meta rate-limited the report \(code 17\): User request limit reached/);
  });

  it('says a network failure is this server’s, naming the host', async () => {
    ctx = await spendApp({ META_GRAPH_URL: `http://127.0.0.1:${await closedPort()}` });
    const c = ctx;
    const storeId = await connected(c);
    await synced(c, storeId, 'failing', 1);
    expect((await source(c, storeId)).lastError).toMatch(
      /^This server could not connect to 127\.0\.0\.1:\d+ \(ECONNREFUSED\).*not an error of Meta/,
    );
  });

  it('fails a sync whose page is malformed and keeps the figures recorded', async () => {
    ctx = await spendApp();
    const c = ctx;
    meta.setSpend('act_111', 'EUR', [
      { date: day(-2), campaignId: '901', campaignName: 'Old', spend: '10.00' },
      { date: day(-1), campaignId: '901', campaignName: 'Old', spend: '20.00' },
      { date: today, campaignId: '901', campaignName: 'Old', spend: '30.00' },
    ]);
    const storeId = await connected(c);
    await synced(c, storeId, 'ok');
    const before = await spend(c, storeId);
    meta.setSpend('act_111', 'EUR', [{ date: day(-2), campaignId: '901', campaignName: 'Old', spend: '11.00' }]);
    meta.faults = [{ type: 'malformed-second-page' }];
    meta.setSpend('act_111', 'EUR', [
      { date: day(-2), campaignId: '901', campaignName: 'Old', spend: '11.00' },
      { date: day(-1), campaignId: '901', campaignName: 'Old', spend: '21.00' },
      { date: today, campaignId: '901', campaignName: 'Old', spend: '31.00' },
    ]);
    await syncNow(c, storeId);
    await synced(c, storeId, 'failing', 1);
    expect((await source(c, storeId)).lastError).toMatch(
      /^Meta answered a report page for act_111 that is not the Insights shape \(page 2: data\[0\]\.spend is not a decimal amount\)/,
    );
    expect(await spend(c, storeId)).toEqual(before);
  });
});

describe('several instances', () => {
  it('sync each run once, and take over the source of an instance that died holding it', async () => {
    ctx = await spendApp();
    const c = ctx;
    await c.another();
    await c.another();
    meta.setSpend('act_111', 'EUR', [{ date: day(-1), campaignId: '901', campaignName: 'Old', spend: '20.00' }]);
    meta.delayMs = 200; // a run long enough for the others to look meanwhile
    const storeId = await connected(c);
    await synced(c, storeId, 'ok');
    await new Promise((resolve) => setTimeout(resolve, 400)); // every instance has looked again since
    expect(firstPages()).toHaveLength(1);

    // An instance that claimed the source and died (kill -9): its lease runs out, another takes it over.
    meta.delayMs = 0;
    meta.requests.length = 0;
    const leaseEnds = Date.now() + 600;
    await c.database.write((trx) =>
      trx
        .updateTable('spend_sources')
        .set({ claimed_by: 'spend_dead', lease_until: leaseEnds, next_sync_at: Date.now() })
        .where('store_id', '=', storeId)
        .execute(),
    );
    meta.setSpend('act_111', 'EUR', [{ date: day(-1), campaignId: '901', campaignName: 'Old', spend: '21.00' }]);
    await until(
      () => spend(c, storeId),
      (s) => s[`${day(-1)} 901`] === '21 EUR sync',
    );
    expect(Date.now()).toBeGreaterThanOrEqual(leaseEnds);
    const row = await synced(c, storeId, 'ok');
    expect(row.claimed_by).toBeNull();
    expect(firstPages()).toHaveLength(1);
  });
});
