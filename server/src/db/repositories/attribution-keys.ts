import { type Kysely, sql } from 'kysely';
import { type AmbiguityRow, ambiguityRows, networkKey } from '../../ambiguity-keys.js';
import type { Reader, Writer } from '../database.js';
import type { AmbiguityCountKind } from '../engine.js';
import { prepared, preparedQuery } from '../prepared.js';
import type { ClicksTable, DB } from '../schema.js';

/**
 * The ambiguity counts (api.md §13, ambiguity-keys.ts): rows (day, key, browser) written with
 * each click, and the distinct browsers of a key over a window's days, read by a conversion.
 */

type Values = Record<string, number>;

/** One statement per click for its rows (up to three): a statement's fixed cost is most of a small insert's. */
function insertOf(count: number) {
  return prepared((db, v: Values) =>
    db
      .insertInto('attribution_keys')
      .values(
        Array.from({ length: count }, (_, i) => ({
          day: v[`day${i}`] as number,
          k: v[`k${i}`] as number,
          browser: v[`browser${i}`] as number,
        })),
      )
      .onConflict((oc) => oc.columns(['day', 'k', 'browser']).doNothing()),
  );
}
const inserts = new Map<number, ReturnType<typeof insertOf>>();

/** Rows per statement: the shapes compiled stay few. */
const ROWS_PER_STATEMENT = 96;

/**
 * Clicks' rows (SQLite; PostgreSQL writes them in the clicks' own statement), one statement for
 * up to 96: a browser seen again that day adds nothing.
 */
export async function insertAmbiguityRows(db: Writer, rows: AmbiguityRow[]): Promise<void> {
  for (let start = 0; start < rows.length; start += ROWS_PER_STATEMENT) {
    const part = rows.slice(start, start + ROWS_PER_STATEMENT);
    let insert = inserts.get(part.length);
    if (!insert) {
      insert = insertOf(part.length);
      inserts.set(part.length, insert);
    }
    const values: Values = {};
    part.forEach((row, i) => {
      values[`day${i}`] = row.day;
      values[`k${i}`] = row.k;
      values[`browser${i}`] = row.browser;
    });
    await insert(db, values);
  }
}

/**
 * Per key asked for, the distinct browsers among at most `limit` of its rows on the given days
 * (one seek per day: the key is (day, k, browser)), most recent days first, all keys in one
 * statement. Past the limit a value is so widely shared that the exact count no longer matters.
 */
function countOf(dayCount: number, kinds: AmbiguityCountKind[]) {
  return preparedQuery((db, v: Values) => {
    const days = Array.from({ length: dayCount }, (_, i) => v[`d${i}`] as number);
    const one = (kind: AmbiguityCountKind, i: number) =>
      db
        .selectFrom((eb) =>
          eb
            .selectFrom('attribution_keys')
            .select('browser')
            .where('day', 'in', days)
            .where('k', '=', v[`k${i}`] as number)
            .orderBy('day', 'desc')
            .limit(v.limit as number)
            .as(`rows${i}`),
        )
        .select((eb) => [sql.lit(kind).as('kind'), eb.fn.count<number>('browser').distinct().as('browsers')]);
    let query = one(kinds[0] as AmbiguityCountKind, 0);
    for (let i = 1; i < kinds.length; i++) query = query.unionAll(one(kinds[i] as AmbiguityCountKind, i));
    return query;
  });
}
const counts = new Map<string, ReturnType<typeof countOf>>();

/** The distinct browsers of each key over `days` (SQLite: one statement; PostgreSQL counts in its evidence function). */
export async function countSharedBrowsers(
  db: Reader,
  asked: { days: number[]; keys: Partial<Record<AmbiguityCountKind, number>>; limit: number },
): Promise<Partial<Record<AmbiguityCountKind, number>>> {
  const shared: Partial<Record<AmbiguityCountKind, number>> = {};
  const entries = Object.entries(asked.keys) as Array<[AmbiguityCountKind, number]>;
  if (entries.length === 0) return shared;
  const kinds = entries.map(([kind]) => kind);
  const shape = `${asked.days.length}:${kinds.join(',')}`;
  let count = counts.get(shape);
  if (!count) {
    count = countOf(asked.days.length, kinds);
    counts.set(shape, count);
  }
  const values: Values = { limit: asked.limit };
  asked.days.forEach((day, i) => {
    values[`d${i}`] = day;
  });
  entries.forEach(([, k], i) => {
    values[`k${i}`] = k;
  });
  const { rows } = await count(db, values);
  for (const row of rows) shared[row.kind as AmbiguityCountKind] = Number(row.browsers);
  return shared;
}

/** The oldest day before `beforeDay` that still has rows (no window reaches it), if any. */
export async function oldestAmbiguityDay(db: Reader, beforeDay: number): Promise<number | undefined> {
  const row = await db
    .selectFrom('attribution_keys')
    .select('day')
    .where('day', '<', beforeDay)
    .orderBy('day')
    .limit(1)
    .executeTakeFirst();
  return row?.day;
}

/** Deletes one day's rows (retention.ts, for days no window reaches). */
export async function deleteAmbiguityDay(db: Writer, day: number): Promise<void> {
  await db.deleteFrom('attribution_keys').where('day', '=', day).execute();
}

const BATCH = 2_000;

/**
 * Migration 0024 and bulk loads: the rows of every click since `since` (by click time, in pages),
 * and the /64 of every IPv6 click (`ip_network`). Idempotent. Returns the clicks read.
 */
export async function rebuildAmbiguityRows(db: Kysely<DB>, since: number): Promise<number> {
  let after: { time: number; id: string } | undefined;
  let read = 0;
  for (;;) {
    let query = db
      .selectFrom('clicks')
      .select([
        'id',
        'store_id',
        'livemode',
        'click_time',
        'is_bot',
        'ip_address',
        'user_agent',
        'fingerprint',
        'fbp',
        'ttp',
        'visitor_id',
      ])
      .where('click_time', '>=', since);
    const last = after;
    if (last) {
      query = query.where((eb) =>
        eb.or([eb('click_time', '>', last.time), eb.and([eb('click_time', '=', last.time), eb('id', '>', last.id)])]),
      );
    }
    const clicks = await query.orderBy('click_time').orderBy('id').limit(BATCH).execute();
    if (clicks.length === 0) return read;
    read += clicks.length;
    const rows = clicks.flatMap((c) => ambiguityRows(c as Parameters<typeof ambiguityRows>[0]));
    for (let i = 0; i < rows.length; i += 500) {
      await db
        .insertInto('attribution_keys')
        .values(rows.slice(i, i + 500))
        .onConflict((oc) => oc.columns(['day', 'k', 'browser']).doNothing())
        .execute();
    }
    const tail = clicks[clicks.length - 1] as (typeof clicks)[number];
    after = { time: tail.click_time, id: tail.id };
  }
}

/** Migration 0024: each stored IPv6 click's /64 (`ip_network`), in pages. */
export async function backfillIpNetworks(db: Kysely<DB>): Promise<void> {
  let afterId = '';
  for (;;) {
    const clicks: Array<Pick<ClicksTable, 'id' | 'click_time' | 'ip_address'>> = await db
      .selectFrom('clicks')
      .select(['id', 'click_time', 'ip_address'])
      .where('ip_address', 'like', '%:%')
      .where('id', '>', afterId)
      .orderBy('id')
      .limit(BATCH)
      .execute();
    if (clicks.length === 0) return;
    for (const click of clicks) {
      const network = networkKey(click.ip_address);
      if (!network?.endsWith('/64')) continue;
      // By id and time: on PostgreSQL the time finds the click's month.
      await db
        .updateTable('clicks')
        .set({ ip_network: network })
        .where('id', '=', click.id)
        .where('click_time', '=', click.click_time)
        .execute();
    }
    afterId = (clicks[clicks.length - 1] as (typeof clicks)[number]).id;
  }
}
