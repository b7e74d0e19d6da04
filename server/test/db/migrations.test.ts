import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { type Kysely, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { refreshCohorts } from '../../src/analytics/cohort-rollups.js';
import { TZDATA } from '../../src/analytics/rollups.js';
import { down as pendingIndexesDown } from '../../src/db/migrations/0036_pending_job_indexes.js';
import { down as customerCampaignsDown } from '../../src/db/migrations/0037_customer_campaigns.js';
import { down as reportIndexesDown } from '../../src/db/migrations/0038_report_indexes.js';
import { down as monthRollupsDown } from '../../src/db/migrations/0039_month_rollups.js';
import { down as cohortRollupsDown } from '../../src/db/migrations/0040_cohort_rollups.js';
import { down as spendMonthsDown } from '../../src/db/migrations/0041_spend_months.js';
import { down as newCustomerRollupsDown } from '../../src/db/migrations/0042_new_customer_rollups.js';
import { down as conversionCurrenciesDown } from '../../src/db/migrations/0043_conversion_currencies.js';
import { down as evidenceBranchesDown } from '../../src/db/migrations/0044_evidence_branches.js';
import { down as reportTracesDown } from '../../src/db/migrations/0045_report_traces.js';
import { SchemaError } from '../../src/db/migrations/index.js';
import { nextJobDueAt } from '../../src/db/repositories/destinations.js';
import { newCustomersBetween } from '../../src/db/repositories/new-customers.js';
import { SecretBox } from '../../src/secrets.js';
import { createStore } from '../../src/stores/stores.js';
import { expectMonthsMatchDays } from '../analytics/fixtures.js';
import { ENGINE, openTestDatabase, type TestDatabase } from '../engine.js';
import { tempDir } from '../helpers.js';

/** The indexes of these names that exist, by name, with their definitions (lower case). */
async function indexes(
  database: TestDatabase['database'],
  names: string[],
): Promise<Array<{ name: string; definition: string }>> {
  const db = database.read as unknown as Kysely<unknown>;
  const { rows } =
    ENGINE === 'sqlite'
      ? await sql<{ name: string; definition: string }>`select name, sql as definition from sqlite_master
          where type = 'index' and name in (${sql.join(names)}) order by name`.execute(db)
      : await sql<{ name: string; definition: string }>`select indexname as name, indexdef as definition from pg_indexes
          where indexname in (${sql.join(names)}) and schemaname = current_schema() order by indexname`.execute(db);
  return rows.map((r) => ({ name: r.name, definition: r.definition.toLowerCase() }));
}

describe('migrations', () => {
  let testDb: TestDatabase | undefined;
  let dataDir = '';
  afterEach(async () => {
    await testDb?.drop();
    testDb = undefined;
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('apply once, and a second run applies nothing', async () => {
    dataDir = tempDir();
    testDb = await openTestDatabase(dataDir);
    const applied = await testDb.database.migrate();
    expect(applied).toContain('0001_initial');
    expect(applied).toContain('0005_rollup_queue');
    expect(await testDb.database.migrate()).toEqual([]);
    await expect(testDb.database.checkSchema()).resolves.toBeUndefined();
  });

  it('refuse a database migrated by newer code, for migrate and serve alike', async () => {
    dataDir = tempDir();
    testDb = await openTestDatabase(dataDir);
    await testDb.database.migrate();
    await testDb.database.write((trx) =>
      sql`insert into kysely_migration (name, timestamp) values ('9999_from_the_future', '2030-01-01T00:00:00.000Z')`.execute(
        trx as Kysely<unknown>,
      ),
    );
    await expect(testDb.database.checkSchema()).rejects.toBeInstanceOf(SchemaError);
    await expect(testDb.database.migrate()).rejects.toThrow(/newer than this version of Waytrack.*9999_from_the_future/);
    // Another connection (a second instance starting) is refused the same way.
    const other = testDb.openAnother();
    try {
      await expect(other.migrate()).rejects.toBeInstanceOf(SchemaError);
    } finally {
      await other.close();
    }
  });

  it("0036 keeps the outbox's indexes to pending jobs, undone and done again", async () => {
    dataDir = tempDir();
    testDb = await openTestDatabase(dataDir);
    await testDb.database.migrate();
    const { database } = testDb;
    const names = ['destination_jobs_due', 'destination_jobs_store_due', 'destination_jobs_store_pending'];
    const definitions = async () => (await indexes(database, names)).map((i) => i.definition);
    expect(await definitions()).toHaveLength(3);
    for (const definition of await definitions()) expect(definition).toMatch(/where \(?status = 'pending'/);
    // Back to the indexes of every job, with a sent job and a pending one; then 0036 again.
    await database.write(async (trx) => {
      const db = trx as unknown as Kysely<unknown>;
      // 0037 … 0042 came after it: undone first, done again after it.
      await reportTracesDown(db);
      await evidenceBranchesDown(db);
      await conversionCurrenciesDown(db);
      await newCustomerRollupsDown(db);
      await spendMonthsDown(db);
      await cohortRollupsDown(db);
      await monthRollupsDown(db);
      await reportIndexesDown(db);
      await customerCampaignsDown(db);
      await pendingIndexesDown(db);
      await sql`delete from kysely_migration where name in
        ('0036_pending_job_indexes', '0037_customer_campaigns', '0038_report_indexes', '0039_month_rollups', '0040_cohort_rollups',
        '0041_spend_months', '0042_new_customer_rollups', '0043_conversion_currencies', '0044_evidence_branches', '0045_report_traces')`.execute(
        db,
      );
      for (const [id, status, due] of [
        ['cv_sent', 'sent', 1000],
        ['cv_pending', 'pending', 2000],
      ] as const) {
        await sql`insert into destination_jobs (conversion_id, destination, job_key, kind, account_id, store_id, livemode,
          route, payload, status, attempts, next_attempt_at, expires_at, created_at, updated_at)
          values (${id}, 'tiktok', '', 'conversion', 'acct_1', 'st_1', 1, '', '{}', ${status}, 0, ${due}, 9999999999999, 1, 1)`.execute(
          db,
        );
      }
    });
    for (const definition of await definitions()) expect(definition).not.toMatch(/where/);
    expect(await database.migrate()).toEqual([
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
    for (const definition of await definitions()) expect(definition).toMatch(/where \(?status = 'pending'/);
    expect(await nextJobDueAt(database.read)).toBe(2000); // the pending job's, never the sent one's
  });

  it("0038 adds the channel report's campaign indexes, undone and done again", async () => {
    dataDir = tempDir();
    testDb = await openTestDatabase(dataDir);
    await testDb.database.migrate();
    const { database } = testDb;
    const names = ['ad_spend_campaigns', 'customers_campaigns'];
    const present = async () => (await indexes(database, names)).map((i) => i.name);
    expect(await present()).toEqual(['ad_spend_campaigns']); // 0042 dropped the customers' one
    await database.write(async (trx) => {
      const db = trx as unknown as Kysely<unknown>;
      await reportTracesDown(db);
      await evidenceBranchesDown(db);
      await conversionCurrenciesDown(db);
      await newCustomerRollupsDown(db);
      await spendMonthsDown(db);
      await cohortRollupsDown(db);
      await monthRollupsDown(db);
      await reportIndexesDown(db);
      await sql`delete from kysely_migration where name in ('0038_report_indexes', '0039_month_rollups', '0040_cohort_rollups',
        '0041_spend_months', '0042_new_customer_rollups', '0043_conversion_currencies', '0044_evidence_branches', '0045_report_traces')`.execute(
        db,
      );
    });
    expect(await present()).toEqual([]);
    expect(await database.migrate()).toEqual([
      '0038_report_indexes',
      '0039_month_rollups',
      '0040_cohort_rollups',
      '0041_spend_months',
      '0042_new_customer_rollups',
      '0043_conversion_currencies',
      '0044_evidence_branches',
      '0045_report_traces',
    ]);
    // 0042 drops the customers' index again: new customers are read from their rollups.
    expect(await present()).toEqual(['ad_spend_campaigns']);
  });

  it('0039 fills the month rollups from the daily ones, undone and done again', async () => {
    dataDir = tempDir();
    testDb = await openTestDatabase(dataDir);
    await testDb.database.migrate();
    const { database } = testDb;
    // Daily rows of two months (and a second store) as an older version folded them; then 0039 again.
    await database.write(async (trx) => {
      const db = trx as unknown as Kysely<unknown>;
      await reportTracesDown(db);
      await evidenceBranchesDown(db);
      await conversionCurrenciesDown(db);
      await newCustomerRollupsDown(db);
      await spendMonthsDown(db);
      await cohortRollupsDown(db);
      await monthRollupsDown(db);
      await sql`delete from kysely_migration where name in ('0039_month_rollups', '0040_cohort_rollups', '0041_spend_months',
        '0042_new_customer_rollups', '0043_conversion_currencies', '0044_evidence_branches', '0045_report_traces')`.execute(db);
      for (const [store, date, value, clicks] of [
        ['st_a', '2026-01-30', 'meta|c1', 3],
        ['st_a', '2026-01-31', 'meta|c1', 4],
        ['st_a', '2026-02-01', 'meta|c1', 5],
        ['st_a', '2026-02-01', 'tiktok|', 1],
        ['st_b', '2026-01-15', 'meta|c1', 7],
      ] as const) {
        await sql`insert into rollup_dimension_clicks (store_id, livemode, dimension, local_date, value, clicks)
          values (${store}, 1, 'channel_campaign', ${date}, ${value}, ${clicks})`.execute(db);
        await sql`insert into rollup_dimension_credits
            (store_id, livemode, dimension, model, local_date, value, currency, units, revenue_minor, refund_minor)
          values (${store}, 1, 'channel_campaign', 'last_click', ${date}, ${value}, 'USD', ${clicks * 1_000_000}, ${clicks * 100}, ${clicks})`.execute(
          db,
        );
      }
    });
    expect(await database.migrate()).toEqual([
      '0039_month_rollups',
      '0040_cohort_rollups',
      '0041_spend_months',
      '0042_new_customer_rollups',
      '0043_conversion_currencies',
      '0044_evidence_branches',
      '0045_report_traces',
    ]);
    const months = await database.read
      .selectFrom('rollup_month_clicks')
      .select(['store_id', 'local_month', 'value', 'clicks'])
      .orderBy('store_id')
      .orderBy('local_month')
      .orderBy('value')
      .execute();
    expect(months.map((m) => ({ ...m, clicks: Number(m.clicks) }))).toEqual([
      { store_id: 'st_a', local_month: '2026-01', value: 'meta|c1', clicks: 7 },
      { store_id: 'st_a', local_month: '2026-02', value: 'meta|c1', clicks: 5 },
      { store_id: 'st_a', local_month: '2026-02', value: 'tiktok|', clicks: 1 },
      { store_id: 'st_b', local_month: '2026-01', value: 'meta|c1', clicks: 7 },
    ]);
    await expectMonthsMatchDays(database.read);
  });

  it('0041 fills the spend months from the entries, undone and done again', async () => {
    dataDir = tempDir();
    testDb = await openTestDatabase(dataDir);
    await testDb.database.migrate();
    const { database } = testDb;
    const { accountId } = await createAccount(database, { email: 'spend-months@example.com' });
    const store = await createStore(
      database,
      { accountId, livemode: true },
      { name: 'A', domain: 'a.example.com', platform: 'custom', timezone: 'UTC', currency: 'USD' },
      new SecretBox(randomBytes(32)),
    );
    await database.write(async (trx) => {
      const db = trx as unknown as Kysely<unknown>;
      await reportTracesDown(db);
      await evidenceBranchesDown(db);
      await conversionCurrenciesDown(db);
      await newCustomerRollupsDown(db);
      await spendMonthsDown(db);
      await sql`delete from kysely_migration where name in ('0041_spend_months', '0042_new_customer_rollups', '0043_conversion_currencies', '0044_evidence_branches', '0045_report_traces')`.execute(
        db,
      );
      for (const [id, date, campaign, name, amount, currency] of [
        ['sp1', '2026-01-30', 'c1', 'Winter', 300, 'USD'],
        ['sp2', '2026-01-31', 'c1', 'Winter sale', 400, 'USD'],
        ['sp3', '2026-02-01', 'c1', null, 500, 'USD'],
        ['sp4', '2026-02-01', 'c2', 'Other', 100, 'EUR'],
      ] as const) {
        await sql`insert into ad_spend (id, account_id, store_id, livemode, date, platform, campaign_id, campaign_name,
            amount_minor, currency, source, created_at, updated_at)
          values (${id}, ${accountId}, ${store.id}, 1, ${date}, 'meta', ${campaign}, ${name}, ${amount}, ${currency}, 'api', 1, 1)`.execute(
          db,
        );
      }
    });
    expect(await database.migrate()).toEqual([
      '0041_spend_months',
      '0042_new_customer_rollups',
      '0043_conversion_currencies',
      '0044_evidence_branches',
      '0045_report_traces',
    ]);
    const months = await database.read
      .selectFrom('rollup_spend_months')
      .selectAll()
      .orderBy('month')
      .orderBy('campaign_id')
      .execute();
    expect(months.map((m) => ({ ...m, amount_minor: Number(m.amount_minor), entries: Number(m.entries) }))).toEqual([
      {
        store_id: store.id,
        livemode: 1,
        month: '2026-01',
        platform: 'meta',
        campaign_id: 'c1',
        currency: 'USD',
        amount_minor: 700,
        entries: 2,
        campaign_name: 'Winter sale',
      },
      {
        store_id: store.id,
        livemode: 1,
        month: '2026-02',
        platform: 'meta',
        campaign_id: 'c1',
        currency: 'USD',
        amount_minor: 500,
        entries: 1,
        campaign_name: null,
      },
      {
        store_id: store.id,
        livemode: 1,
        month: '2026-02',
        platform: 'meta',
        campaign_id: 'c2',
        currency: 'EUR',
        amount_minor: 100,
        entries: 1,
        campaign_name: 'Other',
      },
    ]);
  });

  it('0042 keeps new customers per first day, channel and campaign: every customer folded again, undone and done again', async () => {
    dataDir = tempDir();
    testDb = await openTestDatabase(dataDir);
    await testDb.database.migrate();
    const { database } = testDb;
    const { accountId } = await createAccount(database, { email: 'new-customers@example.com' });
    const store = await createStore(
      database,
      { accountId, livemode: true },
      { name: 'A', domain: 'a.example.com', platform: 'custom', timezone: 'UTC', currency: 'USD' },
      new SecretBox(randomBytes(32)),
    );
    await database.write(async (trx) => {
      const db = trx as unknown as Kysely<unknown>;
      await reportTracesDown(db);
      await evidenceBranchesDown(db);
      await conversionCurrenciesDown(db);
      await newCustomerRollupsDown(db);
      await sql`delete from kysely_migration where name in ('0042_new_customer_rollups', '0043_conversion_currencies', '0044_evidence_branches', '0045_report_traces')`.execute(
        db,
      );
      // Customers as an older version recorded them, and a cohort row its fold had added.
      for (const [key, time, channel, campaign] of [
        ['u1', Date.UTC(2026, 0, 31, 23), 'meta', 'c1'],
        ['u2', Date.UTC(2026, 1, 1, 1), 'meta', 'c1'],
        ['u3', Date.UTC(2026, 1, 2), 'google_ads', 'g7'],
        ['u4', Date.UTC(2026, 1, 3), 'unattributed', ''],
      ] as const) {
        await sql`insert into customers (store_id, livemode, customer_key, account_id, first_conversion_id, first_event_time,
            channel, campaign_id) values (${store.id}, 1, ${key}, ${accountId}, ${`cv_${key}`}, ${time}, ${channel}, ${campaign})`.execute(
          db,
        );
      }
      await sql`insert into rollup_cohort_days (store_id, livemode, first_date, channel, day_offset, currency, net_minor,
          net_fx_minor, customers) values (${store.id}, 1, '2026-01-31', 'meta', 0, '', 0, 0, 1)`.execute(db);
    });
    const customerIndexes = async () => (await indexes(database, ['customers_campaigns', 'customers_first'])).map((i) => i.name);
    expect(await customerIndexes()).toEqual(['customers_campaigns', 'customers_first']);
    expect(await database.migrate()).toEqual([
      '0042_new_customer_rollups',
      '0043_conversion_currencies',
      '0044_evidence_branches',
      '0045_report_traces',
    ]);
    expect(await customerIndexes()).toEqual([]); // only the count the rollups now keep read them
    expect(await database.read.selectFrom('rollup_cohort_days').selectAll().execute()).toEqual([]);
    const queued = await database.read.selectFrom('rollup_cohort_queue').select('customer_key').orderBy('customer_key').execute();
    expect(queued.map((q) => q.customer_key)).toEqual(['u1', 'u2', 'u3', 'u4']);
    await refreshCohorts(database, store.id, TZDATA);
    const counted = async (startDate: string, endDate: string) =>
      (await newCustomersBetween(database.read, store.id, 1, { startDate, endDate })).sort((a, b) =>
        `${a.channel}${a.campaignId}`.localeCompare(`${b.channel}${b.campaignId}`),
      );
    expect(await counted('2026-01-01', '2026-02-28')).toEqual([
      { channel: 'google_ads', campaignId: 'g7', customers: 1 },
      { channel: 'meta', campaignId: 'c1', customers: 2 },
      { channel: 'unattributed', campaignId: '', customers: 1 },
    ]);
    expect(await counted('2026-02-01', '2026-02-02')).toEqual([
      { channel: 'google_ads', campaignId: 'g7', customers: 1 },
      { channel: 'meta', campaignId: 'c1', customers: 1 },
    ]);
    const months = await database.read.selectFrom('rollup_new_customer_months').select(['first_month', 'customers']).execute();
    expect(months.reduce((n, m) => n + Number(m.customers), 0)).toBe(4);
  });
});
