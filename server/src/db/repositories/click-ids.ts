import type { Database, Reader, Writer } from '../database.js';
import type { ClickIdsTable, ClicksTable } from '../schema.js';
import { findClickByFbclid, insertClickOnce, type StoredClick } from './clicks.js';

/** A click with ids other than its fbclid, and those ids (kind → value). */
export interface MultiIdClick {
  click: ClicksTable;
  /** The ids kept in `click_ids` (not the fbclid), in lookup order. */
  ids: Array<{ kind: string; value: string }>;
  /** The click's real fbclid, when it has one (its own key). */
  fbclid?: string;
}

/** Another writer recorded one of the ids between our look and our insert: look again. */
class Raced extends Error {}

async function clickByTime(db: Reader, id: string, time: number): Promise<ClicksTable | undefined> {
  return db.selectFrom('clicks').selectAll().where('id', '=', id).where('click_time', '=', time).executeTakeFirst();
}

/** The click already recorded under one of these ids (store and mode), the first id's first. */
async function existingClick(db: Reader, input: MultiIdClick): Promise<ClicksTable | undefined> {
  const { store_id: storeId, livemode } = input.click;
  if (input.fbclid) {
    const byFbclid = await findClickByFbclid(db, storeId, livemode, input.fbclid);
    if (byFbclid) return byFbclid;
  }
  for (const { kind, value } of input.ids) {
    const key = await db
      .selectFrom('click_ids')
      .select(['click_id', 'click_time'])
      .where('store_id', '=', storeId)
      .where('livemode', '=', livemode)
      .where('kind', '=', kind)
      .where('value', '=', value)
      .executeTakeFirst();
    if (key) return clickByTime(db, key.click_id, Number(key.click_time));
  }
  return undefined;
}

/**
 * Records a click that carries ids other than an fbclid, once per (store, mode, id kind, id):
 * when any of its ids (its fbclid included) is already a click's, that click is the answer
 * (`duplicate`). In one transaction: the look, the ids, the click. On PostgreSQL two writers of
 * one id meet on `click_ids`' primary key: the second waits for the first's commit, finds the
 * id taken, rolls back and looks again (so it answers the first's click). On SQLite writes are
 * serialized, so the look decides.
 */
export async function insertMultiIdClickOnce(database: Database, input: MultiIdClick): Promise<StoredClick> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await database.write(async (trx) => {
        const existing = await existingClick(trx, input);
        if (existing) return { row: existing, duplicate: true };
        const rows: ClickIdsTable[] = input.ids
          .map(({ kind, value }) => ({
            store_id: input.click.store_id,
            livemode: input.click.livemode,
            kind,
            value,
            click_id: input.click.id,
            click_time: input.click.click_time,
          }))
          .sort((a, b) => (a.kind + a.value < b.kind + b.value ? -1 : 1));
        const inserted = await insertIds(trx, rows);
        if (inserted < rows.length) throw new Raced();
        const stored = await insertClickOnce(trx, input.click);
        if (stored.duplicate) throw new Raced(); // its fbclid key was taken meanwhile
        return stored;
      });
    } catch (error) {
      if (!(error instanceof Raced) || attempt >= 3) throw error;
    }
  }
}

async function insertIds(db: Writer, rows: ClickIdsTable[]): Promise<number> {
  if (rows.length === 0) return 0;
  const result = await db
    .insertInto('click_ids')
    .values(rows)
    .onConflict((oc) => oc.columns(['store_id', 'livemode', 'kind', 'value']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n);
}

/** The clicks (store, mode) recorded under any of these ids, for explicit references of a conversion. */
export async function clicksByIds(
  db: Reader,
  storeId: string,
  livemode: number,
  ids: Array<{ kind: string; value: string }>,
): Promise<ClicksTable[]> {
  const found: ClicksTable[] = [];
  for (const { kind, value } of ids) {
    const key = await db
      .selectFrom('click_ids')
      .select(['click_id', 'click_time'])
      .where('store_id', '=', storeId)
      .where('livemode', '=', livemode)
      .where('kind', '=', kind)
      .where('value', '=', value)
      .executeTakeFirst();
    if (!key) continue;
    const click = await clickByTime(db, key.click_id, Number(key.click_time));
    if (click) found.push(click);
  }
  return found;
}
