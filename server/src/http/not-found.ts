import type { Reader } from '../db/database.js';
import { clickModeOf } from '../db/repositories/clicks.js';
import { conversionModeOf } from '../db/repositories/conversions.js';
import type { Tenant } from '../tenancy.js';
import { ApiError } from './errors.js';

const modeName = (livemode: boolean | number) => (livemode ? 'live' : 'test');

/**
 * The 404 for an event id the tenant's mode does not hold. When the same account holds it in
 * the other mode, the message says so (the commonest cause: a test key reading a live object,
 * or the reverse) and names nothing of the object but its mode. Another account's id is
 * indistinguishable from an unknown one.
 */
async function notFound(
  kind: 'conversion' | 'click',
  modeOf: (db: Reader, accountId: string, id: string) => Promise<number | undefined>,
  db: Reader,
  tenant: Tenant,
  id: string,
): Promise<ApiError> {
  const other = await modeOf(db, tenant.accountId, id);
  if (other === undefined || Boolean(other) === tenant.livemode) return new ApiError('not_found', `No ${kind} ${id}`);
  const exists = modeName(other);
  return new ApiError(
    'not_found',
    `No ${kind} ${id} in ${modeName(tenant.livemode)} mode: a ${kind} with that id exists in ${exists} mode ` +
      `(read it in ${exists} mode, e.g. with a wt_${exists}_ key)`,
    { field: 'id', reason: 'exists_in_other_mode', mode: exists },
  );
}

export const conversionNotFound = (db: Reader, tenant: Tenant, conversionId: string) =>
  notFound('conversion', conversionModeOf, db, tenant, conversionId);

export const clickNotFound = (db: Reader, tenant: Tenant, clickId: string) => notFound('click', clickModeOf, db, tenant, clickId);
