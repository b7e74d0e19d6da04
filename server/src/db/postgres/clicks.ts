import { sql } from 'kysely';
import { ambiguityRows } from '../../ambiguity-keys.js';
import type { Reader, Writer } from '../database.js';
import type { ClickStatements, StoredClick } from '../engine.js';
import type { ClicksTable } from '../schema.js';
import { postgresDb } from './schema.js';

/** The partitioned clicks table cannot hold its key unique: `click_keys` does (migration 0007). */
export class PostgresClicks implements ClickStatements {
  /**
   * Clicks inserted once each, in one statement however many (a `WriteJob` batch). The
   * partitioned table cannot hold (store, mode, fbclid) unique; `click_keys` does (migration
   * 0007). The keys go in first: of two writers of one fbclid the second waits on the key until
   * the first commits, then finds it taken and reads the first's click. Keys, clicks, their
   * ambiguity-count rows (sorted, like the keys) and rollup queue rows are one statement
   * (PostgreSQL-only SQL: data-modifying CTEs), one round trip. The rows travel as one JSON parameter typed by the table's own row type, so the statement's text
   * is the same for any number of clicks (a named statement, see db/postgres/database.ts). Keys
   * go in sorted, so two batches sharing keys wait for each other in one order instead of
   * deadlocking. A click whose key was taken (by an earlier click of its batch, or by another
   * writer) answers the stored click, as one after the other would have.
   */
  async insertOnce(db: Writer, clicks: ClicksTable[]): Promise<StoredClick[]> {
    if (clicks.length === 0) return [];
    const keyOf = (click: ClicksTable) => `${click.store_id}\n${click.livemode}\n${click.fbclid}`;
    const keys = clicks.map(keyOf);
    const firstOfKey = new Map<string, ClicksTable>();
    clicks.forEach((click, i) => {
      const key = keys[i] as string;
      if (!firstOfKey.has(key)) firstOfKey.set(key, click);
    });
    const unique = [...firstOfKey.values()];
    const columns = sql.join((Object.keys(clicks[0] as ClicksTable) as Array<keyof ClicksTable>).map((c) => sql.ref(c)));
    // The ambiguity counts' rows of each click (ambiguity-keys.ts), kept for those inserted.
    const rows = unique.flatMap((click) => ambiguityRows(click).map((row) => ({ click_id: click.id, ...row })));
    const inserted = await sql<{ id: string }>`
      with input as (
        select * from json_populate_recordset(null::clicks, ${JSON.stringify(unique)}::json)
      ), key as (
        insert into click_keys (store_id, livemode, fbclid, click_id, click_time)
        select store_id, livemode, fbclid, id, click_time from input order by store_id, livemode, fbclid
        on conflict (store_id, livemode, fbclid) do nothing
        returning click_id
      ), click as (
        insert into clicks (${columns})
        select ${columns} from input where id in (select click_id from key)
        returning id, store_id
      ), ambiguity as (
        insert into attribution_keys (day, k, browser)
        select distinct r.day, r.k, r.browser
          from json_to_recordset(${JSON.stringify(rows)}::json) as r(click_id text, day integer, k bigint, browser bigint)
          where r.click_id in (select id from click)
          order by r.day, r.k, r.browser
        on conflict (day, k, browser) do nothing
      )
      insert into rollup_queue (id, store_id, kind, version)
      select id, store_id, 'click', 0 from click
      returning id`.execute(db);
    const insertedIds = new Set(inserted.rows.map((r) => r.id));
    const stored = new Map<ClicksTable, StoredClick>();
    for (const click of unique) {
      if (insertedIds.has(click.id)) {
        stored.set(click, { row: click, duplicate: false });
        continue;
      }
      const existing = await this.byFbclid(db, click.store_id, click.livemode, click.fbclid);
      if (!existing) throw new Error('click dedup conflict without a stored row');
      stored.set(click, { row: existing, duplicate: true });
    }
    return clicks.map((click, i) => {
      const first = firstOfKey.get(keys[i] as string) as ClicksTable;
      const answer = stored.get(first) as StoredClick;
      return first === click ? answer : { row: answer.row, duplicate: true };
    });
  }

  /** By its key, then by id and time (one partition; a lookup by fbclid would probe every month). */
  async byFbclid(db: Reader, storeId: string, livemode: number, fbclid: string): Promise<ClicksTable | undefined> {
    const key = await postgresDb(db)
      .selectFrom('click_keys')
      .select(['click_id', 'click_time'])
      .where('store_id', '=', storeId)
      .where('livemode', '=', livemode)
      .where('fbclid', '=', fbclid)
      .executeTakeFirst();
    if (!key) return undefined;
    return db
      .selectFrom('clicks')
      .selectAll()
      .where('id', '=', key.click_id)
      .where('click_time', '=', key.click_time)
      .executeTakeFirst();
  }

  /** Their dedup keys (migration 0007), found through the time index. */
  async deleteKeys(trx: Writer, before: number, clickIds: string[]): Promise<void> {
    await postgresDb(trx).deleteFrom('click_keys').where('click_time', '<', before).where('click_id', 'in', clickIds).execute();
  }
}
