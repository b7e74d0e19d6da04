import { rmSync } from 'node:fs';
import { type Kysely, sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import type { Database } from '../../src/db/database.js';
import { forgetGoogleTokens } from '../../src/destinations/google_ads/index.js';
import { ENGINE, openTestDatabase, type TestDatabase } from '../engine.js';
import { call, createTestContext, makeStore, type TestContext, tempDir } from '../helpers.js';
import { FakePlatforms } from './fake-platforms.js';
import { FakeGraph } from './meta/fake-graph.js';
import { FAST, PIXEL, TOKEN } from './meta/setup.js';

/** One outbox (issue 24): Meta's jobs are `destination_jobs` like every destination's. */
let graph: FakeGraph;
let fake: FakePlatforms;
beforeAll(async () => {
  graph = await FakeGraph.start();
  fake = await FakePlatforms.start();
});
afterAll(async () => {
  await graph.close();
  await fake.close();
});
afterEach(() => {
  graph.reset();
  fake.reset();
  forgetGoogleTokens();
});

const ACTION = 'customers/1234567890/conversionActions/555';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** capi_outbox as migration 0019 left it (the table 0020 empties and drops). */
async function createCapiOutbox(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('capi_outbox')
    .addColumn('conversion_id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('store_id', 'text', (c) => c.notNull())
    .addColumn('livemode', 'integer', (c) => c.notNull())
    .addColumn('pixel_id', 'text', (c) => c.notNull())
    .addColumn('test_event_code', 'text')
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('claimed_by', 'text')
    .addColumn('last_error', 'text')
    .addColumn('fbtrace_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('sent_at', 'bigint')
    .execute();
}

/**
 * Takes a migrated database back to the schema before 0020 (and 0021), Meta's jobs in `capi_outbox` as the
 * old code kept them (a refund's keyed by the refund's row id), so that migrating runs 0020 on them.
 */
async function backTo0019(database: Database): Promise<void> {
  await database.write(async (trx) => {
    const db = trx as unknown as Kysely<unknown>;
    await createCapiOutbox(db);
    await sql`insert into capi_outbox (conversion_id, account_id, store_id, livemode, pixel_id, test_event_code, event,
      status, attempts, next_attempt_at, expires_at, claimed_by, last_error, fbtrace_id, created_at, updated_at, sent_at)
      select case when j.job_key = '' then j.conversion_id else j.job_key end, j.account_id, j.store_id, j.livemode,
      substr(j.route, 1, strpos_colon - 1), nullif(substr(j.route, strpos_colon + 1), ''), j.payload, j.status, j.attempts,
      j.next_attempt_at, j.expires_at, j.claimed_by, j.last_error, j.trace_id, j.created_at, j.updated_at, j.sent_at
      from (select d.*, ${ENGINE === 'postgres' ? sql`strpos(d.route, ':')` : sql`instr(d.route, ':')`} as strpos_colon
        from destination_jobs d where d.destination = 'meta') j`.execute(db);
    await sql`delete from destination_jobs where destination = 'meta'`.execute(db);
    await sql`drop index destination_jobs_store_due`.execute(db);
    await sql`alter table destination_jobs drop column route`.execute(db);
    await sql`delete from kysely_migration where name = '0020_one_outbox'`.execute(db);
    // The migrations after 0020, undone too (Kysely applies migrations only in order).
    // 0024 (attribution as a probability): its function, table, indexes and columns.
    if (ENGINE === 'postgres') await sql`drop function waytrack_attribution_evidence`.execute(db);
    await sql`drop table attribution_keys`.execute(db);
    for (const index of ['clicks_visitor_id', 'clicks_fbp', 'clicks_ttp', 'clicks_ip_network']) {
      await sql`drop index ${sql.ref(index)}`.execute(db);
    }
    for (const column of ['visitor_id', 'ip_network']) await sql`alter table clicks drop column ${sql.ref(column)}`.execute(db);
    for (const column of ['visitor_id', 'attribution_evidence']) {
      await sql`alter table conversions drop column ${sql.ref(column)}`.execute(db);
    }
    await sql`delete from kysely_migration where name = '0024_attribution_probability'`.execute(db);
    // 0024 replaced 0021's function: it is gone already.
    if (ENGINE === 'postgres') await sql`drop function if exists waytrack_evidence_clicks`.execute(db);
    await sql`delete from kysely_migration where name = '0021_evidence_function'`.execute(db);
    await sql`drop table shop_orders`.execute(db);
    await sql`delete from kysely_migration where name = '0022_shop_orders'`.execute(db);
    // 0023 (webhook fairness): its table and indexes.
    await sql`drop table webhook_timeouts`.execute(db);
    await sql`drop index webhook_messages_endpoint_due`.execute(db);
    await sql`drop index webhook_messages_leased`.execute(db);
    await sql`delete from kysely_migration where name = '0023_webhook_fairness'`.execute(db);
    await sql`delete from kysely_migration where name = '0025_idempotency_secrets'`.execute(db); // runs again harmlessly
    // 0026 (identity links): its table (its function went with 0024's).
    await sql`drop table identity_links`.execute(db);
    await sql`delete from kysely_migration where name = '0026_identity_links'`.execute(db);
    // 0033 (customers): its table, index and column.
    await sql`drop table customers`.execute(db);
    await sql`drop index conversions_customer`.execute(db);
    await sql`alter table conversions drop column customer_key`.execute(db);
    await sql`delete from kysely_migration where name = '0033_customers'`.execute(db);
    // 0034 (channel rollups): only marks the rollups for a rebuild; it runs again harmlessly.
    await sql`delete from kysely_migration where name = '0034_channel_rollups'`.execute(db);
    // 0035 (report rollups): its table, created only when absent; it runs again harmlessly.
    await sql`delete from kysely_migration where name = '0035_report_rollups'`.execute(db);
    // 0036 (the outbox's indexes of pending jobs): it replaces the indexes; it runs again harmlessly.
    await sql`delete from kysely_migration where name = '0036_pending_job_indexes'`.execute(db);
    // 0037 (the customers' campaign): its column went with the customers table.
    await sql`delete from kysely_migration where name = '0037_customer_campaigns'`.execute(db);
    // 0038 (the channel report's indexes): its customers index went with the table; `if not exists` for the other.
    await sql`delete from kysely_migration where name = '0038_report_indexes'`.execute(db);
    // 0039 (month rollups): refills its tables from the daily rollups; it runs again harmlessly.
    await sql`delete from kysely_migration where name = '0039_month_rollups'`.execute(db);
    // 0040 (cohort rollups): its tables only when absent; it queues every customer again.
    await sql`delete from kysely_migration where name = '0040_cohort_rollups'`.execute(db);
    // 0041 (spend months): its table only when absent, filled again from the entries.
    await sql`delete from kysely_migration where name = '0041_spend_months'`.execute(db);
    // 0042 (new customer rollups): its tables only when absent, the contributions' anew; it queues every customer again.
    await sql`delete from kysely_migration where name = '0042_new_customer_rollups'`.execute(db);
    // 0043 (the conversions' currency index): `if not exists`; it runs again harmlessly.
    await sql`delete from kysely_migration where name = '0043_conversion_currencies'`.execute(db);
    // 0044 (the evidence function's guarded lookups): it replaces the function; it runs again harmlessly.
    await sql`delete from kysely_migration where name = '0044_evidence_branches'`.execute(db);
    // 0045 (packed trace ids): its table and index only when absent; it runs again harmlessly.
    await sql`delete from kysely_migration where name = '0045_report_traces'`.execute(db);
    // 0027 (conversion source), 0028 (destination health), 0029 (attributed click ids).
    for (const column of ['source', 'attributed_click_ids']) {
      await sql`alter table conversions drop column ${sql.ref(column)}`.execute(db);
    }
    await sql`drop table destination_health`.execute(db);
    await sql`drop index destination_jobs_store_pending`.execute(db);
    // 0030 (more click ids): the clicks' new columns, the conversions' browser ids.
    for (const column of ['epik', 'ScCid', 'rdt_cid', 'li_fat_id']) {
      await sql`alter table clicks drop column ${sql.ref(column)}`.execute(db);
    }
    for (const column of ['scid', 'rdt_uuid']) {
      await sql`alter table conversions drop column ${sql.ref(column)}`.execute(db);
    }
    for (const name of [
      '0027_conversion_source',
      '0028_destination_health',
      '0029_attributed_click_ids',
      '0030_more_click_ids',
    ]) {
      await sql`delete from kysely_migration where name = ${name}`.execute(db);
    }
    // 0031 (spend sources): its table and ad_spend.source.
    await sql`drop table spend_sources`.execute(db);
    await sql`alter table ad_spend drop column source`.execute(db);
    await sql`delete from kysely_migration where name = '0031_spend_sources'`.execute(db);
  });
}

describe('migration 0020 (one outbox)', () => {
  let testDb: TestDatabase;
  let dataDir: string;
  afterEach(async () => {
    await testDb?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function app(database: Database, pollMs: number) {
    const config = loadConfig({ ...testDb.env, META_GRAPH_URL: graph.url, CAPI_SYNC_WAIT_MS: '0' });
    // lingerMs 0: each job is tried as soon as it is queued (with CAPI_SYNC_WAIT_MS=0 Meta's conversions linger too).
    const built = await buildApp({ config, database, logger: false, forwarding: { ...FAST, pollMs, lingerMs: 0 } });
    await built.ready();
    return built;
  }

  it("moves Meta's pending jobs (a conversion's and a refund's) into destination_jobs, then delivers each once", async () => {
    dataDir = tempDir();
    testDb = await openTestDatabase(dataDir);
    await testDb.database.migrate();
    // Meta down while the jobs are queued: they stay pending, tried once.
    graph.outage = { type: 'http500' };
    const first = await app(testDb.database, 20);
    const key = (await createAccount(testDb.database, { email: 'migrate@example.com' })).keys.live;
    const storeId = await makeStore(first, key, {});
    const put = await call(first, 'PUT', `/v1/stores/${storeId}/destinations/meta`, {
      key,
      body: { pixelId: PIXEL, accessToken: TOKEN, refundEvent: 'OrderRefunded' },
    });
    expect(put.status).toBe(200);
    const body = { storeId, eventType: 'Purchase', eventValue: 100, currency: 'EUR', orderId: 'm-1' };
    const conversionId = (await call(first, 'POST', '/v1/track/conversion', { key, body })).body.data.conversionId as string;
    const refunded = await call(first, 'POST', '/v1/track/refund', {
      key,
      body: { storeId, orderId: 'm-1', refundId: 're-1', currency: 'EUR', amount: 40 },
    });
    expect(refunded.status).toBe(200);
    await graph.waitFor(() => graph.requests.length >= 2, 5000, 'both jobs tried');
    await first.close();
    const refundRow = await testDb.database.read.selectFrom('refunds').select('id').executeTakeFirstOrThrow();

    await backTo0019(testDb.database);
    const outbox = () =>
      sql<{ conversion_id: string }>`select conversion_id from capi_outbox`.execute(
        testDb.database.read as unknown as Kysely<unknown>,
      );
    expect((await outbox()).rows.map((r) => r.conversion_id).sort()).toEqual([conversionId, refundRow.id].sort());

    expect(await testDb.database.migrate()).toEqual([
      '0020_one_outbox',
      '0021_evidence_function',
      '0022_shop_orders',
      '0023_webhook_fairness',
      '0024_attribution_probability',
      '0025_idempotency_secrets',
      '0026_identity_links',
      '0027_conversion_source',
      '0028_destination_health',
      '0029_attributed_click_ids',
      '0030_more_click_ids',
      '0031_spend_sources',
      '0033_customers',
      '0034_channel_rollups',
      '0035_report_rollups',
      '0036_pending_job_indexes',
      '0037_customer_campaigns',
      '0038_report_indexes',
      '0039_month_rollups',
      '0040_cohort_rollups',
      '0041_spend_months',
      '0042_new_customer_rollups',
      '0043_conversion_currencies',
      '0044_evidence_branches',
      '0045_report_traces',
    ]);
    const moved = await testDb.database.read
      .selectFrom('destination_jobs')
      .selectAll()
      .where('destination', '=', 'meta')
      .orderBy('job_key')
      .execute();
    expect(moved).toHaveLength(2);
    expect(moved[0]).toMatchObject({
      conversion_id: conversionId,
      job_key: '',
      kind: 'conversion',
      route: `${PIXEL}:`,
      status: 'pending',
    });
    expect(moved[0]?.attempts).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(moved[0]?.payload as string)).toMatchObject({ event_name: 'Purchase', event_id: 'm-1' });
    expect(moved[1]).toMatchObject({
      conversion_id: conversionId,
      job_key: refundRow.id,
      kind: 'refund',
      route: `${PIXEL}:`,
      status: 'pending',
    });
    expect(JSON.parse(moved[1]?.payload as string)).toMatchObject({ event_name: 'OrderRefunded', event_id: 'refund_re-1' });
    // The table is gone.
    await expect(outbox()).rejects.toThrow();

    // Meta is back: the shared dispatcher delivers both, once each.
    graph.reset();
    const second = await app(testDb.database, 20);
    try {
      await graph.waitFor(() => graph.acceptedEvents().length === 2, 5000, 'both events delivered');
      await sleep(200);
      expect(graph.acceptedEventIds().sort()).toEqual(['m-1', 'refund_re-1']);
      // Recorded just after Meta's answer (a loaded run may take longer than the 200 ms above).
      await vi.waitFor(
        async () => {
          const conversion = await call(second, 'GET', `/v1/conversions/${conversionId}`, { key });
          expect(conversion.body.data).toMatchObject({ capiSent: true, capi: { status: 'sent' } });
          expect(conversion.body.data.forwarding.meta).toMatchObject({ status: 'sent' });
        },
        { timeout: 8000, interval: 50 },
      );
      const refund = await call(second, 'POST', '/v1/track/refund', {
        key,
        body: { storeId, orderId: 'm-1', refundId: 're-1', currency: 'EUR', amount: 40 },
      });
      expect(refund.body.data.forwarding.meta).toMatchObject({ status: 'sent' });
    } finally {
      await second.close();
    }
  });
});

describe('a store forwarding to all three destinations', () => {
  let ctx: TestContext;
  afterEach(async () => ctx?.close());

  it('queues exactly one job per destination per conversion, and each platform receives each conversion once', async () => {
    ctx = await createTestContext({
      env: {
        META_GRAPH_URL: graph.url,
        GOOGLE_ADS_API_URL: fake.url,
        GOOGLE_OAUTH_TOKEN_URL: fake.tokenUrl,
        TIKTOK_API_URL: fake.url,
        CAPI_SYNC_WAIT_MS: '2000',
      },
      forwarding: FAST,
    });
    const key = ctx.a.live;
    const storeId = await makeStore(ctx.app, key, { pixelId: PIXEL, capiAccessToken: TOKEN });
    const put = (kind: string, body: unknown) =>
      call(ctx.app, 'PUT', `/v1/stores/${storeId}/destinations/${kind}`, { key, body });
    const google = {
      customerId: '1234567890',
      conversionAction: ACTION,
      api: 'google_ads_api',
      developerToken: fake.developerToken,
      oauth: fake.oauthClient,
    };
    expect((await put('google_ads', google)).status).toBe(200);
    expect((await put('tiktok', { pixelCode: 'CABCDEFGHIJ1234567', accessToken: fake.tiktokToken })).status).toBe(200);

    const orders = Array.from({ length: 6 }, (_, i) => `all-${i}`);
    const ids: string[] = [];
    for (const orderId of orders) {
      const res = await call(ctx.app, 'POST', '/v1/track/conversion', {
        key,
        body: {
          storeId,
          eventType: 'Purchase',
          eventValue: 50,
          currency: 'EUR',
          orderId,
          gclid: `g-${orderId}`,
          ttclid: `t-${orderId}`,
        },
      });
      expect(res.status).toBe(200);
      ids.push(res.body.data.conversionId);
    }
    await graph.waitFor(() => graph.acceptedEvents().length >= orders.length, 5000, 'Meta events');
    await fake.waitFor(
      () => fake.googleAccepted().length >= orders.length && fake.tiktokAccepted().length >= orders.length,
      8000,
      'Google Ads and TikTok events',
    );
    await sleep(300); // nothing more arrives
    expect(graph.acceptedEventIds().sort()).toEqual([...orders].sort());
    expect(
      fake
        .googleAccepted()
        .map((c) => c.orderId)
        .sort(),
    ).toEqual([...orders].sort());
    expect(fake.tiktokAccepted()).toHaveLength(orders.length);

    const jobs = await ctx.database.read
      .selectFrom('destination_jobs')
      .select(['conversion_id', 'destination', 'job_key', 'status'])
      .execute();
    expect(jobs).toHaveLength(orders.length * 3);
    for (const id of ids) {
      const own = jobs.filter((j) => j.conversion_id === id);
      expect(own.map((j) => j.destination).sort()).toEqual(['google_ads', 'meta', 'tiktok']);
      expect(own.every((j) => j.job_key === '' && j.status === 'sent')).toBe(true);
    }
    for (const id of ids) {
      const data = (await call(ctx.app, 'GET', `/v1/conversions/${id}`, { key })).body.data;
      expect(data.capiSent).toBe(true);
      expect(data.forwarding).toMatchObject({
        meta: { status: 'sent', attempts: 1 },
        google_ads: { status: 'sent', attempts: 1 },
        tiktok: { status: 'sent', attempts: 1 },
      });
    }
    const metrics = (await call(ctx.app, 'GET', '/metrics')).raw.body;
    expect(metrics).toContain(`waytrack_capi_events_sent_total{mode="live"} ${orders.length}`);
    for (const destination of ['meta', 'google_ads', 'tiktok']) {
      expect(metrics).toContain(
        `waytrack_destination_events_total{destination="${destination}",mode="live",outcome="sent"} ${orders.length}`,
      );
    }
  });
});
