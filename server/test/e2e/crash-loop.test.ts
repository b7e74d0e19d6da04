import { mkdtempSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeGraph } from '../destinations/meta/fake-graph.js';
import { countBy, PIXEL, sleep, TOKEN } from '../destinations/meta/setup.js';
import { ENGINE, openTestDatabase, type TestDatabase } from '../engine.js';
import { cli, request, type ServerProcess, SHORT_LEASES, serve } from './process.js';

/**
 * The crash loop: one database, the real server killed with SIGKILL at one point after another
 * while it takes clicks and conversions over HTTPS and forwards them to a fake Graph API. After
 * each kill a fresh process starts on the same data, and:
 * - every acknowledged click and conversion is there exactly once (an unanswered one at most
 *   once; sent again, it is there exactly once);
 * - the analytics rollups count each stored event once (a fold killed mid-transaction is neither
 *   lost nor applied twice);
 * - every stored conversion reaches the Graph API exactly once (counted by event_id).
 *
 * The kills land at named points through the test hook WAYTRACK_TEST_CRASH_AT (server/src/crash-
 * point.ts; the process writes `crash point <point> reached` and SIGKILLs itself there):
 *   commit      SQLite: a group commit is committed, not yet fsynced nor answered
 *   checkpoint  SQLite: a log checkpoint step has copied the log, the log is not restarted
 *   fold        a rollup fold's deltas are written inside its open write transaction
 *   forward     the dispatcher has leased jobs and is about to send them
 * On PostgreSQL the transaction point is a timed SIGKILL under load instead (writes are in
 * flight: some requests fail with the connection), alongside fold and forward.
 *
 * While a server armed to crash runs, the fake Graph API answers 500: nothing is accepted before
 * the kill, so a count above one at the fake could only be a redelivery of the restarted process.
 * (A kill between Meta's acknowledgement and its recording would make the event go out twice with
 * the same event_id, which Meta deduplicates: api.md promises at most once per recorded
 * acknowledgement, and docs/durability.md says so.)
 */
interface Round {
  point: 'commit' | 'checkpoint' | 'fold' | 'forward' | 'timed';
  /** Kill at the n-th time the point is reached. */
  nth: number;
}

/**
 * The first fold written (it only comes with deltas to write): under a loaded run a fold is often
 * stale (recordings and requests move the rows it read) and written again a second later, so a
 * second one may not come within the round's 30 s of load (CI runs missed it on both engines).
 */
const FIRST_FOLD = 1;

const ROUNDS: Round[] =
  ENGINE === 'sqlite'
    ? [
        { point: 'commit', nth: 40 },
        { point: 'checkpoint', nth: 3 },
        { point: 'fold', nth: FIRST_FOLD },
        { point: 'forward', nth: 2 },
      ]
    : [
        { point: 'timed', nth: 0 },
        { point: 'fold', nth: FIRST_FOLD },
        { point: 'forward', nth: 2 },
      ];

const LANES = 4;

interface Sent {
  kind: 'click' | 'conversion';
  marker: string;
  body: Record<string, unknown>;
  /** 200: acknowledged; otherwise (0: no answer) it may or may not have been stored. */
  status: number;
}

function post(server: ServerProcess, agent: https.Agent, urlPath: string, key: string, body: unknown): Promise<number> {
  const payload = JSON.stringify(body);
  return new Promise((resolve) => {
    const req = https.request(
      new URL(urlPath, server.url),
      {
        method: 'POST',
        agent,
        ca: server.ca,
        servername: 'localhost',
        timeout: 15_000,
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', () => resolve(0));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(0));
    req.end(payload);
  });
}

const exited = (server: ServerProcess) =>
  new Promise<NodeJS.Signals | null>((resolve) => {
    const { child } = server;
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.signalCode);
    child.once('exit', (_code, signal) => resolve(signal));
  });

describe('crash loop: kill -9 at each point, restart, nothing lost or doubled', () => {
  let fake: FakeGraph;
  let dataDir: string;
  let testDb: TestDatabase;
  let server: ServerProcess | undefined;
  let key: string;
  let storeId: string;
  const baseEnv: Record<string, string> = {
    ...SHORT_LEASES,
    CAPI_SYNC_WAIT_MS: '0',
    RATE_LIMIT_RPS: '1000000',
    RATE_LIMIT_BURST: '1000000',
    IP_RATE_LIMIT_RPS: '1000000',
  };
  const sentAll: Sent[] = [];
  /** Writes acknowledged so far in the current round. */
  let acknowledged = 0;

  beforeAll(async () => {
    fake = await FakeGraph.start();
    dataDir = mkdtempSync(path.join(tmpdir(), 'waytrack-crash-loop-'));
    testDb = await openTestDatabase(dataDir);
    await testDb.database.close(); // the processes open it themselves
    Object.assign(baseEnv, testDb.env, { META_GRAPH_URL: fake.url });
    const account = JSON.parse(cli(['account', 'create', '--email', 'crash@example.com', '--json'], baseEnv).stdout);
    key = account.keys.live as string;
    server = await serve(baseEnv);
    const store = await request(server, 'POST', '/v1/stores', {
      key,
      body: { name: 'Crash loop', domain: 'crash.example.com', platform: 'custom', pixelId: PIXEL, capiAccessToken: TOKEN },
    });
    expect(store.status).toBe(201);
    storeId = store.body.data.id as string;
    expect(await server.stop('SIGTERM')).toBe(0);
    server = undefined;
  }, 180_000);

  afterAll(async () => {
    await server?.stop('SIGKILL');
    await fake?.close();
    await testDb?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Clicks and conversions (each conversion naming the lane's last click) until the server is gone. */
  async function load(live: ServerProcess, round: number, stop: () => boolean): Promise<Sent[]> {
    const lanes = Array.from({ length: LANES }, async (_, lane) => {
      const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
      const sent: Sent[] = [];
      for (let i = 0; !stop(); i++) {
        const n = String(i).padStart(4, '0');
        const fbclid = `crash${round}l${lane}c${n}z`;
        const click = { storeId, fbclid, landingPage: `https://crash.example.com/p?utm_source=loop&utm_campaign=r${round}` };
        const clickStatus = await post(live, agent, '/v1/track/click', key, click);
        if (clickStatus === 200) acknowledged++;
        sent.push({ kind: 'click', marker: fbclid, body: click, status: clickStatus });
        if (clickStatus !== 200) break;
        const orderId = `crash${round}l${lane}o${n}z`;
        const conversion = { storeId, eventType: 'Purchase', orderId, eventValue: 10, currency: 'USD', fbclid };
        const conversionStatus = await post(live, agent, '/v1/track/conversion', key, conversion);
        if (conversionStatus === 200) acknowledged++;
        sent.push({ kind: 'conversion', marker: orderId, body: conversion, status: conversionStatus });
        if (conversionStatus !== 200) break;
      }
      agent.destroy();
      return sent;
    });
    return (await Promise.all(lanes)).flat();
  }

  /** What the database holds for the store: fbclids, order ids and the conversions' event ids. */
  async function stored() {
    const db = testDb.openAnother();
    try {
      const clicks = await db.read.selectFrom('clicks').select('fbclid').where('store_id', '=', storeId).execute();
      const conversions = await db.read
        .selectFrom('conversions')
        .select(['order_id', 'event_id'])
        .where('store_id', '=', storeId)
        .execute();
      return {
        clicks: countBy(clicks.map((c) => c.fbclid)),
        conversions: countBy(conversions.map((c) => c.order_id)),
        eventIds: conversions.map((c) => c.event_id),
      };
    } finally {
      await db.close();
    }
  }

  it(
    `${ROUNDS.map((r) => r.point).join(', ')}: every acknowledged write once, every event delivered once`,
    async () => {
      const summary: string[] = [];
      for (const [round, { point, nth }] of ROUNDS.entries()) {
        const startedAt = Date.now();
        // 1. A server armed to die at `point` takes writes until it is gone.
        fake.outage = { type: 'http500' };
        const armedEnv: Record<string, string> = { ...baseEnv };
        if (point !== 'timed') armedEnv.WAYTRACK_TEST_CRASH_AT = `${point}:${nth}`;
        if (ENGINE === 'sqlite') armedEnv.WAYTRACK_TEST_CHECKPOINT_BYTES = String(64 * 1024);
        const armed = await serve(armedEnv);
        server = armed;
        const gone = exited(armed);
        let dead = false;
        void gone.then(() => {
          dead = true;
        });
        const deadline = Date.now() + 30_000;
        const loading = load(armed, round, () => dead || Date.now() > deadline);
        if (point === 'timed') {
          // Killed from outside while the lanes' writes are in flight (after some were answered).
          acknowledged = 0;
          const until = Date.now() + 10_000;
          while (acknowledged < 20 && Date.now() < until) await sleep(20);
          armed.child.kill('SIGKILL');
        }
        const sent = await loading;
        const signal = await Promise.race([gone, sleep(15_000).then(() => 'still running')]);
        expect(signal, `round ${point}: the server died by SIGKILL\n${armed.output()}`).toBe('SIGKILL');
        if (point !== 'timed') expect(armed.output()).toContain(`crash point ${point} reached (${nth})`);
        const acked = sent.filter((s) => s.status === 200);
        const unanswered = sent.filter((s) => s.status !== 200);
        expect(acked.length, `round ${point}: writes acknowledged before the kill`).toBeGreaterThan(0);
        if (point === 'timed') expect(unanswered.length, 'writes in flight at the kill').toBeGreaterThan(0);
        sentAll.push(...sent);

        // 2. Restarted: every acknowledged write is there once, an unanswered one at most once.
        fake.outage = undefined;
        const restarted = await serve(baseEnv);
        server = restarted;
        const before = await stored();
        for (const s of sentAll) {
          const n = (s.kind === 'click' ? before.clicks : before.conversions).get(s.marker) ?? 0;
          if (s.status === 200) expect(n, `acknowledged ${s.kind} ${s.marker} after ${point}`).toBe(1);
          else expect(n, `unanswered ${s.kind} ${s.marker} after ${point}`).toBeLessThanOrEqual(1);
        }
        // Sent again (as a client retries): each is then there exactly once.
        for (const s of unanswered) {
          const agent = new https.Agent({ keepAlive: false });
          const status = await post(restarted, agent, `/v1/track/${s.kind}`, key, s.body);
          expect(status, `retry of ${s.marker}`).toBe(200);
          s.status = status;
        }
        const after = await stored();
        for (const s of sentAll) {
          expect((s.kind === 'click' ? after.clicks : after.conversions).get(s.marker), s.marker).toBe(1);
        }

        // 3. The rollups count each stored event once.
        const metrics = await request(restarted, 'GET', `/v1/analytics/metrics?storeId=${storeId}`, { key });
        expect(metrics.status).toBe(200);
        expect(metrics.body.data.totalClicks, `clicks in the rollups after ${point}`).toBe(after.clicks.size);
        expect(metrics.body.data.totalConversions, `conversions in the rollups after ${point}`).toBe(after.conversions.size);

        // 4. Every stored conversion reaches the Graph API once (leases of the killed process end after 4 s).
        const expected = new Set(after.eventIds);
        await fake.waitFor(
          () => new Set(fake.acceptedEventIds()).size >= expected.size,
          40_000,
          `all ${expected.size} events delivered after ${point}`,
        );
        await sleep(500); // a second delivery would arrive now
        const deliveries = countBy(fake.acceptedEventIds());
        for (const id of expected) expect(deliveries.get(id), `deliveries of ${id} after ${point}`).toBe(1);
        expect(deliveries.size).toBe(expected.size);

        expect(await restarted.stop('SIGTERM')).toBe(0);
        server = undefined;
        summary.push(
          `${point}: ${acked.length} acknowledged, ${unanswered.length} unanswered (resent), ` +
            `${expected.size} events delivered once so far, ${Date.now() - startedAt} ms`,
        );
      }
      console.log(`crash loop (${ENGINE}):\n  ${summary.join('\n  ')}`);
    },
    ENGINE === 'sqlite' ? 240_000 : 200_000,
  );
});
