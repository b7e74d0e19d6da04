import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeMatchQuality } from '../../src/analytics/match-quality-view.js';
import { formEncode, reconcile } from '../../src/analytics/reconciliation.js';
import { reconciliationReport } from '../../src/analytics/reconciliation-report.js';
import { subtractDeleted, withReportRollup } from '../../src/analytics/report-rollups.js';
import { refreshRollups } from '../../src/analytics/rollups.js';
import { packTraces } from '../../src/analytics/trace-compaction.js';
import { addDays, startOfDay } from '../../src/calendar/dates.js';
import { showOnConversions } from '../../src/db/repositories/job-status.js';
import { matchQualityInRange } from '../../src/db/repositories/match-quality.js';
import { DESTINATION_KINDS, type DestinationKind, forwardingStates } from '../../src/db/repositories/reconciliation.js';
import { deleteExpiredEvents } from '../../src/db/repositories/retention.js';
import { enqueueForRollups } from '../../src/db/repositories/rollup-queue.js';
import type { ConversionsTable, DestinationJobsTable } from '../../src/db/schema.js';
import { newId } from '../../src/ids.js';
import { summarizeMatchQuality } from '../../src/quality/summary.js';
import { call, createTestContext, makeStore, type TestContext } from '../helpers.js';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const ZONES = ['UTC', 'Europe/Berlin', 'Asia/Kolkata', 'America/New_York'];
const START = '2026-03-27'; // Berlin's clocks go forward in the range
const RANGE_DAYS = 4;
const KINDS = ['meta', 'google_ads', 'tiktok'] as const;
const STATUSES = ['pending', 'sent', 'failed'] as const;
const TRACES = ['t1', 't2', 't3'];
const KEYS = ['clickId', 'email', 'phone', 'ipUserAgent'] as const;
const WARNINGS = ['email_invalid', 'phone_without_country_code', 'user_data_denied'] as const;

const quality = fc.record({
  score: fc.integer({ min: 0, max: 20 }).map((n) => n / 2),
  missing: fc.subarray([...KEYS]),
  warnings: fc.subarray([...WARNINGS]).map((codes) => codes.map((code) => ({ code, key: 'email', message: code }))),
});
const conversionArb = fc.record({
  offsetMs: fc.integer({ min: -DAY_MS, max: (RANGE_DAYS + 1) * DAY_MS }),
  live: fc.boolean().map((b) => b || Math.random() < 0.7),
  attributed: fc.boolean(),
  // Each destination's first state (null: it does not receive the conversion).
  meta: fc.option(fc.constantFrom(...STATUSES), { nil: null }),
  google_ads: fc.option(fc.constantFrom(...STATUSES), { nil: null }),
  tiktok: fc.option(fc.constantFrom(...STATUSES), { nil: null }),
  // The trace id its first `sent` jobs were acknowledged with.
  trace: fc.option(fc.constantFrom(...TRACES), { nil: null }),
  quality: fc.option(fc.dictionary(fc.constantFrom(...KINDS), quality, { maxKeys: 2 }), { nil: null }),
});
const stepArb = fc.oneof(
  fc.record({ op: fc.constant('read' as const) }),
  fc.record({
    op: fc.constant('status' as const),
    at: fc.nat(),
    kind: fc.constantFrom(...KINDS),
    status: fc.constantFrom(...STATUSES),
    trace: fc.option(fc.constantFrom(...TRACES), { nil: null }),
    expired: fc.boolean(),
  }),
  fc.record({ op: fc.constant('refund' as const), at: fc.nat(), part: fc.boolean() }),
  fc.record({ op: fc.constant('reattribute' as const), at: fc.nat(), quality: fc.option(quality, { nil: null }) }),
  fc.record({ op: fc.constant('retention' as const), hours: fc.integer({ min: 0, max: (RANGE_DAYS + 1) * 24 }) }),
  // Packing the trace ids of the days before `day` (trace-compaction.ts), as the refresher does two
  // days later, `rows` a write (few: a group is packed in part, the rest left as rows for a while).
  fc.record({
    op: fc.constant('pack' as const),
    day: fc.integer({ min: 0, max: RANGE_DAYS + 2 }),
    rows: fc.integer({ min: 1, max: 3 }),
  }),
);
const scenarioArb = fc.record({
  zone: fc.constantFrom(...ZONES),
  conversions: fc.array(conversionArb, { minLength: 1, maxLength: 12 }),
  steps: fc.array(stepArb, { maxLength: 12 }),
});
type Scenario = typeof scenarioArb extends fc.Arbitrary<infer T> ? T : never;

/** A day packed, a trace id added to it, packed again: the second packing keeps the first's ids. */
const PACKED_TWICE: Scenario = {
  zone: 'UTC',
  conversions: ['t1', 't2', null].map((trace, i) => ({
    offsetMs: (i + 1) * HOUR_MS,
    live: true,
    attributed: false,
    meta: trace ? ('sent' as const) : ('pending' as const),
    google_ads: null,
    tiktok: null,
    trace,
    quality: null,
  })),
  steps: [
    { op: 'pack', day: 3, rows: 1 },
    { op: 'status', at: 2, kind: 'meta', status: 'sent', trace: 't3', expired: false },
    { op: 'pack', day: 3, rows: 1 },
  ],
};

/**
 * The reconciliation report and the match-quality summary read rollups (analytics/report-
 * rollups.ts); whatever happens to the conversions — folded or still queued when it happens —
 * their answers equal the raw computation over the conversions as they are: job outcomes shown on
 * the conversion (Meta's columns, the others' forwarding entries, trace ids), refunds (through the
 * API), changes of attribution and match quality, retention deleting the oldest, and the trace
 * ids of past days packed (trace-compaction.ts) at any point between them.
 */
describe('report rollups property', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(async () => ctx?.close());

  /** Rollup answers (through the API) against the raw computation over today's rows. */
  async function compare(storeId: string, zone: string) {
    const start = '2026-03-26';
    const end = '2026-04-01';
    const from = Date.parse(`${start}T00:00:00Z`) - 2 * DAY_MS;
    const to = Date.parse(`${end}T00:00:00Z`) + 2 * DAY_MS;
    // The functions behind the routes: the routes' response schema shows four of the eight destinations.
    const tenant = { accountId: ctx.a.accountId, livemode: true };
    const report = await reconciliationReport(ctx.database, tenant, storeId, { startDate: start, endDate: end });
    const scope = { accountId: ctx.a.accountId, livemode: 1, storeId, from, to };
    const raw = reconcile({
      storeId,
      timezone: zone,
      startDate: start,
      endDate: end,
      kinds: DESTINATION_KINDS,
      conversions: await forwardingStates(ctx.database.read, scope),
    });
    expect(report.days).toEqual(raw);
    const meta = await reconciliationReport(ctx.database, tenant, storeId, {
      startDate: start,
      endDate: end,
      destination: 'meta',
    });
    expect(meta.days).toEqual(
      reconcile({
        storeId,
        timezone: zone,
        startDate: start,
        endDate: end,
        kinds: ['meta'],
        conversions: await forwardingStates(ctx.database.read, scope, ['meta']),
      }),
    );
    // The endpoint's computation before the rollups: every stored match quality of the range's instants.
    const mq = await computeMatchQuality(ctx.database, tenant, { storeId, startDate: start, endDate: end });
    const range = { from: startOfDay(start, zone), to: startOfDay(addDays(end, 1), zone) };
    expect(mq.destinations).toEqual(summarizeMatchQuality(await matchQualityInRange(ctx.database.read, storeId, 1, range)));
  }

  it("encodes the reports' list links as URLSearchParams does", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.constantFrom("a b!'()~*", '\uD800x')), (value) => {
        expect(formEncode(value)).toBe(new URLSearchParams({ v: value }).toString().slice(2));
      }),
      { numRuns: 2000 },
    );
  });

  it('answers as the raw computation after conversions, job outcomes, refunds, re-attribution and retention', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async ({ zone, conversions, steps }) => {
        const storeId = await makeStore(ctx.app, ctx.a.live, { timezone: zone, currency: 'EUR' });
        const anchor = Date.parse(`${START}T00:00:00Z`);
        const rows: ConversionsTable[] = [];
        const jobs: DestinationJobsTable[] = [];
        for (const [i, g] of conversions.entries()) {
          const id = newId('conversion');
          const time = anchor + g.offsetMs;
          const livemode = g.live ? 1 : 0;
          const forwarding: Record<string, unknown> = {};
          for (const kind of KINDS) {
            const status = g[kind];
            if (status === null) continue;
            if (kind !== 'meta') forwarding[kind] = { status, attempts: 0 };
            jobs.push({ ...jobRow(storeId, id, livemode, kind, status, time), trace_id: status === 'sent' ? g.trace : null });
          }
          rows.push({
            ...conversionRow(storeId, id, livemode, time, i),
            attributed: g.attributed ? 1 : 0,
            capi_status: g.meta ?? 'skipped',
            capi_last_error: g.meta === null ? 'not_configured' : null,
            forwarding: Object.keys(forwarding).length ? JSON.stringify(forwarding) : null,
            match_quality: g.quality ? JSON.stringify(g.quality) : null,
          });
        }
        await ctx.database.write(async (trx) => {
          await trx.insertInto('conversions').values(rows).execute();
          if (jobs.length) await trx.insertInto('destination_jobs').values(jobs).execute();
          await enqueueForRollups(trx, 'conversion', rows); // as every recording path does
        });
        for (const step of steps) {
          const row = rows[('at' in step ? step.at : 0) % rows.length] as ConversionsTable;
          if (step.op === 'read') await compare(storeId, zone);
          else if (step.op === 'status') await recordStatus(storeId, row, step);
          else if (step.op === 'refund') {
            if (row.livemode !== 1) continue;
            const refund = await call(ctx.app, 'POST', '/v1/track/refund', {
              key: ctx.a.live,
              body: {
                storeId,
                orderId: row.order_id,
                refundId: newId('refund'),
                currency: 'EUR',
                ...(step.part && { amount: 1 }),
              },
            });
            expect([200, 201, 400, 404], JSON.stringify(refund.body)).toContain(refund.status);
          } else if (step.op === 'reattribute') {
            await ctx.database.write((trx) =>
              withReportRollup(trx, [row.id], async () => {
                const current = await trx
                  .selectFrom('conversions')
                  .select('attributed')
                  .where('id', '=', row.id)
                  .executeTakeFirst();
                await trx
                  .updateTable('conversions')
                  .set({
                    attributed: current?.attributed === 1 ? 0 : 1,
                    match_quality: step.quality ? JSON.stringify({ meta: step.quality }) : null,
                  })
                  .where('id', '=', row.id)
                  .execute();
              }),
            );
          } else if (step.op === 'pack') {
            // As the refresher does: what is queued is folded first.
            await refreshRollups(ctx.database, { id: storeId, timezone: zone });
            await packTraces(ctx.database, anchor + (step.day + 2) * DAY_MS, () => false, step.rows);
          } else {
            const cutoff = anchor - DAY_MS + step.hours * HOUR_MS;
            await ctx.database.write((trx) => deleteExpiredEvents(trx, cutoff, 1000, subtractDeleted));
          }
        }
        await compare(storeId, zone);
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 25), examples: [[PACKED_TWICE]] },
    );
  });

  /** A job's outcome as delivery records it: the job, then its conversion (destinations/record-outcome.ts). */
  async function recordStatus(
    storeId: string,
    row: ConversionsTable,
    step: { kind: string; status: DestinationJobsTable['status']; trace: string | null; expired: boolean },
  ) {
    await ctx.database.write((trx) =>
      withReportRollup(
        trx,
        [row.id],
        async () => {
          const job = {
            ...jobRow(storeId, row.id, row.livemode, step.kind, step.status, row.event_time),
            attempts: 1,
            trace_id: step.status === 'sent' ? step.trace : null,
            last_error: step.status === 'failed' ? (step.expired ? 'Not delivered within 7 days' : 'HTTP 400') : null,
          };
          await trx
            .insertInto('destination_jobs')
            .values(job)
            .onConflict((oc) =>
              oc
                .columns(['conversion_id', 'destination', 'job_key'])
                .doUpdateSet({ status: job.status, trace_id: job.trace_id, last_error: job.last_error }),
            )
            .execute();
          await showOnConversions(trx, [job]);
        },
        // Only this destination's state moves, as in a delivery's recording (record-outcome.ts).
        step.kind as DestinationKind,
      ),
    );
  }

  it('stays exact while past days are packed at the same time as deliveries change them', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live, { timezone: 'UTC', currency: 'EUR' });
    const anchor = Date.parse(`${START}T00:00:00Z`);
    const rows = Array.from({ length: 40 }, (_, i): ConversionsTable => {
      const time = anchor + (i % 4) * DAY_MS + i * 60_000;
      return { ...conversionRow(storeId, newId('conversion'), 1, time, i), capi_status: 'sent' };
    });
    const jobs = rows.map((r, i) => ({
      ...jobRow(storeId, r.id, 1, 'meta', 'sent', r.event_time),
      trace_id: TRACES[i % 3] ?? null,
    }));
    await ctx.database.write(async (trx) => {
      await trx.insertInto('conversions').values(rows).execute();
      await trx.insertInto('destination_jobs').values(jobs).execute();
      await enqueueForRollups(trx, 'conversion', rows);
    });
    await refreshRollups(ctx.database, { id: storeId, timezone: 'UTC' });
    // Three writers change the days' trace ids while a fourth packs them, again and again (on
    // PostgreSQL each on a connection of its own: the packing's locks against the recordings').
    let changing = true;
    let packings = 0;
    const packer = (async () => {
      while (changing) {
        packings += (await packTraces(ctx.database)) > 0 ? 1 : 0;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    await Promise.all(
      [0, 1, 2].map(async (writer) => {
        for (let n = 0; n < 25; n++) {
          const row = rows[(writer * 7 + n * 3) % rows.length] as ConversionsTable;
          const sent = n % 4 !== 0;
          await recordStatus(storeId, row, {
            kind: 'meta',
            status: sent ? 'sent' : 'failed',
            trace: sent ? `t${(writer + n) % 5}` : null,
            expired: false,
          });
          await new Promise((resolve) => setTimeout(resolve, 2)); // room for the packer between writes
        }
      }),
    );
    changing = false;
    await packer;
    // At least the folded days' first packing (how many more ran between the writes is up to the scheduler).
    expect(packings).toBeGreaterThan(0);
    await compare(storeId, 'UTC');
    await packTraces(ctx.database);
    await compare(storeId, 'UTC');
  });

  function jobRow(
    storeId: string,
    conversionId: string,
    livemode: number,
    kind: string,
    status: DestinationJobsTable['status'],
    time: number,
  ): DestinationJobsTable {
    return {
      conversion_id: conversionId,
      destination: kind,
      job_key: '',
      kind: 'conversion',
      account_id: ctx.a.accountId,
      store_id: storeId,
      livemode,
      route: kind === 'meta' ? '123456:' : '',
      payload: '{}',
      status,
      attempts: 0,
      // Never due while the test runs: the dispatchers leave the states to the test.
      next_attempt_at: Date.now() + 365 * DAY_MS,
      expires_at: time + 7 * DAY_MS,
      claimed_by: null,
      last_error: null,
      trace_id: null,
      created_at: time,
      updated_at: time,
      sent_at: status === 'sent' ? time : null,
    };
  }

  function conversionRow(storeId: string, id: string, livemode: number, time: number, i: number): ConversionsTable {
    return {
      id,
      account_id: ctx.a.accountId,
      store_id: storeId,
      livemode,
      event_type: 'Purchase',
      order_id: `o${i}-${id}`,
      event_id: `o${i}-${id}`,
      event_time: time,
      created_at: time,
      value_minor: 1000,
      currency: 'EUR',
      products: '[]',
      user_data: '{}',
      email_hash: null,
      phone_hash: null,
      ip_address: null,
      user_agent: null,
      fingerprint: null,
      ref_click_id: null,
      ref_fbclid: null,
      ref_fbc: null,
      fbp: null,
      event_source_url: null,
      attributed: 0,
      attributed_click_id: null,
      attributed_fbclid: null,
      confidence: null,
      attribution_signal: null,
      capi_status: 'skipped',
      capi_attempts: 0,
      capi_last_error: null,
      capi_sent_at: null,
      refunded_minor: 0,
    };
  }
});
