import type { Kysely } from 'kysely';
import { networkKey } from '../../attribution/ip.js';
import { type AmbiguityRow, ambiguityRows } from '../../attribution/keys.js';
import type { Reader, Writer } from '../database.js';
import type { AmbiguityCountKind } from '../engine.js';
import { prepared, preparedQuery } from '../prepared.js';
import type { ClicksTable, DB } from '../schema.js';

/**
 * The ambiguity counts (api.md §13, attribution/keys.ts): rows (day, key, browser) written with
 * each click, and the distinct browsers of a key over a window's days, read by a conversion.
 */

const insertRow = prepared((db, row: AmbiguityRow) =>
  db
    .insertInto('attribution_keys')
    .values(row)
    .onConflict((oc) => oc.columns(['day', 'k', 'browser']).doNothing()),
);

/** A click's rows, one statement each (SQLite: in-process, a few µs; a browser seen again that day adds nothing). */
export async function insertAmbiguityRows(db: Writer, rows: AmbiguityRow[]): Promise<void> {
  for (const row of rows) await insertRow(db, row);
}

type CountLookup = ReturnType<typeof countLookup>;
const countLookups = new Map<number, CountLookup>();

/**
 * Distinct browsers among at most `limit` rows of key `k` on the given days (one seek per day:
 * the key is (day, k, browser)), most recent days first. Past the limit the key is so widely
 * shared that the count's exact value no longer matters (its evidence is worth next to nothing).
 */
function countLookup(dayCount: number) {
  type Values = { k: number; limit: number } & Record<`d${number}`, number>;
  return preparedQuery((db, v: Values) =>
    db
      .selectFrom((eb) =>
        eb
          .selectFrom('attribution_keys')
          .select('browser')
          .where(
            'day',
            'in',
            Array.from({ length: dayCount }, (_, i) => v[`d${i}`] as number),
          )
          .where('k', '=', v.k)
          .orderBy('day', 'desc')
          .limit(v.limit)
          .as('rows'),
      )
      .select((eb) => eb.fn.count<number>('browser').distinct().as('browsers')),
  );
}

/** The distinct browsers of each key over `days` (SQLite: one statement per key; PostgreSQL counts in its evidence function). */
export async function countSharedBrowsers(
  db: Reader,
  counts: { days: number[]; keys: Partial<Record<AmbiguityCountKind, number>>; limit: number },
): Promise<Partial<Record<AmbiguityCountKind, number>>> {
  const shared: Partial<Record<AmbiguityCountKind, number>> = {};
  const entries = Object.entries(counts.keys) as Array<[AmbiguityCountKind, number]>;
  if (entries.length === 0) return shared;
  let lookup = countLookups.get(counts.days.length);
  if (!lookup) {
    lookup = countLookup(counts.days.length);
    countLookups.set(counts.days.length, lookup);
  }
  const days = Object.fromEntries(counts.days.map((day, i) => [`d${i}`, day]));
  for (const [kind, k] of entries) {
    const { rows } = await lookup(db, { k, limit: counts.limit, ...days });
    shared[kind] = Number(rows[0]?.browsers ?? 0);
  }
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
