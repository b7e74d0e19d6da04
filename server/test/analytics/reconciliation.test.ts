import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueForRollups } from '../../src/db/repositories/rollup-queue.js';
import type { ConversionsTable, DestinationJobsTable } from '../../src/db/schema.js';
import { newId } from '../../src/ids.js';
import { call, createTestContext, expectError, makeStore, type TestContext } from '../helpers.js';

const DAY_MS = 86_400_000;
const KINDS = ['meta', 'google_ads', 'tiktok', 'microsoft'] as const;
type Kind = (typeof KINDS)[number];
// Zones with DST changes, half- and quarter-hour offsets, and day ranges around their changes.
const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Pacific/Chatham', 'Australia/Lord_Howe'];
const STARTS = ['2026-03-28', '2026-10-24', '2026-10-31', '2026-04-04', '2026-06-15'];
const RANGE_DAYS = 3;
const TRACES = ['trace-a', 'trace-b', 'trace-c'];

/** What a generated conversion should show at one destination; null: the destination does not receive it. */
type Expected = { status: 'pending' | 'sent' | 'failed' | 'skipped'; reason?: string; trace?: string } | null;

const metaState = fc.oneof(
  fc.constant({ kind: 'not_configured' as const }),
  fc.record({ kind: fc.constant('skipped' as const), reason: fc.constantFrom('expired', 'test_event_code_missing') }),
  fc.constant({ kind: 'pending' as const }),
  fc.record({ kind: fc.constant('sent' as const), trace: fc.option(fc.constantFrom(...TRACES), { nil: undefined }) }),
  fc.record({ kind: fc.constant('failed' as const), expired: fc.boolean() }),
);
const otherState = fc.oneof(
  fc.constant({ kind: 'none' as const }),
  fc.record({ kind: fc.constant('skipped' as const), reason: fc.constantFrom('expired', 'test_event_code_missing') }),
  fc.constant({ kind: 'pending' as const }),
  fc.record({ kind: fc.constant('sent' as const), trace: fc.option(fc.constantFrom(...TRACES), { nil: undefined }) }),
  fc.record({ kind: fc.constant('failed' as const), expired: fc.boolean() }),
);
const conversionArb = fc.record({
  offsetMs: fc.integer({ min: -DAY_MS, max: (RANGE_DAYS + 1) * DAY_MS }),
  live: fc.boolean().map((b) => b || Math.random() < 0.8),
  attributed: fc.boolean(),
  refunded: fc.boolean(),
  meta: metaState,
  google_ads: otherState,
  tiktok: otherState,
  microsoft: otherState,
});
const scenarioArb = fc.record({
  zone: fc.constantFrom(...ZONES),
  start: fc.constantFrom(...STARTS),
  conversions: fc.array(conversionArb, { maxLength: 25 }),
});

const dayOf = (ms: number, zone: string) => new Intl.DateTimeFormat('en-CA', { timeZone: zone }).format(new Date(ms));
const addDays = (date: string, days: number) =>
  new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);

describe('reconciliation', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(async () => ctx.close());

  const get = async (url: string) => {
    const res = await call(ctx.app, 'GET', url, { key: ctx.a.live });
    expect(res.status, `${url} ${JSON.stringify(res.body)}`).toBe(200);
    return res.body.data;
  };

  /** Ids of every conversion a list query gives, following nextCursor. */
  async function listIds(link: string): Promise<string[]> {
    const ids: string[] = [];
    let cursor: string | null = null;
    for (let guard = 0; guard < 50; guard++) {
      const data = await get(`${link}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      ids.push(...data.conversions.map((c: { conversionId: string }) => c.conversionId));
      cursor = data.nextCursor;
      if (!data.hasMore) break;
    }
    return ids;
  }

  async function insert(
    storeId: string,
    anchor: number,
    generated: Array<typeof conversionArb extends fc.Arbitrary<infer T> ? T : never>,
  ) {
    const expected: Array<
      { id: string; live: boolean; time: number; attributed: boolean; refunded: boolean } & Record<Kind, Expected>
    > = [];
    const conversions: ConversionsTable[] = [];
    const jobs: DestinationJobsTable[] = [];
    for (const [i, g] of generated.entries()) {
      const id = newId('conversion');
      const time = anchor + g.offsetMs;
      const livemode = g.live ? 1 : 0;
      const job = {
        account_id: ctx.a.accountId,
        store_id: storeId,
        livemode,
        attempts: 1,
        // Never due while the test runs: the dispatchers must leave the states as generated.
        next_attempt_at: Date.now() + 365 * DAY_MS,
        expires_at: time + 7 * DAY_MS,
      };
      const times = { claimed_by: null, created_at: time, updated_at: time };
      const error = (expired: boolean) =>
        expired ? 'Not delivered within 7 days of the event; last error: 500' : 'Invalid parameter';
      // Meta: the capi_* columns and its job in the outbox.
      const m = g.meta;
      const capi: Pick<ConversionsTable, 'capi_status' | 'capi_last_error' | 'capi_sent_at'> =
        m.kind === 'not_configured'
          ? { capi_status: 'skipped', capi_last_error: 'not_configured', capi_sent_at: null }
          : m.kind === 'skipped'
            ? { capi_status: 'skipped', capi_last_error: m.reason, capi_sent_at: null }
            : m.kind === 'failed'
              ? { capi_status: 'failed', capi_last_error: error(m.expired), capi_sent_at: null }
              : { capi_status: m.kind, capi_last_error: null, capi_sent_at: m.kind === 'sent' ? time : null };
      if (m.kind === 'pending' || m.kind === 'sent' || m.kind === 'failed') {
        jobs.push({
          conversion_id: id,
          destination: 'meta',
          job_key: '',
          kind: 'conversion',
          ...job,
          ...times,
          route: '123456:',
          payload: '{}',
          status: m.kind,
          last_error: capi.capi_last_error,
          trace_id: m.kind === 'sent' ? (m.trace ?? null) : null,
          sent_at: capi.capi_sent_at,
        });
      }
      const forwarding: Record<string, unknown> = {};
      const others: Partial<Record<Kind, Expected>> = {};
      for (const kind of ['google_ads', 'tiktok', 'microsoft'] as const) {
        const s = g[kind];
        if (s.kind === 'none') {
          others[kind] = null;
          continue;
        }
        if (s.kind === 'skipped') {
          forwarding[kind] = { status: 'skipped', attempts: 0, reason: s.reason, message: 'not sent' };
          others[kind] = { status: 'skipped', reason: s.reason };
          continue;
        }
        const lastError = s.kind === 'failed' ? error(s.expired) : null;
        forwarding[kind] = { status: s.kind, attempts: 1, ...(lastError && { lastError }) };
        jobs.push({
          conversion_id: id,
          destination: kind,
          job_key: '',
          kind: 'conversion',
          ...job,
          ...times,
          route: '',
          payload: '{}',
          status: s.kind,
          last_error: lastError,
          trace_id: s.kind === 'sent' ? (s.trace ?? null) : null,
          sent_at: s.kind === 'sent' ? time : null,
        });
        others[kind] =
          s.kind === 'failed'
            ? { status: 'failed', reason: s.expired ? 'expired' : 'delivery_error' }
            : { status: s.kind, ...(s.kind === 'sent' && s.trace && { trace: s.trace }) };
      }
      conversions.push({
        id,
        account_id: ctx.a.accountId,
        store_id: storeId,
        livemode,
        event_type: 'Purchase',
        order_id: `o${i}-${id}`,
        event_id: `o${i}`,
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
        attributed: g.attributed ? 1 : 0,
        attributed_click_id: null,
        attributed_fbclid: null,
        confidence: null,
        attribution_signal: null,
        ...capi,
        capi_attempts: 1,
        forwarding: Object.keys(forwarding).length ? JSON.stringify(forwarding) : null,
        refunded_minor: g.refunded ? 500 : 0,
      });
      const meta: Expected =
        m.kind === 'not_configured'
          ? null
          : m.kind === 'skipped'
            ? { status: 'skipped', reason: m.reason }
            : m.kind === 'failed'
              ? { status: 'failed', reason: m.expired ? 'expired' : 'delivery_error' }
              : { status: m.kind, ...(m.kind === 'sent' && m.trace && { trace: m.trace }) };
      expected.push({
        id,
        live: g.live,
        time,
        attributed: g.attributed,
        refunded: g.refunded,
        meta,
        google_ads: others.google_ads ?? null,
        tiktok: others.tiktok ?? null,
        microsoft: others.microsoft ?? null,
      });
    }
    await ctx.database.write(async (trx) => {
      if (conversions.length) await trx.insertInto('conversions').values(conversions).execute();
      if (jobs.length) await trx.insertInto('destination_jobs').values(jobs).execute();
      // Queued for the rollups the report reads, as every recording path does (tracking/conversions.ts).
      await enqueueForRollups(trx, 'conversion', conversions);
    });
    return expected;
  }

  const sorted = (ids: string[]) => [...ids].sort();

  it('counts every day and destination exactly as the conversions list does, and the counts add up', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async ({ zone, start, conversions }) => {
        const storeId = await makeStore(ctx.app, ctx.a.live, { timezone: zone });
        const anchor = Date.parse(`${start}T00:00:00Z`);
        const expected = await insert(storeId, anchor, conversions);
        const end = addDays(start, RANGE_DAYS - 1);
        const report = await get(`/v1/stores/${storeId}/reconciliation?startDate=${start}&endDate=${end}`);
        expect(report.timezone).toBe(zone);
        expect(report.days.map((d: { date: string }) => d.date)).toEqual([0, 1, 2].map((i) => addDays(start, i)));
        for (const day of report.days) {
          const mine = expected.filter((e) => e.live && dayOf(e.time, zone) === day.date);
          expect(day.received).toBe(mine.length);
          expect(sorted(await listIds(day.links.received))).toEqual(sorted(mine.map((e) => e.id)));
          expect(sorted(await listIds(day.links.attributed))).toEqual(sorted(mine.filter((e) => e.attributed).map((e) => e.id)));
          expect(day.attributed).toBe(mine.filter((e) => e.attributed).length);
          expect(sorted(await listIds(day.links.refunded))).toEqual(sorted(mine.filter((e) => e.refunded).map((e) => e.id)));
          expect(day.refunded).toBe(mine.filter((e) => e.refunded).length);
          // Without a destination, the filters hold at some destination.
          const anywhere = (pick: (s: NonNullable<Expected>) => boolean) =>
            sorted(mine.filter((e) => KINDS.some((k) => e[k] !== null && pick(e[k] as NonNullable<Expected>))).map((e) => e.id));
          expect(sorted(await listIds(`${day.links.received}&forwardingStatus=failed`))).toEqual(
            anywhere((s) => s.status === 'failed'),
          );
          expect(sorted(await listIds(`${day.links.received}&acknowledged=false`))).toEqual(
            anywhere((s) => !(s.status === 'sent' && s.trace !== undefined)),
          );
          for (const kind of KINDS) {
            const d = day.destinations[kind];
            const at = (pick: (s: NonNullable<Expected>) => boolean) =>
              sorted(mine.filter((e) => e[kind] !== null && pick(e[kind] as NonNullable<Expected>)).map((e) => e.id));
            // The counts add up.
            expect(d.eligible).toBe(d.sent + d.pending + d.failed.total + d.skipped.total);
            for (const bucket of [d.failed, d.skipped]) {
              expect(Object.values(bucket.byReason).reduce((a: number, b) => a + (b as number), 0)).toBe(bucket.total);
            }
            // Each count is its list's length, and the list holds the conversions the model says.
            const checks: Array<[number, string, string[]]> = [
              [d.eligible, d.links.eligible, at(() => true)],
              [d.sent, d.links.sent, at((s) => s.status === 'sent')],
              [d.acknowledged, d.links.acknowledged, at((s) => s.status === 'sent' && s.trace !== undefined)],
              [d.pending, d.links.pending, at((s) => s.status === 'pending')],
              [d.failed.total, d.links.failed, at((s) => s.status === 'failed')],
              [d.skipped.total, d.links.skipped, at((s) => s.status === 'skipped')],
            ];
            for (const status of ['failed', 'skipped'] as const) {
              for (const [reason, count] of Object.entries(d[status].byReason)) {
                checks.push([
                  count as number,
                  d.links[`${status}ByReason`][reason],
                  at((s) => s.status === status && s.reason === reason),
                ]);
              }
            }
            for (const [count, link, ids] of checks) {
              const listed = sorted(await listIds(link));
              expect(listed, link).toEqual(ids);
              expect(count, link).toBe(ids.length);
            }
            const traces = new Set(mine.map((e) => e[kind]?.trace).filter((t): t is string => t !== undefined));
            expect(d.traceIds).toEqual([...traces].sort());
          }
        }
      }),
      { numRuns: 10 },
    );
  }, 180_000);

  it('limits to one destination, and refuses bad input with the field', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const one = await get(`/v1/stores/${storeId}/reconciliation?startDate=2026-11-01&endDate=2026-11-02&destination=tiktok`);
    expect(Object.keys(one.days[0].destinations)).toEqual(['tiktok']);
    expect(one.days[0].destinations.tiktok).toMatchObject({ eligible: 0, sent: 0, traceIds: [] });
    // Every platform's day is in the answer (the response schema once dropped the four newest).
    const every = await get(`/v1/stores/${storeId}/reconciliation?startDate=2026-11-01&endDate=2026-11-01`);
    expect(Object.keys(every.days[0].destinations).sort()).toEqual([
      'google_ads',
      'linkedin',
      'meta',
      'microsoft',
      'pinterest',
      'reddit',
      'snapchat',
      'tiktok',
    ]);
    for (const kind of ['pinterest', 'snapchat', 'reddit', 'linkedin']) {
      const only = await get(`/v1/stores/${storeId}/reconciliation?startDate=2026-11-01&endDate=2026-11-01&destination=${kind}`);
      expect(Object.keys(only.days[0].destinations)).toEqual([kind]);
    }
    const bad = async (url: string, field: string) =>
      expect(expectError(await call(ctx.app, 'GET', url, { key: ctx.a.live }), 400, 'invalid_request').details?.field).toBe(
        field,
      );
    await bad(`/v1/stores/${storeId}/reconciliation?startDate=2026-11-03&endDate=2026-11-02`, 'startDate');
    await bad(`/v1/stores/${storeId}/reconciliation?destination=bing`, 'destination');
    await bad(`/v1/conversions?storeId=${storeId}&destination=bing`, 'destination');
    await bad(`/v1/conversions?storeId=${storeId}&forwardingStatus=lost`, 'forwardingStatus');
    const missing = await call(ctx.app, 'GET', '/v1/stores/store_nope/reconciliation', { key: ctx.a.live });
    expect(missing.status).toBe(404);
    const other = await call(ctx.app, 'GET', `/v1/stores/${storeId}/reconciliation`, { key: ctx.b.live });
    expect(other.status).toBe(404);
  });
});
