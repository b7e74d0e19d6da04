import type { Executor } from '../db/database.js';
import { findClick, findClickByFbclid } from '../db/repositories/clicks.js';
import type { ClicksTable } from '../db/schema.js';
import type { CandidateClick, Evidence } from './model.js';

/** The click references a conversion may carry (extension fields of the conversion body). */
export interface ClickReferences {
  clickId?: string;
  fbclid?: string;
  fbc?: string;
}

/** The fbclid inside an fbc value `fb.<subdomain>.<creation ms>.<fbclid>`. */
export function fbclidFromFbc(fbc: string): string | undefined {
  return /^fb\.\d\.\d+\.([A-Za-z0-9_.-]{1,500})$/.exec(fbc)?.[1];
}

export function toCandidate(row: ClicksTable): CandidateClick {
  return { id: row.id, fbclid: row.fbclid, clickTime: row.click_time, isBot: row.is_bot === 1 };
}

/** Explicitly referenced clicks of this store and mode, each by a unique-index point lookup. */
export async function explicitEvidence(
  db: Executor,
  scope: { accountId: string; storeId: string; livemode: number },
  refs: ClickReferences,
): Promise<Evidence[]> {
  const found = new Map<string, ClicksTable>();
  if (refs.clickId) {
    const click = await findClick(db, scope.accountId, scope.livemode, refs.clickId);
    if (click && click.store_id === scope.storeId) found.set(click.id, click);
  }
  const fbclids = new Set<string>();
  if (refs.fbclid) fbclids.add(refs.fbclid);
  const fromFbc = refs.fbc ? fbclidFromFbc(refs.fbc) : undefined;
  if (fromFbc) fbclids.add(fromFbc);
  for (const fbclid of fbclids) {
    const click = await findClickByFbclid(db, scope.storeId, scope.livemode, fbclid);
    if (click) found.set(click.id, click);
  }
  return [...found.values()].map((row) => ({ click: toCandidate(row), signal: 'explicit' as const }));
}
