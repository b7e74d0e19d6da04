import { beforeEach, describe, expect, it } from 'vitest';
import {
  type ApiResponse,
  call,
  clickBody,
  conversionBody,
  expectError,
  makeStore,
  newAccountsEachTest,
  type TestContext,
} from '../helpers.js';

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

type Item = Record<string, unknown>;

/** One list endpoint, described so the same pagination checks run over each. */
interface ListSpec {
  name: string;
  /** Base URL of the list (with its filters), for a store of the account. */
  url: (storeId: string) => string;
  itemsKey: string;
  idKey: string;
  timeKey: string;
  /** Creates one item; `at` is its time in ms where the resource lets the client choose it. */
  create: (ctx: TestContext, storeId: string, at: number, key: string) => Promise<string>;
  /** Whether the client sets the item time (clicks and conversions) or the server does (stores). */
  clientTime: boolean;
  /** Whether the list is separated by mode (stores are shared by both). */
  perMode: boolean;
}

async function created(res: ApiResponse, idPath: (body: { data: Item }) => unknown): Promise<string> {
  if (res.status !== 200 && res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return String(idPath(res.body));
}

let counter = 0;
const unique = (prefix: string) => `${prefix}_${Date.now().toString(36)}_${++counter}`;

const LISTS: ListSpec[] = [
  {
    name: 'GET /v1/conversions',
    url: (storeId) => `/v1/conversions?storeId=${storeId}`,
    itemsKey: 'conversions',
    idKey: 'conversionId',
    timeKey: 'timestamp',
    clientTime: true,
    perMode: true,
    create: async (ctx, storeId, at, key) =>
      created(
        await call(ctx.app, 'POST', '/v1/track/conversion', {
          key,
          body: conversionBody(storeId, { orderId: unique('order'), timestamp: new Date(at).toISOString() }),
        }),
        (b) => b.data.conversionId,
      ),
  },
  {
    name: 'GET /v1/clicks',
    url: (storeId) => `/v1/clicks?storeId=${storeId}`,
    itemsKey: 'clicks',
    idKey: 'clickId',
    timeKey: 'timestamp',
    clientTime: true,
    perMode: true,
    create: async (ctx, storeId, at, key) =>
      created(
        await call(ctx.app, 'POST', '/v1/track/click', {
          key,
          body: clickBody(storeId, { fbclid: unique('fb'), timestamp: new Date(at).toISOString() }),
        }),
        (b) => b.data.clickId,
      ),
  },
  {
    name: 'GET /v1/stores',
    url: () => '/v1/stores?status=active',
    itemsKey: 'stores',
    idKey: 'id',
    timeKey: 'createdAt',
    clientTime: false,
    perMode: false,
    create: async (ctx, _storeId, _at, key) =>
      created(
        await call(ctx.app, 'POST', '/v1/stores', { key, body: { name: unique('s'), domain: 'x.test', platform: 'wix' } }),
        (b) => b.data.id,
      ),
  },
];

/** Newest first: by time, then by id, both descending. */
function compareNewestFirst(a: { time: string; id: string }, b: { time: string; id: string }): number {
  if (a.time !== b.time) return a.time < b.time ? 1 : -1;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

const withCursor = (url: string, cursor: string) => `${url}${url.includes('?') ? '&' : '?'}cursor=${encodeURIComponent(cursor)}`;

/** Replaces one character of a string with a different one of the base64url alphabet. */
function flipChar(value: string, index: number): string {
  const c = value[index] === 'A' ? 'B' : 'A';
  return value.slice(0, index) + c + value.slice(index + 1);
}

describe.each(LISTS)('pagination of $name', (spec) => {
  const ctx = newAccountsEachTest();
  let storeId: string;
  beforeEach(async () => {
    // For the stores list, this store is itself one of the items.
    storeId = await makeStore(ctx.app, ctx.a.live);
  });

  const get = (url: string, key = ctx.a.live) => call(ctx.app, 'GET', url, { key });

  /** Creates `n` items; client-timed ones spread over one day, two per minute so times tie. */
  async function createItems(n: number, base: number, key = ctx.a.live): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push(await spec.create(ctx, storeId, base + Math.floor(i / 2) * MINUTE_MS, key));
    return spec.clientTime ? ids : [storeId, ...ids];
  }

  const view = (item: Item) => ({ id: String(item[spec.idKey]), time: String(item[spec.timeKey]) });

  async function page(url: string, key = ctx.a.live) {
    const res = await get(url, key);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const data = res.body.data as { hasMore: boolean; nextCursor: string | null } & Record<string, Item[]>;
    return { items: (data[spec.itemsKey] as Item[]).map(view), hasMore: data.hasMore, nextCursor: data.nextCursor };
  }

  /** Walks every page; `between` runs after each page fetch. Asserts the hasMore/nextCursor contract. */
  async function walk(url: string, between?: () => Promise<void>, key = ctx.a.live) {
    const seen: Array<{ id: string; time: string }> = [];
    let next = url;
    for (let guard = 0; guard < 200; guard++) {
      const p = await page(next, key);
      seen.push(...p.items);
      if (!p.hasMore) {
        expect(p.nextCursor).toBeNull();
        return seen;
      }
      expect(typeof p.nextCursor).toBe('string');
      if (between) await between();
      next = withCursor(url, p.nextCursor as string);
    }
    throw new Error('the walk did not end');
  }

  it('uses a default limit of 20 and ends with nextCursor null', async () => {
    const ids = await createItems(spec.clientTime ? 21 : 20, Date.now() - 2 * DAY_MS);
    expect(ids).toHaveLength(21);
    const first = await page(spec.url(storeId));
    expect(first.items).toHaveLength(20);
    expect(first.hasMore).toBe(true);
    expect(typeof first.nextCursor).toBe('string');
    const second = await page(withCursor(spec.url(storeId), first.nextCursor as string));
    expect(second.items).toHaveLength(1);
    expect(second.hasMore).toBe(false);
    expect(second.nextCursor).toBeNull();
    expect([...first.items, ...second.items].map((i) => i.id).sort()).toEqual([...ids].sort());

    // exactly `limit` items left: hasMore is false, not a trailing empty page
    const exact = await page(`${spec.url(storeId)}&limit=21`);
    expect(exact.items).toHaveLength(21);
    expect(exact.hasMore).toBe(false);
    expect(exact.nextCursor).toBeNull();
  });

  it('rejects a limit outside 1–100 or not an integer', async () => {
    for (const limit of ['0', '101', 'abc', '-1', '1.5']) {
      const error = expectError(await get(`${spec.url(storeId)}&limit=${limit}`), 400, 'invalid_request');
      expect(error.details?.field).toBe('limit');
    }
    expect((await get(`${spec.url(storeId)}&limit=100`)).status).toBe(200);
    expect((await get(`${spec.url(storeId)}&limit=1`)).status).toBe(200);
  });

  it('returns every item exactly once, newest first by time then id', async () => {
    const ids = await createItems(11, Date.now() - 3 * DAY_MS);
    const seen = await walk(`${spec.url(storeId)}&limit=3`);
    expect(seen.map((i) => i.id).sort()).toEqual([...ids].sort());
    expect(new Set(seen.map((i) => i.id)).size).toBe(seen.length);
    expect(seen).toEqual([...seen].sort(compareNewestFirst));
    if (spec.clientTime) {
      // items sharing a time are ordered by id
      const tied = seen.filter((i) => i.time === seen[0]?.time);
      expect(tied.length).toBeGreaterThan(0);
      expect(tied.map((i) => i.id)).toEqual(
        tied
          .map((i) => i.id)
          .sort()
          .reverse(),
      );
    }
    // limit 1 gives the same sequence
    expect(await walk(`${spec.url(storeId)}&limit=1`)).toEqual(seen);
  });

  it('skips nothing and repeats nothing while items are written during the walk', async () => {
    const base = Date.now() - 4 * DAY_MS;
    const original = await createItems(12, base);
    let inserted = 0;
    const between = async () => {
      // a new item (newest of all) and, where the client sets times, one backdated into the walked range
      await spec.create(ctx, storeId, Date.now(), ctx.a.live);
      if (spec.clientTime) await spec.create(ctx, storeId, base + ((inserted % 6) * MINUTE_MS + MINUTE_MS / 2), ctx.a.live);
      inserted++;
    };
    const seen = await walk(`${spec.url(storeId)}&limit=4`, between);
    expect(inserted).toBeGreaterThanOrEqual(3);
    const seenIds = seen.map((i) => i.id);
    expect(new Set(seenIds).size).toBe(seenIds.length);
    for (const id of original) expect(seenIds).toContain(id);
    expect(seen).toEqual([...seen].sort(compareNewestFirst));
  });

  it('rejects a tampered cursor', async () => {
    await createItems(3, Date.now() - DAY_MS);
    const url = `${spec.url(storeId)}&limit=1`;
    const { nextCursor } = await page(url);
    const cursor = nextCursor as string;
    const [payload, signature] = cursor.split('.') as [string, string];
    const forgedPayload = Buffer.from(JSON.stringify([Date.now(), 'zzz'])).toString('base64url');
    const tampered = [
      `${flipChar(payload, 2)}.${signature}`,
      `${payload}.${flipChar(signature, 3)}`,
      `${forgedPayload}.${signature}`,
      payload,
      `${payload}.`,
      `${cursor}.extra`,
      'not-a-cursor',
      '%%%',
    ];
    for (const bad of tampered) {
      const error = expectError(await get(withCursor(url, bad)), 400, 'invalid_request');
      expect(error.details?.field).toBe('cursor');
    }
    // the genuine one still works
    expect((await get(withCursor(url, cursor))).status).toBe(200);
  });

  it('rejects a cursor used with different filters, on another list, or by another account', async () => {
    await createItems(3, Date.now() - DAY_MS);
    const url = `${spec.url(storeId)}&limit=1`;
    const cursor = (await page(url)).nextCursor as string;

    const otherFilter = spec.clientTime
      ? `${url.replace(`storeId=${storeId}`, `storeId=${await makeStore(ctx.app, ctx.a.live)}`)}`
      : url.replace('status=active', 'status=inactive');
    const noFilter = spec.clientTime ? url.replace(`storeId=${storeId}&`, '') : url.replace('status=active&', '');
    const otherList = spec.itemsKey === 'clicks' ? '/v1/conversions?limit=1' : '/v1/clicks?limit=1';
    for (const target of [otherFilter, noFilter, otherList]) {
      const error = expectError(await get(withCursor(target, cursor)), 400, 'invalid_request');
      expect(error.details?.field).toBe('cursor');
    }

    // another account, on the same list without a store filter
    const unfiltered = spec.clientTime ? noFilter : url;
    const own = (await page(unfiltered)).nextCursor as string;
    expect(typeof own).toBe('string');
    const foreign = expectError(await get(withCursor(unfiltered, own), ctx.b.live), 400, 'invalid_request');
    expect(foreign.details?.field).toBe('cursor');
  });

  it(
    spec.perMode ? 'rejects a cursor used with the other mode' : 'accepts its cursor in both modes (shared by both)',
    async () => {
      const base = Date.now() - DAY_MS;
      await createItems(3, base);
      await createItems(3, base, ctx.a.test);
      const url = `${spec.url(storeId)}&limit=1`;
      const live = await page(url);
      const test = await page(url, ctx.a.test);
      if (spec.perMode) {
        expect(
          expectError(await get(withCursor(url, live.nextCursor as string), ctx.a.test), 400, 'invalid_request').details?.field,
        ).toBe('cursor');
        expect(
          expectError(await get(withCursor(url, test.nextCursor as string), ctx.a.live), 400, 'invalid_request').details?.field,
        ).toBe('cursor');
      } else {
        // stores are configuration, the same list in both modes
        expect(test.items).toEqual(live.items);
        const next = await page(withCursor(url, live.nextCursor as string), ctx.a.test);
        expect(next.items).toEqual((await page(withCursor(url, live.nextCursor as string))).items);
        expect(next.items[0]?.id).not.toBe(live.items[0]?.id);
      }
    },
  );

  it('accepts its cursor whatever the order of the query parameters', async () => {
    await createItems(3, Date.now() - DAY_MS);
    const [path, query] = spec.url(storeId).split('?') as [string, string];
    const first = await page(`${path}?${query}&limit=1`);
    const reordered = `${path}?limit=1&${query}&cursor=${encodeURIComponent(first.nextCursor as string)}`;
    const second = await page(reordered);
    expect(second.items).toHaveLength(1);
    expect(second.items[0]?.id).not.toBe(first.items[0]?.id);
  });
});

describe('pagination of GET /v1/conversions with several filters', () => {
  const ctx = newAccountsEachTest();

  it('keeps its cursor valid when the filters are sent in another order, and rejects it when one changes', async () => {
    const storeId = await makeStore(ctx.app, ctx.a.live);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await call(ctx.app, 'POST', '/v1/track/conversion', { key: ctx.a.live, body: conversionBody(storeId) });
      ids.push(res.body.data.conversionId);
    }
    const first = await call(ctx.app, 'GET', `/v1/conversions?storeId=${storeId}&eventType=Purchase&attributed=false&limit=2`, {
      key: ctx.a.live,
    });
    expect(first.body.data.conversions).toHaveLength(2);
    const cursor = encodeURIComponent(first.body.data.nextCursor);
    const second = await call(
      ctx.app,
      'GET',
      `/v1/conversions?attributed=false&limit=2&eventType=Purchase&storeId=${storeId}&cursor=${cursor}`,
      { key: ctx.a.live },
    );
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    const all = [...first.body.data.conversions, ...second.body.data.conversions].map((c: Item) => c.conversionId);
    expect([...all].sort()).toEqual([...ids].sort());

    for (const changed of [
      `storeId=${storeId}&eventType=Lead&attributed=false`,
      `storeId=${storeId}&eventType=Purchase&attributed=true`,
      `storeId=${storeId}&eventType=Purchase`,
      `storeId=${storeId}&eventType=Purchase&attributed=false&startDate=2026-01-01`,
    ]) {
      const res = await call(ctx.app, 'GET', `/v1/conversions?${changed}&limit=2&cursor=${cursor}`, { key: ctx.a.live });
      expect(expectError(res, 400, 'invalid_request').details?.field).toBe('cursor');
    }
  });
});
