import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers.js';
import { FakeMetaInsights } from './fake-meta-insights.js';
import {
  closedPort,
  connected,
  day,
  firstPages,
  type SpendApp,
  source,
  spend,
  spendApp,
  spendEvents,
  synced,
  syncNow,
  TOKEN,
  today,
  until,
} from './sync-app.js';

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

let ctx: SpendApp | undefined;
afterEach(async () => {
  await ctx?.close();
  ctx = undefined;
  meta.reset();
});

describe('backfill and restatement', () => {
  it('backfills backfillDays with every page, exactly; re-pulls the restated days, revising and zeroing', async () => {
    ctx = await spendApp(meta, { SPEND_RESTATE_DAYS: '7' });
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
    expect(firstPages(meta)).toHaveLength(1);
    expect(JSON.parse(firstPages(meta)[0]?.query.time_range as string)).toEqual({ since: day(-29), until: today });
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
    expect(JSON.parse(firstPages(meta)[0]?.query.time_range as string)).toEqual({ since: day(-6), until: today });
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
    ctx = await spendApp(meta);
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

describe('status and failures', () => {
  it('goes never → ok → failing → ok with one warning, one recovery line and one webhook each way', async () => {
    ctx = await spendApp(meta);
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
    ctx = await spendApp(meta);
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
    ctx = await spendApp(meta, { META_GRAPH_URL: `http://127.0.0.1:${await closedPort()}` });
    const c = ctx;
    const storeId = await connected(c);
    await synced(c, storeId, 'failing', 1);
    expect((await source(c, storeId)).lastError).toMatch(
      /^This server could not connect to 127\.0\.0\.1:\d+ \(ECONNREFUSED\).*not an error of Meta/,
    );
  });

  it('fails a sync whose page is malformed and keeps the figures recorded', async () => {
    ctx = await spendApp(meta);
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
    ctx = await spendApp(meta);
    const c = ctx;
    await c.another();
    await c.another();
    meta.setSpend('act_111', 'EUR', [{ date: day(-1), campaignId: '901', campaignName: 'Old', spend: '20.00' }]);
    meta.delayMs = 200; // a run long enough for the others to look meanwhile
    const storeId = await connected(c);
    await synced(c, storeId, 'ok');
    await new Promise((resolve) => setTimeout(resolve, 400)); // every instance has looked again since
    expect(firstPages(meta)).toHaveLength(1);

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
    expect(firstPages(meta)).toHaveLength(1);
  });
});
