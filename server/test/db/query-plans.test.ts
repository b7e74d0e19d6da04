import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  PostgresIntrospector,
  PostgresQueryCompiler,
  SqliteIntrospector,
  SqliteQueryCompiler,
  sql,
} from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ambiguityKey } from '../../src/ambiguity-keys.js';
import { MATCH_QUALITY, RECONCILIATION, TRACE_ITEM } from '../../src/analytics/report-fold.js';
import { refreshRollups } from '../../src/analytics/rollups.js';
import type { Reader, Writer } from '../../src/db/database.js';
import { PostgresEngineAdapter } from '../../src/db/postgres/engine.js';
import { listPartitions } from '../../src/db/postgres/partitions.js';
import { countSharedBrowsers, rebuildAmbiguityRows } from '../../src/db/repositories/attribution-keys.js';
import { spendByCampaign } from '../../src/db/repositories/channels.js';
import { attributedClickOf, findClickByFbclid, findClicksMatching, listClicks } from '../../src/db/repositories/clicks.js';
import { cohortFactsOf } from '../../src/db/repositories/cohort-rollups.js';
import { cohortNet, cohortSpend } from '../../src/db/repositories/cohorts.js';
import { findConversionByKey, identityLinks, listConversions } from '../../src/db/repositories/conversions.js';
import { firstConversionsOf } from '../../src/db/repositories/customers.js';
import { oldestPendingAt } from '../../src/db/repositories/destination-health.js';
import {
  claimJobs,
  dueJobGroups,
  leaseJobs,
  markJobs,
  nextJobDueAt,
  postponeJobs,
  renewLeases,
} from '../../src/db/repositories/destinations.js';
import { evidenceClicks } from '../../src/db/repositories/evidence.js';
import { sumConverted } from '../../src/db/repositories/fx.js';
import { findIdempotencyRecord } from '../../src/db/repositories/idempotency.js';
import { identifiedBrowsers } from '../../src/db/repositories/identity-links.js';
import { newCustomersBetween } from '../../src/db/repositories/new-customers.js';
import { reportCounts, reportCountsAndLists } from '../../src/db/repositories/report-rollups.js';
import { packTraceRows } from '../../src/db/repositories/report-traces.js';
import { expiredClicks, expiredConversions } from '../../src/db/repositories/retention.js';
import { readQueue } from '../../src/db/repositories/rollup-queue.js';
import {
  sumDimensionClicks,
  sumDimensionCredits,
  sumTotals,
  totalsByDate,
  totalsByHour,
} from '../../src/db/repositories/rollup-reads.js';
import { listSpend } from '../../src/db/repositories/spend.js';
import { listStores } from '../../src/db/repositories/stores.js';
import type { ClicksTable, ConversionsTable, DB } from '../../src/db/schema.js';
import { SqliteEngineAdapter } from '../../src/db/sqlite/engine.js';
import { newId } from '../../src/ids.js';
import { ENGINE } from '../engine.js';
import { createTestContext, makeStore, type TestContext } from '../helpers.js';

/**
 * The hot queries' plans, measured on a seeded database of the engine the run uses: each must
 * reach its rows through an index (docs/query-plans.md shows the plans and the index of each).
 * The statements are the repositories' own: they run against a Kysely whose driver records the
 * compiled SQL and parameters instead of executing them, and each recorded statement is then
 * explained on the real database. WAYTRACK_PRINT_PLANS=1 prints every plan.
 */

/** A driver that records every statement and answers with no rows. */
class RecordingDriver implements Driver {
  readonly recorded: CompiledQuery[] = [];
  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    const recorded = this.recorded;
    return {
      async executeQuery(query) {
        recorded.push(query);
        return { rows: [] };
      },
      async *streamQuery() {},
    };
  }
  async beginTransaction(): Promise<void> {}
  async commitTransaction(): Promise<void> {}
  async rollbackTransaction(): Promise<void> {}
  async releaseConnection(): Promise<void> {}
  async destroy(): Promise<void> {}
}

/** The statements `run` makes, compiled for the engine of this run (its adapter carries the engine's statements). */
async function statementsOf(run: (db: Kysely<DB>) => Promise<unknown>): Promise<CompiledQuery[]> {
  const driver = new RecordingDriver();
  const postgres = ENGINE === 'postgres';
  const db = new Kysely<DB>({
    dialect: {
      createAdapter: () => (postgres ? new PostgresEngineAdapter() : new SqliteEngineAdapter()),
      createDriver: () => driver,
      createIntrospector: (k) => (postgres ? new PostgresIntrospector(k) : new SqliteIntrospector(k)),
      createQueryCompiler: () => (postgres ? new PostgresQueryCompiler() : new SqliteQueryCompiler()),
    },
  });
  await run(db);
  await db.destroy();
  return driver.recorded;
}

const DAY_MS = 86_400_000;
const EVENTS = 3000;
const CONVERSIONS = 1500;

interface Seeded {
  accountId: string;
  storeId: string;
  fingerprint: string;
  derived: string;
  ip: string;
  fbclid: string;
  emailHash: string;
  phoneHash: string;
  orderId: string;
  now: number;
  visitorId: string;
  fbp: string;
  ttp: string;
  ipNetwork: string;
  /** An ambiguity key (migration 0024) of the seeded clicks' IP addresses. */
  ipKey: number;
  /** A live click's id and time. */
  clickId: string;
  clickTime: number;
}

/**
 * Clicks and conversions of three stores in both modes over 60 days (half of them folded into
 * the rollups, the newer ones still queued), outbox jobs, idempotency keys and ad spend; then
 * each engine's statistics are gathered (ANALYZE), as a running server's would be.
 */
async function seed(ctx: TestContext): Promise<Seeded> {
  const accountId = ctx.a.accountId;
  const stores = [
    await makeStore(ctx.app, ctx.a.live),
    await makeStore(ctx.app, ctx.a.live, { name: 'B' }),
    await makeStore(ctx.app, ctx.a.live, { name: 'C' }),
  ];
  const now = Date.now();
  const clicks: ClicksTable[] = [];
  for (let i = 0; i < EVENTS; i++) {
    const time = now - Math.floor((i / EVENTS) * 60 * DAY_MS);
    clicks.push({
      id: newId('click', time),
      account_id: accountId,
      store_id: stores[i % 3] as string,
      livemode: i % 4 === 0 ? 0 : 1,
      fbclid: `fbclid_${i}`,
      click_time: time,
      created_at: time,
      landing_page: `https://shop.acme.test/p/${i % 40}?utm_campaign=c${i % 12}`,
      referrer: null,
      ip_address: `203.0.113.${i % 250}`,
      user_agent: 'Mozilla/5.0',
      fingerprint: `fp_${i % 1000}`,
      derived_fingerprint: `dfp_${i % 1000}`,
      // Browser ids and IPv6 networks on some clicks only: their indexes are partial (migration 0024).
      fbp: i % 3 === 0 ? `fb.1.1700000000000.${i % 900}` : null,
      ttp: i % 7 === 0 ? `ttp_${i % 300}` : null,
      visitor_id: i % 2 === 0 ? `wt.${i % 800}` : null,
      ip_network: i % 5 === 0 ? `2001:db8:${i % 100}:1::/64` : null,
      fbc: `fb.1.${time}.fbclid_${i}`,
      utm_source: 'facebook',
      utm_medium: 'cpc',
      utm_campaign: `c${i % 12}`,
      utm_content: null,
      utm_term: null,
      campaign_id: `${i % 12}`,
      adset_id: null,
      ad_id: null,
      is_bot: i % 50 === 0 ? 1 : 0,
    });
  }
  const conversions: ConversionsTable[] = [];
  for (let i = 0; i < CONVERSIONS; i++) {
    const click = clicks[i * 2] as ClicksTable;
    const attributed = i % 2;
    conversions.push({
      id: newId('conversion', click.click_time),
      account_id: accountId,
      store_id: click.store_id,
      livemode: click.livemode,
      event_type: i % 3 === 0 ? 'Lead' : 'Purchase',
      order_id: `order_${i}`,
      event_id: `order_${i}`,
      event_time: click.click_time + 60_000,
      created_at: click.click_time + 60_000,
      value_minor: 1000 + i,
      currency: 'USD',
      products: '[]',
      user_data: '{}',
      email_hash: `email_${i % 300}`,
      phone_hash: `phone_${i % 300}`,
      customer_key: `em:email_${i % 300}`,
      ip_address: click.ip_address,
      user_agent: click.user_agent,
      fingerprint: click.fingerprint,
      ref_click_id: null,
      ref_fbclid: null,
      ref_fbc: null,
      fbp: null,
      event_source_url: null,
      attributed,
      attributed_click_id: attributed ? click.id : null,
      attributed_fbclid: attributed ? click.fbclid : null,
      confidence: attributed ? 80 : null,
      attribution_signal: attributed ? 'fingerprint' : null,
      capi_status: 'pending',
      capi_attempts: 0,
      capi_last_error: null,
      capi_sent_at: null,
    });
  }
  const chunks = <T>(rows: T[]) =>
    Array.from({ length: Math.ceil(rows.length / 200) }, (_, i) => rows.slice(i * 200, i * 200 + 200));
  const insertEvents = async (from: number, to: number) => {
    const someClicks = clicks.filter((c) => c.click_time < now - from * DAY_MS && c.click_time >= now - to * DAY_MS);
    const someConversions = conversions.filter((c) => c.event_time < now - from * DAY_MS && c.event_time >= now - to * DAY_MS);
    await ctx.database.write(async (trx) => {
      for (const rows of chunks(someClicks)) {
        await trx.insertInto('clicks').values(rows).execute();
        await trx
          .insertInto('rollup_queue')
          .values(rows.map((r) => ({ id: r.id, store_id: r.store_id, kind: 'click' as const, version: 0 })))
          .execute();
      }
      for (const rows of chunks(someConversions)) {
        await trx.insertInto('conversions').values(rows).execute();
        await trx
          .insertInto('rollup_queue')
          .values(rows.map((r) => ({ id: r.id, store_id: r.store_id, kind: 'conversion' as const, version: 0 })))
          .execute();
        const attributed = rows.filter((r) => r.attributed === 1);
        if (attributed.length > 0) {
          await trx
            .insertInto('touchpoints')
            .values(
              attributed.map((r) => ({
                conversion_id: r.id,
                click_id: r.attributed_click_id as string,
                signal: 'fingerprint',
                score: 80,
                click_time: r.event_time - 60_000,
              })),
            )
            .execute();
        }
        await trx
          .insertInto('destination_jobs')
          .values(
            rows.map((r, i) => ({
              conversion_id: r.id,
              destination: 'meta',
              job_key: '',
              kind: 'conversion' as const,
              account_id: accountId,
              store_id: r.store_id,
              livemode: r.livemode,
              route: '123456:',
              payload: '{}',
              // Most jobs long delivered, as on a running server: a few are due.
              status: i % 20 === 0 ? ('pending' as const) : ('sent' as const),
              attempts: 1,
              next_attempt_at: r.event_time,
              expires_at: r.event_time + 7 * DAY_MS,
              claimed_by: null,
              last_error: null,
              trace_id: null,
              created_at: r.event_time,
              updated_at: r.event_time,
              sent_at: null,
            })),
          )
          .execute();
      }
    });
  };
  // Older events folded into the rollups; the last ten days' still queued.
  await insertEvents(10, 61);
  for (const id of stores) await refreshRollups(ctx.database, { id, timezone: 'UTC' });
  await insertEvents(-1, 10);

  await ctx.database.write(async (trx) => {
    const keys = Array.from({ length: 500 }, (_, i) => ({
      account_id: accountId,
      livemode: i % 2,
      key: `key_${i}`,
      request_hash: 'h',
      status_code: 200,
      response: '{}',
      created_at: now - i * 60_000,
    }));
    await trx.insertInto('idempotency_keys').values(keys).execute();
    const spend = Array.from({ length: 600 }, (_, i) => ({
      id: newId('spend'),
      account_id: accountId,
      store_id: stores[i % 3] as string,
      livemode: 1,
      date: new Date(now - Math.floor(i / 6) * DAY_MS).toISOString().slice(0, 10),
      platform: 'meta',
      campaign_id: `${i % 6}`,
      campaign_name: null,
      amount_minor: 5000,
      currency: 'USD',
      source: 'api' as const,
      created_at: now,
      updated_at: now,
    }));
    for (const rows of chunks(spend)) await trx.insertInto('ad_spend').values(rows).execute();
    // Identify links (migration 0026): 3000 links of 300 emails and 300 phones to browsers, over 60 days.
    const links = Array.from({ length: 3000 }, (_, i) => ({
      store_id: stores[i % 3] as string,
      livemode: 1,
      kind: i % 2 === 0 ? ('email' as const) : ('phone' as const),
      hash: `${i % 2 === 0 ? 'email' : 'phone'}_${Math.floor(i / 2) % 300}`,
      visitor_id: `v_${i}`,
      fbp: '',
      ttp: '',
      account_id: accountId,
      created_at: now - (i % 60) * DAY_MS,
      seen_at: now - (i % 60) * DAY_MS,
    }));
    for (const rows of chunks(links)) await trx.insertInto('identity_links').values(rows).execute();
  });
  await ctx.database.write((trx) => rebuildAmbiguityRows(trx as unknown as Kysely<DB>, now - 61 * DAY_MS));
  // Customers (migration 0033): each customer's first of the seeded conversions, as the writes keep them.
  await ctx.database.write(async (trx) => {
    await sql`insert into customers (store_id, livemode, customer_key, account_id, first_conversion_id, first_event_time, channel)
      select store_id, livemode, customer_key, account_id, id, event_time, 'meta' from (
        select c.*, row_number() over (partition by store_id, livemode, customer_key order by event_time, id) as position
        from conversions c where customer_key is not null) firsts
      where position = 1`.execute(trx);
  });
  await sql`analyze`.execute(ctx.database.read as Kysely<DB>);

  const click = clicks[3] as ClicksTable;
  return {
    accountId,
    storeId: click.store_id,
    fingerprint: click.fingerprint as string,
    derived: click.derived_fingerprint as string,
    ip: click.ip_address as string,
    fbclid: click.fbclid,
    emailHash: 'email_7',
    phoneHash: 'phone_7',
    orderId: 'order_7',
    now,
    visitorId: (clicks[4] as ClicksTable).visitor_id as string,
    fbp: (clicks[3] as ClicksTable).fbp as string,
    ttp: (clicks[7] as ClicksTable).ttp as string,
    ipNetwork: (clicks[5] as ClicksTable).ip_network as string,
    ipKey: ambiguityKey(click.store_id, click.livemode, 'ip', click.ip_address as string),
    clickId: click.id,
    clickTime: click.click_time,
  };
}

/**
 * The plan of a statement on the real database, one line per plan node (indented by depth), and
 * on PostgreSQL the partitions it reads.
 */
async function explain(ctx: TestContext, query: CompiledQuery): Promise<{ plan: string[]; partitions: string[] }> {
  const db = ctx.database.read as unknown as Kysely<DB>;
  if (ENGINE === 'sqlite') {
    const { rows } = await db.executeQuery<{ id: number; parent: number; detail: string }>({
      ...query,
      sql: `explain query plan ${query.sql}`,
    });
    const depth = new Map<number, number>([[0, -1]]);
    const plan = rows.map((row) => {
      const d = (depth.get(row.parent) ?? -1) + 1;
      depth.set(row.id, d);
      return `${'  '.repeat(d)}${row.detail}`;
    });
    return { plan, partitions: [] };
  }
  // The seeded tables fit in a few pages, where a sequential scan is cheapest whatever the
  // indexes: with sequential scans priced out the planner shows the index it would walk on a
  // large table, and still scans a table that no index can serve.
  return db.connection().execute(async (conn) => {
    await sql`set enable_seqscan = off`.execute(conn);
    let body: CompiledQuery | undefined;
    try {
      body = await functionBody(conn, query);
      const { rows } = await conn.executeQuery<{ 'QUERY PLAN': string }>(
        body ?? { ...query, sql: `explain (format text, costs off) ${query.sql}` },
      );
      const names = await partitionParents(conn);
      const partitions = new Set<string>();
      const plan = rows.map((r) =>
        r['QUERY PLAN'].replace(/\b\w+\b/g, (word) => {
          const parent = names.get(word);
          if (parent && /^(clicks|conversions)$/.test(parent)) partitions.add(word);
          return parent ?? word;
        }),
      );
      return { plan, partitions: [...partitions] };
    } finally {
      await sql`reset enable_seqscan`.execute(conn);
      if (body) {
        await sql`deallocate waytrack_body`.execute(conn);
        await sql`reset plan_cache_mode`.execute(conn);
      }
    }
  });
}

/**
 * A call of one of our functions (`waytrack_…(_name => $1, …)`: migration 0024's evidence lookup)
 * explained as it runs: its body's lookups, every `return query` but the linked browsers' (those
 * are the same-browser branches' statements with other values), with the call's values in place of its
 * arguments, prepared with a generic plan (the function's `plan_cache_mode`), so the plan shows
 * the partitions left after pruning at executor start-up.
 */
async function functionBody(conn: Kysely<DB>, query: CompiledQuery): Promise<CompiledQuery | undefined> {
  const name = /\b(waytrack_\w+)\(/.exec(query.sql)?.[1];
  if (!name) return undefined;
  const { rows } = await sql<{ source: string; names: string[]; types: string[] }>`
    select p.prosrc as source, p.proargnames[1:p.pronargs] as names,
      array(select format_type(t, null) from unnest(p.proargtypes::oid[]) t) as types
    from pg_proc p where p.proname = ${name} and p.pronamespace = current_schema()::regnamespace`.execute(conn);
  const fn = rows[0];
  if (!fn) throw new Error(`no function ${name}`);
  const bound = new Map([...query.sql.matchAll(/(\w+) => \$(\d+)/g)].map((m) => [m[1], query.parameters[Number(m[2]) - 1]]));
  const literal = (v: unknown) =>
    v === null || v === undefined ? 'null' : typeof v === 'number' ? String(v) : `'${String(v).replace(/'/g, "''")}'`;
  // Its lookups (one UNION ALL before 0044, one guarded `return query` each since) as one statement.
  const lookups = [...fn.source.matchAll(/return query\s+([^;]*);/g)]
    .map((m) => m[1] as string)
    .filter((text) => !/\blinked\./.test(text));
  const statement = lookups.join(' union all ');
  if (!statement) throw new Error(`${name} has no return query`);
  const body = fn.names.reduce((text, arg, i) => text.replace(new RegExp(`\\b${arg}\\b`, 'g'), `$${i + 1}`), statement);
  await sql`set plan_cache_mode = force_generic_plan`.execute(conn); // reset with enable_seqscan
  await sql.raw(`prepare waytrack_body(${fn.types.join(', ')}) as ${body}`).execute(conn);
  return CompiledQuery.raw(
    `explain (format text, costs off) execute waytrack_body(${fn.names.map((arg) => literal(bound.get(arg))).join(', ')})`,
  );
}

/**
 * PostgreSQL partitions clicks and conversions by month (migration 0007): a plan names each
 * month's table and its copy of an index (`clicks_p202611_store_id_…_idx`). Named by what they
 * are partitions of, the plan reads as on one table: `clicks`, `clicks_store_time`.
 */
async function partitionParents(conn: Kysely<DB>): Promise<Map<string, string>> {
  const { rows } = await sql<{ child: string; parent: string }>`
    select child.relname as child, parent.relname as parent from pg_inherits
    join pg_class child on child.oid = pg_inherits.inhrelid
    join pg_class parent on parent.oid = pg_inherits.inhparent
    where child.relnamespace = current_schema()::regnamespace`.execute(conn);
  return new Map(rows.map((r) => [r.child, r.parent]));
}

interface Case {
  name: string;
  /** The repository call(s); with several statements, `statement` picks the one explained. */
  run: (db: Reader, s: Seeded) => Promise<unknown>;
  statement?: number;
  /** The index (or primary key) that must serve it, per engine; with several, any of them. */
  index: { sqlite: string | string[]; postgres: string | string[] };
  /** Tables the plan may read whole (small or walked in key order with a LIMIT). */
  scans?: string[];
  /** The order comes from the index: no sort of the matching rows (on `sqlite` only: see the case). */
  ordered?: boolean | 'sqlite';
  /** Every index listed must serve it (a statement of several lookups), not any one of them. */
  every?: boolean;
  /** The engine whose statement it is, when only one has it. */
  only?: 'sqlite' | 'postgres';
  /** PostgreSQL: the times whose monthly partitions of clicks and conversions alone may be read. */
  months?: (s: Seeded) => { from: number; to: number };
}

const page = { limit: 20 };
const reportScope = (s: Seeded) => ({ storeId: s.storeId, livemode: 1, ...span(s) });
const span = (s: Seeded) => ({
  startDate: new Date(s.now - 30 * DAY_MS).toISOString().slice(0, 10),
  endDate: new Date(s.now).toISOString().slice(0, 10),
});
/** The twelve whole months before the seeded day's: read from the month rollups only. */
const yearSpan = (s: Seeded) => {
  const now = new Date(s.now);
  const day = (month: number, date: number) =>
    new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + month, date)).toISOString().slice(0, 10);
  return { startDate: day(-12, 1), endDate: day(0, 0) };
};
/** Retention as it runs day after day: the seeded 60 days, of which the oldest one has expired. */
const STEADY_CUTOFF_DAYS = 59;
const scope = (s: Seeded) => ({ storeId: s.storeId, livemode: 1, from: s.now - 7 * DAY_MS, to: s.now + 300_000 });

/** Cohorts of whole months (the twelve before the seeded day's), or of a part of one month. */
const cohortMonths = (s: Seeded, whole: boolean) => {
  const now = new Date(s.now);
  const day = (month: number, date: number) =>
    new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + month, date)).toISOString().slice(0, 10);
  const monthStarts = whole ? Array.from({ length: 13 }, (_, i) => day(i - 12, 1)) : [day(-1, 3), day(-1, 20)];
  return { storeId: s.storeId, livemode: 1, monthStarts };
};

/**
 * A recorded batch's jobs, by key: 25 of them, as a recording writes (with two or three keys
 * SQLite's planner picks the primary key on its own; with more, a new database's took the due index).
 */
const BATCH_JOBS = Array.from({ length: 25 }, (_, i) => ({ conversion_id: `cv_${i}`, job_key: '' }));

const PENDING_JOB_INDEXES = ['destination_jobs_due', 'destination_jobs_store_due', 'destination_jobs_store_pending'];

const CASES: Case[] = [
  {
    name: 'customers: the first conversions of a page of conversions (customer.new)',
    run: (db, s) => firstConversionsOf(db, s.storeId, 1, ['em:email_7', 'em:email_10']),
    // PostgreSQL, on this seed's few customers, may take any index of the table (all lead with store, mode).
    index: {
      sqlite: ['sqlite_autoindex_customers_1', 'customers_pk'],
      postgres: ['customers_pk', 'customers_first', 'customers_campaigns'],
    },
  },
  {
    // Whole months: the spend month rollups (migration 0041).
    name: 'cohorts: spend per month and platform',
    run: (db, s) => cohortSpend(db, cohortMonths(s, true)),
    index: { sqlite: 'PRIMARY KEY', postgres: 'rollup_spend_months_pk' },
  },
  {
    name: 'cohorts: spend of a partial month',
    run: (db, s) => cohortSpend(db, cohortMonths(s, false)),
    index: { sqlite: 'ad_spend_dates', postgres: 'ad_spend_dates' },
  },
  {
    name: 'channels: spend per campaign of whole months',
    run: (db, s) =>
      spendByCampaign(db, s.storeId, 1, {
        startDate: cohortMonths(s, true).monthStarts[0] as string,
        endDate: cohortMonths(s, true).monthStarts[12] as string,
      }),
    index: { sqlite: 'PRIMARY KEY', postgres: 'rollup_spend_months_pk' },
    statement: 1,
  },
  {
    // New customers per channel and campaign (migration 0042): whole months, then a part of one.
    name: 'channels: new customers of whole months',
    run: (db, s) =>
      newCustomersBetween(db, s.storeId, 1, {
        startDate: cohortMonths(s, true).monthStarts[0] as string,
        endDate: cohortMonths(s, true).monthStarts[12] as string,
      }),
    index: { sqlite: 'PRIMARY KEY', postgres: 'rollup_new_customer_months_pk' },
    statement: 1,
  },
  {
    name: 'channels: new customers of a partial month',
    run: (db, s) =>
      newCustomersBetween(db, s.storeId, 1, {
        startDate: cohortMonths(s, false).monthStarts[0] as string,
        endDate: cohortMonths(s, false).monthStarts[1] as string,
      }),
    index: { sqlite: 'PRIMARY KEY', postgres: 'rollup_new_customer_days_pk' },
  },
  {
    // The cohorts' partial months, by first day (cohort-rollups.ts).
    name: 'cohorts: net value per first day, channel and day offset',
    run: (db, s) => cohortNet(db, { ...cohortMonths(s, false), currency: 'USD' }),
    index: { sqlite: 'PRIMARY KEY', postgres: 'rollup_cohort_days_pk' },
  },
  {
    name: 'cohorts: net value per first month, channel and day offset',
    run: (db, s) => cohortNet(db, { ...cohortMonths(s, true), currency: 'USD' }),
    index: { sqlite: 'PRIMARY KEY', postgres: 'rollup_cohort_months_pk' },
  },
  {
    name: 'cohort rollups: a customer’s purchases',
    run: (db, s) => cohortFactsOf(db, [{ store_id: s.storeId, livemode: 1, customer_key: 'em:email_7' }]),
    statement: 1,
    index: { sqlite: 'conversions_customer', postgres: 'conversions_customer' },
  },
  {
    name: 'attribution: clicks by fingerprint',
    run: (db, s) => findClicksMatching(db, scope(s), 'fingerprint', s.fingerprint, 10),
    index: { sqlite: 'clicks_fingerprint', postgres: 'clicks_fingerprint' },
    ordered: true,
  },
  {
    name: 'attribution: clicks by derived fingerprint',
    run: (db, s) => findClicksMatching(db, scope(s), 'derived_fingerprint', s.derived, 10),
    index: { sqlite: 'clicks_derived_fingerprint', postgres: 'clicks_derived_fingerprint' },
    ordered: true,
  },
  {
    name: 'attribution: clicks by IP address',
    run: (db, s) => findClicksMatching(db, scope(s), 'ip_address', s.ip, 10),
    index: { sqlite: 'clicks_ip_address', postgres: 'clicks_ip_address' },
    ordered: true,
  },
  {
    name: 'attribution: click by fbclid',
    run: (db, s) => findClickByFbclid(db, s.storeId, 1, s.fbclid),
    index: { sqlite: 'sqlite_autoindex_clicks_2', postgres: 'click_keys_pk' }, // PostgreSQL: then one partition by (id, time)
  },
  {
    name: 'conversions: the attributed click, by id and the time the attribution scored',
    run: (db, s) => {
      const conversion = { account_id: s.accountId, livemode: 1, attributed_click_id: s.clickId } as ConversionsTable;
      return attributedClickOf(db, conversion, undefined, s.clickTime)();
    },
    // PostgreSQL: the time's one partition, by its key or its time index (a time is nearly unique).
    index: { sqlite: 'sqlite_autoindex_clicks_1', postgres: ['clicks_pkey', 'clicks_click_time'] },
    months: (s) => ({ from: s.clickTime, to: s.clickTime + 1 }),
  },
  {
    name: 'match quality: counts of a range',
    run: (db, s) => reportCounts(db, { ...reportScope(s), report: MATCH_QUALITY }),
    index: { sqlite: 'PRIMARY KEY', postgres: 'rollup_reports_pk' },
  },
  {
    // One row per day and destination, gathered by the database in the key's order (PostgreSQL
    // sorts what a bitmap scan found when the range is small; a year's range it walks in order).
    name: 'reconciliation: counts and trace ids per day and destination',
    run: (db, s) => reportCountsAndLists(db, { ...reportScope(s), report: RECONCILIATION }, TRACE_ITEM),
    index: { sqlite: 'PRIMARY KEY', postgres: 'rollup_reports_pk' },
    ordered: 'sqlite',
  },
  {
    name: 'reconciliation: the packed trace ids of a range (the same statement)',
    run: (db, s) => reportCountsAndLists(db, { ...reportScope(s), report: RECONCILIATION }, TRACE_ITEM),
    index: { sqlite: 'SEARCH rollup_report_traces USING PRIMARY KEY', postgres: 'rollup_report_traces_pk' },
  },
  {
    name: 'reconciliation: the oldest trace rows left to pack',
    run: (db) => packTraceRows(db as Writer, '2026-01-01', 1),
    index: { sqlite: 'rollup_reports_old_traces', postgres: 'rollup_reports_old_traces' },
    ordered: true,
  },
  {
    name: 'attribution: clicks by visitor id (same browser)',
    run: (db, s) => findClicksMatching(db, scope(s), 'visitor_id', s.visitorId, 10),
    index: { sqlite: 'clicks_visitor_id', postgres: 'clicks_visitor_id' },
    ordered: true,
  },
  {
    name: 'attribution: clicks by fbp (same browser)',
    run: (db, s) => findClicksMatching(db, scope(s), 'fbp', s.fbp, 10),
    index: { sqlite: 'clicks_fbp', postgres: 'clicks_fbp' },
    ordered: true,
  },
  {
    name: 'attribution: clicks by ttp (same browser)',
    run: (db, s) => findClicksMatching(db, scope(s), 'ttp', s.ttp, 10),
    index: { sqlite: 'clicks_ttp', postgres: 'clicks_ttp' },
    ordered: true,
  },
  {
    name: 'attribution: clicks by IPv6 network',
    run: (db, s) => findClicksMatching(db, scope(s), 'ip_network', s.ipNetwork, 10),
    index: { sqlite: 'clicks_ip_network', postgres: 'clicks_ip_network' },
    ordered: true,
  },
  {
    // One seek per day of the window: the count never reads the window's clicks.
    name: 'attribution: distinct browsers of an ambiguity key',
    run: (db, s) =>
      countSharedBrowsers(db, {
        days: Array.from({ length: 8 }, (_, i) => Math.floor(s.now / DAY_MS) - i),
        keys: { ip: s.ipKey },
        limit: 128,
      }),
    index: { sqlite: 'PRIMARY KEY', postgres: 'attribution_keys_pk' },
    scans: ['rows0'], // the at most 128 rows the seeks found, counted
    only: 'sqlite', // PostgreSQL counts inside the evidence function (the case below)
  },
  ...(['email', 'phone'] as const).flatMap((hash) =>
    [0, 1].map((statement) => ({
      name: `attribution: identity by ${hash} hash (${statement === 0 ? 'attributed' : 'any'} earlier conversions)`,
      run: (db: Reader, s: Seeded) =>
        identityLinks(
          db,
          { storeId: s.storeId, livemode: 1, after: s.now - 30 * DAY_MS, before: s.now },
          hash === 'email' ? { emailHash: s.emailHash } : { phoneHash: s.phoneHash },
          10,
        ),
      statement,
      index: { sqlite: `conversions_${hash}_hash`, postgres: `conversions_${hash}_hash` },
      // PostgreSQL, on this seed's few rows per monthly partition, may find them with a bitmap and
      // sort them (a top-10 of a handful) instead of merging the partitions' index order: which
      // one depends on how the 60 days fall across months, so only SQLite's order is asserted.
      ordered: 'sqlite' as const,
    })),
  ),
  ...(['email', 'phone'] as const).map((hash, statement) => ({
    // The browsers POST /v1/track/identify linked to the hash (migration 0026): one range, newest first.
    // PostgreSQL reads them the same way inside the evidence function's loop.
    name: `attribution: identity by ${hash} hash (identify links)`,
    run: (db: Reader, s: Seeded) => identifiedBrowsers(db, { storeId: s.storeId, livemode: 1 }, s, 3),
    statement,
    index: { sqlite: 'identity_links_recent', postgres: 'identity_links_recent' },
    ordered: true,
  })),
  {
    // PostgreSQL runs a conversion's lookups as one statement (SQLite: the cases above, one each).
    name: 'attribution: every lookup of a conversion in one statement',
    run: (db, s) =>
      evidenceClicks(db, {
        accountId: s.accountId,
        scope: scope(s),
        clickId: 'clk_z',
        fbclids: [s.fbclid, 'fbclid_z'],
        fingerprint: s.fingerprint,
        derivedFingerprints: [s.derived, 'derived_z'],
        ipAddress: s.ip,
        ipNetwork: s.ipNetwork,
        browsers: { visitorId: s.visitorId, fbp: s.fbp, ttp: s.ttp },
        identity: { emailHash: s.emailHash, phoneHash: s.phoneHash, after: scope(s).from - 300_000, before: s.now },
        limit: 10,
        counts: { days: [Math.floor(s.now / DAY_MS)], keys: { ip: s.ipKey, ip_user_agent: 1, fingerprint: 2 }, limit: 128 },
      }),
    // Every branch is bounded by the window (the identity one's conversions by 5 minutes more):
    // the planner reads only its months, never the other 60 days' nor the default partition.
    months: (s) => ({ from: scope(s).from - 300_000, to: scope(s).to }),
    index: {
      sqlite: [],
      postgres: [
        'clicks_pkey',
        'click_keys_pk',
        'clicks_fingerprint',
        'clicks_derived_fingerprint',
        'clicks_ip_address',
        'clicks_ip_network',
        'clicks_visitor_id',
        'clicks_fbp',
        'clicks_ttp',
        'conversions_email_hash',
        'conversions_phone_hash',
        'attribution_keys_pk',
      ],
    },
    every: true,
    only: 'postgres',
  },
  {
    name: 'conversion dedup: by (store, mode, event type, order id)',
    run: (db, s) => findConversionByKey(db, { storeId: s.storeId, livemode: 1, eventType: 'Purchase', orderId: s.orderId }),
    index: { sqlite: 'sqlite_autoindex_conversions_2', postgres: 'conversion_keys_pk' }, // PostgreSQL: then one partition by (id, time)
  },
  {
    name: 'GET /v1/clicks',
    run: (db, s) => listClicks(db, s.accountId, 1, {}, page),
    index: { sqlite: 'clicks_account_time', postgres: 'clicks_account_time' },
    ordered: true,
  },
  {
    name: 'GET /v1/clicks, next page',
    run: (db, s) => listClicks(db, s.accountId, 1, {}, { limit: 20, after: { time: s.now - DAY_MS, id: 'clk_z' } }),
    index: { sqlite: 'clicks_account_time', postgres: 'clicks_account_time' },
    ordered: true,
  },
  {
    name: 'GET /v1/clicks?storeId',
    run: (db, s) => listClicks(db, s.accountId, 1, { storeId: s.storeId }, page),
    // The query names the store and the account: either index yields the rows in order.
    index: { sqlite: 'clicks_store_time', postgres: ['clicks_store_time', 'clicks_account_time'] },
    ordered: true,
  },
  {
    name: 'GET /v1/conversions',
    run: (db, s) => listConversions(db, s.accountId, 1, {}, page),
    index: { sqlite: 'conversions_account_time', postgres: 'conversions_account_time' },
    ordered: true,
  },
  {
    name: 'GET /v1/conversions?storeId',
    run: (db, s) => listConversions(db, s.accountId, 1, { storeId: s.storeId }, page),
    index: { sqlite: 'conversions_store_time', postgres: ['conversions_store_time', 'conversions_account_time'] },
    ordered: true,
  },
  {
    name: 'GET /v1/conversions?storeId&startDate&endDate, next page',
    run: (db, s) =>
      listConversions(
        db,
        s.accountId,
        1,
        { storeId: s.storeId, from: s.now - 30 * DAY_MS, to: s.now },
        { limit: 20, after: { time: s.now - DAY_MS, id: 'conv_z' } },
      ),
    index: { sqlite: 'conversions_store_time', postgres: ['conversions_store_time', 'conversions_account_time'] },
    ordered: true,
  },
  {
    name: 'GET /v1/stores',
    run: (db, s) => listStores(db, s.accountId, {}, page),
    index: { sqlite: 'stores_account', postgres: 'stores_account' },
    ordered: true,
  },
  {
    name: 'GET /v1/stores/:id/ad-spend',
    run: (db, s) => listSpend(db, s.storeId, 1, span(s), page),
    // In date order from either index by date; the entries of one date (a few) are sorted by id.
    index: { sqlite: ['sqlite_autoindex_ad_spend_2', 'ad_spend_dates'], postgres: ['ad_spend_dedup', 'ad_spend_dates'] },
  },
  {
    name: 'Idempotency-Key lookup',
    run: (db, s) => findIdempotencyRecord(db, { accountId: s.accountId, livemode: 1, key: 'key_7' }),
    index: { sqlite: 'sqlite_autoindex_idempotency_keys_1', postgres: 'idempotency_keys_pk' },
  },
  // The outbox's indexes hold pending jobs only (migration 0036): any of them reads the backlog and
  // nothing else. PostgreSQL walks the one it prices lowest on this seed's few pending jobs (with a
  // backlog of hundreds, the due index's first entry for the next due time).
  {
    name: 'outbox: next due time',
    run: (db) => nextJobDueAt(db),
    index: { sqlite: 'destination_jobs_due', postgres: PENDING_JOB_INDEXES },
  },
  {
    name: 'outbox: due groups',
    run: (db, s) => dueJobGroups(db, s.now, 10),
    index: { sqlite: 'destination_jobs_due', postgres: PENDING_JOB_INDEXES },
  },
  {
    name: 'outbox: claim a group',
    run: (db, s) =>
      claimJobs(
        db as Kysely<DB>,
        { store_id: s.storeId, destination: 'meta', livemode: 1, kind: 'conversion', route: '123456:' },
        { owner: 'me', now: s.now, leaseUntil: s.now + 60_000, limit: 100 },
      ),
    index: { sqlite: 'destination_jobs_store_due', postgres: 'destination_jobs_store_due' },
  },
  {
    // The claim's update: by primary key, never a walk of every pending job (a backlog of other destinations' jobs).
    name: "outbox: lease a group's claimed jobs",
    run: (db, s) =>
      leaseJobs(
        db as Kysely<DB>,
        'meta',
        [
          { conversion_id: 'cv_a', job_key: '' },
          { conversion_id: 'cv_b', job_key: '' },
        ],
        'me',
        s.now + 60_000,
      ),
    index: { sqlite: 'sqlite_autoindex_destination_jobs_1', postgres: 'destination_jobs_pk' },
  },
  ...(['sent', 'pending', 'failed'] as const).map((status) => ({
    // A recording (destinations/record-outcome.ts): by primary key, never a walk of the due index over
    // every pending job — SQLite's planner took it for `status = 'pending'` behind a backlog.
    name: `outbox: record jobs ${status}`,
    run: (db: Reader, s: Seeded) =>
      markJobs(db as Kysely<DB>, 'meta', BATCH_JOBS, 'me', status, { now: s.now, attempts: 1, nextAttemptAt: s.now + 1000 }),
    index: { sqlite: 'sqlite_autoindex_destination_jobs_1', postgres: 'destination_jobs_pk' },
  })),
  {
    name: "outbox: renew a split batch's leases",
    run: (db, s) => renewLeases(db as Kysely<DB>, 'meta', BATCH_JOBS, 'me', s.now + 60_000),
    index: { sqlite: 'sqlite_autoindex_destination_jobs_1', postgres: 'destination_jobs_pk' },
  },
  {
    name: 'outbox: postpone refund jobs',
    run: (db, s) => postponeJobs(db as Kysely<DB>, 'meta', BATCH_JOBS, 'me', s.now + 60_000, s.now),
    index: { sqlite: 'sqlite_autoindex_destination_jobs_1', postgres: 'destination_jobs_pk' },
  },
  {
    // Destination health (api.md §12): the stale check and `oldestPendingAt`, one seek each.
    name: "outbox: a destination's oldest pending job",
    run: (db, s) => oldestPendingAt(db, s.storeId, 'meta'),
    index: { sqlite: 'destination_jobs_store_pending', postgres: 'destination_jobs_store_pending' },
    ordered: true,
  },
  {
    name: 'analytics: totals (metrics)',
    run: (db, s) => sumTotals(db, s.storeId, 1, span(s)),
    index: { sqlite: 'PRIMARY KEY', postgres: 'rollup_days_pk' },
  },
  {
    // Purchases in another currency than the store's (migration 0043): that currency's range only
    // (a rare one, as other currencies are: the seed's conversions are all in USD).
    name: 'analytics: purchases in other currencies (metrics)',
    run: (db, s) => sumConverted(db, s.storeId, 1, 'USD', ['GBP'], { from: s.now - 30 * DAY_MS, to: s.now + 1 }),
    index: { sqlite: 'conversions_store_currency', postgres: 'conversions_store_currency' },
  },
  {
    name: 'analytics: totals per day (timeseries)',
    run: (db, s) => totalsByDate(db, s.storeId, 1, span(s), 'USD'),
    index: { sqlite: 'PRIMARY KEY', postgres: 'rollup_days_pk' },
  },
  {
    name: 'analytics: totals per hour (timeseries)',
    run: (db, s) => totalsByHour(db, s.storeId, 1, span(s), 'USD'),
    index: { sqlite: 'PRIMARY KEY', postgres: 'rollup_hours_pk' },
  },
  {
    name: 'analytics: clicks per dimension value (breakdown)',
    run: (db, s) => sumDimensionClicks(db, s.storeId, 1, 'utm_campaign', span(s)),
    index: { sqlite: 'PRIMARY KEY', postgres: 'rollup_dimension_clicks_pk' },
  },
  {
    name: 'analytics: credits per dimension value (breakdown)',
    run: (db, s) => sumDimensionCredits(db, s.storeId, 1, 'utm_campaign', 'last_click', span(s), 'USD'),
    index: { sqlite: 'PRIMARY KEY', postgres: 'rollup_dimension_credits_pk' },
  },
  {
    // Whole months come from the month rollups (migration 0039); a range's partial edges by day, as above.
    name: 'analytics: clicks per dimension value over months (channel report)',
    run: (db, s) => sumDimensionClicks(db, s.storeId, 1, 'channel_campaign', yearSpan(s)),
    index: { sqlite: 'PRIMARY KEY', postgres: 'rollup_month_clicks_pk' },
  },
  {
    name: 'analytics: credits per dimension value over months (channel report)',
    run: (db, s) => sumDimensionCredits(db, s.storeId, 1, 'channel_campaign', 'last_click', yearSpan(s), 'USD'),
    index: { sqlite: 'PRIMARY KEY', postgres: 'rollup_month_credits_pk' },
  },
  {
    name: 'rollup queue: a store (analytics read)',
    run: (db, s) => readQueue(db, 5000, s.storeId),
    index: { sqlite: 'rollup_queue_store', postgres: 'rollup_queue_store' },
  },
  {
    name: 'rollup queue: all stores (background fold)',
    run: (db) => readQueue(db, 1000),
    // A WITHOUT ROWID table is its primary key: SQLite walks it in key order and stops at the LIMIT.
    index: { sqlite: 'rollup_queue', postgres: 'rollup_queue_pkey' },
    scans: ['rollup_queue'],
    ordered: true,
  },
  {
    name: 'retention: expired conversions',
    run: async (db, s) => expiredConversions(db, s.now - STEADY_CUTOFF_DAYS * DAY_MS, 1000).execute(),
    index: { sqlite: 'conversions_event_time', postgres: 'conversions_event_time' },
    // PostgreSQL sorts the expired rows when they are few (a bitmap of them, then the oldest
    // first) and walks the index in order when they are many: bounded either way.
    ordered: 'sqlite',
  },
  {
    name: 'retention: expired clicks',
    run: async (db, s) => expiredClicks(db, s.now - STEADY_CUTOFF_DAYS * DAY_MS, 1000).execute(),
    index: { sqlite: 'clicks_click_time', postgres: 'clicks_click_time' },
    // PostgreSQL sorts the expired rows when they are few (a bitmap of them, then the oldest
    // first) and walks the index in order when they are many: bounded either way.
    ordered: 'sqlite',
  },
  {
    name: 'retention: touchpoints of expired clicks',
    run: async (db, s) =>
      (db as Kysely<DB>)
        .deleteFrom('touchpoints')
        .where('click_id', 'in', [`clk_${s.now}`, 'clk_b'])
        .execute(),
    index: { sqlite: 'touchpoints_click', postgres: 'touchpoints_click' },
  },
];

describe(`query plans (${ENGINE})`, () => {
  let ctx: TestContext;
  let seeded: Seeded;
  const plans = new Map<string, string[]>();
  beforeAll(async () => {
    ctx = await createTestContext();
    seeded = await seed(ctx);
  }, 120_000);
  afterAll(async () => {
    if (process.env.WAYTRACK_PRINT_PLANS) {
      for (const [name, plan] of plans) console.log(`### ${name} (${ENGINE})\n${plan.join('\n')}\n`);
    }
    await ctx?.close();
  });

  it.each(CASES.filter((c) => !c.only || c.only === ENGINE))('$name', async (c) => {
    const statements = await statementsOf((db) => c.run(db, seeded));
    const statement = statements[c.statement ?? 0];
    expect(statement, 'the call made no statement').toBeDefined();
    const { plan, partitions } = await explain(ctx, statement as CompiledQuery);
    plans.set(c.name, [statement?.sql ?? '', ...plan]);
    const text = plan.join('\n');
    const expected = [c.index[ENGINE]].flat();
    const serves = (name: string) => (name === 'rollup_queue' ? text.includes('SCAN rollup_queue') : text.includes(name));
    const served = c.every ? expected.every(serves) : expected.some(serves);
    expect(served, `served by ${expected.join(' or ')}:\n${text}`).toBe(true);
    if (ENGINE === 'sqlite') {
      // A bare `SCAN t` reads the whole table; `SCAN t USING … INDEX` walks an index in order.
      const scans = plan.flatMap((line) => /^\s*SCAN (\w+)\s*$/.exec(line)?.[1] ?? []);
      expect(
        scans.filter((t) => !(c.scans ?? []).includes(t)),
        text,
      ).toEqual([]);
      expect(text, text).toMatch(/USING (COVERING )?INDEX|USING PRIMARY KEY|USING INTEGER PRIMARY KEY|SEARCH|SCAN rollup_queue/);
      if (c.ordered) expect(text, text).not.toMatch(/TEMP B-TREE FOR (LAST TERM OF )?(ORDER|GROUP) BY/);
    } else {
      const seqScans = [...text.matchAll(/Seq Scan on (\w+)/g)].map((m) => m[1] as string);
      expect(
        seqScans.filter((t) => !(c.scans ?? []).includes(t)),
        text,
      ).toEqual([]);
      expect(text, text).toMatch(/Index Scan|Index Only Scan|Bitmap Index Scan/);
      // No Sort node (a "Sort Key:" line under Merge Append is the partitions merged in order).
      // An Incremental Sort over a presorted time key only orders ties of one instant by id.
      if (c.ordered === true) expect(text, text).not.toMatch(/^\s*(->\s*)?Sort$/m);
      if (c.months) {
        const { from, to } = c.months(seeded);
        const conn = ctx.database.read as unknown as Kysely<DB>;
        const inWindow = [...(await listPartitions(conn, 'clicks')), ...(await listPartitions(conn, 'conversions'))]
          .filter((p) => p.lower !== undefined && p.upper !== undefined && p.lower <= to && p.upper > from)
          .map((p) => p.name);
        expect(partitions.length, text).toBeGreaterThan(0);
        expect(partitions.filter((p) => !inWindow.includes(p))).toEqual([]);
      }
    }
  });
});

/**
 * A new database has no statistics until its first ANALYZE (a server runs `PRAGMA optimize` when
 * it starts): SQLite's planner then guesses, and took an index whose leading column the statement
 * names (`status`, `event_time`) over the one that finds its few rows. These statements are
 * written so that it cannot: the outbox's recordings by primary key, the identity lookup by hash.
 */
describe.skipIf(ENGINE !== 'sqlite')('query plans on a new database, without statistics (sqlite)', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(() => ctx?.close());

  const now = Date.now();
  const cases: Array<{ name: string; run: (db: Kysely<DB>) => Promise<unknown>; index: string }> = [
    ...(['sent', 'pending', 'failed'] as const).map((status) => ({
      name: `outbox: record jobs ${status}`,
      run: (db: Kysely<DB>) => markJobs(db, 'tiktok', BATCH_JOBS, 'me', status, { now, nextAttemptAt: now + 1000 }),
      index: 'sqlite_autoindex_destination_jobs_1',
    })),
    {
      name: "outbox: renew a split batch's leases",
      run: (db) => renewLeases(db, 'tiktok', BATCH_JOBS, 'me', now),
      index: 'sqlite_autoindex_destination_jobs_1',
    },
    {
      name: 'outbox: postpone refund jobs',
      run: (db) => postponeJobs(db, 'tiktok', BATCH_JOBS, 'me', now, now),
      index: 'sqlite_autoindex_destination_jobs_1',
    },
    {
      name: 'attribution: identity by email hash',
      run: (db) =>
        identityLinks(db, { storeId: 'st_a', livemode: 1, after: now - 30 * DAY_MS, before: now }, { emailHash: 'e' }, 10),
      index: 'conversions_email_hash',
    },
  ];

  it.each(cases)('$name', async (c) => {
    const statement = (await statementsOf(c.run))[0] as CompiledQuery;
    const { plan } = await explain(ctx, statement);
    expect(plan.join('\n'), plan.join('\n')).toContain(c.index);
  });
});
