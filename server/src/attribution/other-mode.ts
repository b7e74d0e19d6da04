import type { Reader } from '../db/database.js';
import { findClick, findClickByFbclid } from '../db/repositories/clicks.js';
import type { ClicksTable } from '../db/schema.js';
import { type ConversionClues, fbclidFromFbc } from './evidence.js';

const modeName = (livemode: boolean) => (livemode ? 'live' : 'test');

/**
 * A conversion's click reference that names no click of its own mode but a click of the other
 * mode (a test conversion naming a live click's fbclid, or the reverse): which reference, and
 * that mode — nothing else of the click. Worded like the 404 for an id of the other mode
 * (tracking/not-found.ts: `reason: exists_in_other_mode`, `mode`).
 */
export interface ClickInOtherMode {
  field: 'clickId' | 'fbclid' | 'fbc';
  reason: 'exists_in_other_mode';
  mode: 'live' | 'test';
  message: string;
}

/**
 * Looks up the conversion's references (`clickId`, `fbclid`, the fbclid in `fbc`) in the
 * conversion's store, first in its own mode (a reference to a click of its own mode that is
 * outside the window is no mode mix-up), then in the other one. Called only for a conversion
 * that no reference attributed, so a correct integration never pays for it.
 */
export async function clickInOtherMode(db: Reader, clues: ConversionClues): Promise<ClickInOtherMode | undefined> {
  const references: Array<[ClickInOtherMode['field'], 'id' | 'fbclid', string]> = [];
  if (clues.clickId) references.push(['clickId', 'id', clues.clickId]);
  if (clues.fbclid) references.push(['fbclid', 'fbclid', clues.fbclid]);
  const inFbc = clues.fbc ? fbclidFromFbc(clues.fbc) : undefined;
  if (inFbc && inFbc !== clues.fbclid) references.push(['fbc', 'fbclid', inFbc]);
  if (references.length === 0) return undefined;

  const lookup = async (livemode: boolean, by: 'id' | 'fbclid', value: string): Promise<ClicksTable | undefined> => {
    const flag = livemode ? 1 : 0;
    if (by === 'fbclid') return findClickByFbclid(db, clues.storeId, flag, value);
    const click = await findClick(db, clues.accountId, flag, value);
    return click?.store_id === clues.storeId ? click : undefined;
  };
  for (const [, by, value] of references) if (await lookup(clues.livemode, by, value)) return undefined;
  const other = !clues.livemode;
  for (const [field, by, value] of references) {
    if (!(await lookup(other, by, value))) continue;
    const mode = modeName(other);
    return {
      field,
      reason: 'exists_in_other_mode',
      mode,
      message:
        `The ${field} names no click in ${modeName(clues.livemode)} mode: a click with that ${field} exists in ${mode} mode ` +
        `(test and live data never mix; record the conversion in ${mode} mode, e.g. with a wt_${mode}_ key)`,
    };
  }
  return undefined;
}
