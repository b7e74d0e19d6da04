import { type AmbiguityRow, ambiguityRows } from '../../attribution/keys.js';
import type { Reader, Writer } from '../database.js';
import type { ClickStatements, StoredClick } from '../engine.js';
import { prepared, preparedQuery } from '../prepared.js';
import { insertAmbiguityRows } from '../repositories/attribution-keys.js';
import { enqueueForRollups } from '../repositories/rollup-queue.js';
import type { ClicksTable } from '../schema.js';

const insertClick = prepared((db, click: ClicksTable) =>
  db
    .insertInto('clicks')
    .values(click)
    .onConflict((oc) => oc.columns(['store_id', 'livemode', 'fbclid']).doNothing()),
);

const clickByFbclid = preparedQuery((db, v: { storeId: string; livemode: number; fbclid: string }) =>
  db
    .selectFrom('clicks')
    .selectAll()
    .where('store_id', '=', v.storeId)
    .where('livemode', '=', v.livemode)
    .where('fbclid', '=', v.fbclid),
);

/** The clicks table holds its own unique key (store, mode, fbclid). */
export class SqliteClicks implements ClickStatements {
  /** One after the other: the table's unique key decides (writes are serialized); a new click's ambiguity rows go with it. */
  async insertOnce(db: Writer, clicks: ClicksTable[]): Promise<StoredClick[]> {
    const stored: StoredClick[] = [];
    const rows: AmbiguityRow[] = [];
    for (const click of clicks) {
      const inserted = await insertClick(db, click);
      if (Number(inserted.numAffectedRows ?? 0n) > 0) {
        await enqueueForRollups(db, 'click', [click]);
        rows.push(...ambiguityRows(click));
        stored.push({ row: click, duplicate: false });
        continue;
      }
      const existing = await this.byFbclid(db, click.store_id, click.livemode, click.fbclid);
      if (!existing) throw new Error('click dedup conflict without a stored row');
      stored.push({ row: existing, duplicate: true });
    }
    // The new clicks' ambiguity rows together: one statement for a batch's.
    await insertAmbiguityRows(db, rows);
    return stored;
  }

  async byFbclid(db: Reader, storeId: string, livemode: number, fbclid: string): Promise<ClicksTable | undefined> {
    return (await clickByFbclid(db, { storeId, livemode, fbclid })).rows[0];
  }

  /** The key goes with the click. */
  async deleteKeys(): Promise<void> {}
}
