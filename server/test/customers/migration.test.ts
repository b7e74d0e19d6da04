import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, clickBody, conversionBody, createTestContext, makeStore, type TestContext } from '../helpers.js';

const DAY_MS = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** Migration 0033 (customers) on a database that has conversions already: the backfill. */
describe('migration 0033 (customers)', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(async () => ctx?.close());

  it('keys the recorded conversions by customer and finds each customer’s first by event time, with its channel', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const now = Date.now();
    const track = async (overrides: Record<string, unknown>, key = ctx.a.live) => {
      const res = await call(ctx.app, 'POST', '/v1/track/conversion', { key, body: conversionBody(storeId, overrides) });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.data.conversionId as string;
    };
    const click = await call(ctx.app, 'POST', '/v1/track/click', {
      key: ctx.a.live,
      body: clickBody(storeId, { timestamp: iso(now - 3 * DAY_MS) }), // its landing page's campaign_id=123
    });
    // Recorded later, earlier by event time: the first.
    await track({ customerData: { email: 'm@example.com' }, timestamp: iso(now - DAY_MS) });
    const first = await track({
      customerData: { email: 'm@example.com' },
      fbclid: click.body.data.fbclid,
      timestamp: iso(now - 2 * DAY_MS),
    });
    const phone = await track({ customerData: { phone: '+4930123456' } });
    const testFirst = await track({ customerData: { email: 'm@example.com' } }, ctx.a.test);
    await track({});

    // Back to the schema before 0033, then migrate: the backfill builds what the writes built.
    const expected = await ctx.database.read
      .selectFrom('customers')
      .selectAll()
      .orderBy('customer_key')
      .orderBy('livemode')
      .execute();
    await ctx.database.write(async (trx) => {
      const db = trx as unknown as Kysely<unknown>;
      await sql`drop table customers`.execute(db);
      await sql`drop index conversions_customer`.execute(db);
      await sql`alter table conversions drop column customer_key`.execute(db);
      await sql`delete from kysely_migration where name = '0033_customers'`.execute(db);
      // Later migrations go too (they run again harmlessly: 0034 marks the rollups for a rebuild, 0035 too and creates its table when absent).
      await sql`delete from kysely_migration where name = '0034_channel_rollups'`.execute(db);
      await sql`delete from kysely_migration where name = '0035_report_rollups'`.execute(db);
      await sql`delete from kysely_migration where name = '0036_pending_job_indexes'`.execute(db); // runs again harmlessly
      await sql`delete from kysely_migration where name = '0037_customer_campaigns'`.execute(db); // its column went with the table
      await sql`delete from kysely_migration where name = '0038_report_indexes'`.execute(db); // its customers index too
      await sql`delete from kysely_migration where name = '0039_month_rollups'`.execute(db); // refills its tables from the days
      await sql`delete from kysely_migration where name = '0040_cohort_rollups'`.execute(db); // queues every customer again
      await sql`delete from kysely_migration where name = '0041_spend_months'`.execute(db); // refills its table from the entries
      await sql`delete from kysely_migration where name = '0042_new_customer_rollups'`.execute(db); // queues every customer again
      await sql`delete from kysely_migration where name = '0043_conversion_currencies'`.execute(db); // \`if not exists\`
      await sql`delete from kysely_migration where name = '0044_evidence_branches'`.execute(db); // replaces a function
      await sql`delete from kysely_migration where name = '0045_report_traces'`.execute(db); // its table and index when absent
    });
    expect(await ctx.database.migrate()).toEqual([
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
    const rows = await ctx.database.read
      .selectFrom('customers')
      .selectAll()
      .orderBy('customer_key')
      .orderBy('livemode')
      .execute();
    expect(rows.map((r) => ({ ...r, first_event_time: Number(r.first_event_time) }))).toEqual(
      expected.map((r) => ({ ...r, first_event_time: Number(r.first_event_time) })),
    );
    const byFirst = new Map(rows.map((r) => [`${r.first_conversion_id}`, r]));
    // Its credited click's campaign (0037), as the write recorded it and the backfill finds it.
    expect(byFirst.get(first)).toMatchObject({ livemode: 1, channel: 'meta', campaign_id: '123' });
    expect(byFirst.get(first)?.customer_key).toMatch(/^em:[0-9a-f]{64}$/);
    expect(byFirst.get(phone)).toMatchObject({ livemode: 1, channel: 'unattributed', campaign_id: '' });
    expect(byFirst.get(phone)?.customer_key).toMatch(/^ph:[0-9a-f]{64}$/);
    expect(byFirst.get(testFirst)).toMatchObject({ livemode: 0 });
    expect(rows).toHaveLength(3);
    const keys = await ctx.database.read
      .selectFrom('conversions')
      .select(['customer_key'])
      .where('store_id', '=', storeId)
      .execute();
    expect(keys.filter((k) => k.customer_key === null)).toHaveLength(1);
    // And the API reads them.
    const res = await call(ctx.app, 'GET', `/v1/conversions/${first}`, { key: ctx.a.live });
    expect(res.body.data.customer).toEqual({ new: true });
  });
});
