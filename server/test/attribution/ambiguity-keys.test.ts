import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ambiguityKey, dayOf } from '../../src/ambiguity-keys.js';
import { countSharedBrowsers } from '../../src/db/repositories/attribution-keys.js';
import type { DB } from '../../src/db/schema.js';
import { startRetention } from '../../src/retention.js';
import { call, clickBody, createTestContext, makeStore, type TestContext } from '../helpers.js';

// The ambiguity counts' rows (api.md §13, migration 0024): written with each click by both
// engines' insert paths (one click, a batch), one per key, browser and day; counted per window;
// days no window reaches pruned by retention.
const DAY = 86_400_000;
const IP = '198.51.100.40';
const UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

describe('ambiguity counts (attribution_keys)', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(async () => ctx.close());

  const rows = async () =>
    (ctx.database.read as unknown as Kysely<DB>).selectFrom('attribution_keys').select(['day', 'k', 'browser']).execute();

  it('a click adds a row per key; a browser seen again that day adds none; a bot adds none; a batch writes them too', async () => {
    const key = ctx.a.live;
    const storeId = await makeStore(ctx.app, key);
    const now = Date.now();
    const before = (await rows()).length;
    const click = (visitorId: string, fields: Record<string, unknown> = {}) =>
      call(ctx.app, 'POST', '/v1/track/click', {
        key,
        body: clickBody(storeId, { ipAddress: IP, userAgent: UA, fingerprint: 'fp-k', visitorId, ...fields }),
      });
    expect((await click('wt.one')).status).toBe(200);
    expect((await rows()).length).toBe(before + 3); // IP, IP + user agent, fingerprint
    await click('wt.one'); // the same browser, the same day
    await click('wt.bot', { userAgent: 'Googlebot/2.1 (+http://www.google.com/bot.html)' });
    expect((await rows()).length).toBe(before + 3);
    const batch = await call(ctx.app, 'POST', '/v1/track/batch', {
      key,
      body: {
        events: ['wt.two', 'wt.three'].map((visitorId) => ({
          type: 'click',
          ...clickBody(storeId, { ipAddress: IP, userAgent: UA, visitorId, timestamp: new Date(now - DAY).toISOString() }),
        })),
      },
    });
    expect(batch.status).toBe(200);
    const days = [dayOf(now), dayOf(now - DAY)];
    const keys = {
      ip: ambiguityKey(storeId, 1, 'ip', IP),
      ip_user_agent: ambiguityKey(storeId, 1, 'ip_user_agent', `${IP}|${UA}`),
      fingerprint: ambiguityKey(storeId, 1, 'fingerprint', 'fp-k'),
    };
    expect(await countSharedBrowsers(ctx.database.read, { days, keys, limit: 128 })).toEqual({
      ip: 3,
      ip_user_agent: 3,
      fingerprint: 1,
    });
    // Only today: the batch's clicks were yesterday's.
    expect(await countSharedBrowsers(ctx.database.read, { days: [dayOf(now)], keys, limit: 128 })).toMatchObject({ ip: 1 });
    // In the other mode nothing is shared.
    const testKeys = { ip: ambiguityKey(storeId, 0, 'ip', IP) };
    expect(await countSharedBrowsers(ctx.database.read, { days, keys: testKeys, limit: 128 })).toEqual({ ip: 0 });
  });

  it('retention deletes the rows of days no window reaches (older than 91 days), a day per write', async () => {
    const today = dayOf(Date.now());
    await ctx.database.write((trx) =>
      (trx as unknown as Kysely<DB>)
        .insertInto('attribution_keys')
        .values([
          { day: today - 120, k: 1, browser: 1 },
          { day: today - 95, k: 1, browser: 2 },
          { day: today - 95, k: 2, browser: 2 },
          { day: today - 90, k: 1, browser: 3 },
        ])
        .execute(),
    );
    let writes = 0;
    const retention = startRetention(
      {
        ...ctx.database,
        // Retention writes through its jobs (retention.ts): on SQLite the writer thread runs them.
        runWrite: (job, arg) => {
          writes++;
          return ctx.database.runWrite(job, arg);
        },
      },
      { days: 10_000, firstRunMs: 0 },
    );
    const deadline = Date.now() + 10_000;
    while ((await rows()).some((r) => r.day < today - 91) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await retention.stop();
    const left = await rows();
    expect(left.some((r) => r.day < today - 91)).toBe(false);
    expect(left).toContainEqual({ day: today - 90, k: 1, browser: 3 });
    expect(writes).toBeGreaterThanOrEqual(3); // the events' batch, then day −120, then day −95
  });
});
