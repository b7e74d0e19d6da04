import { withReportRollup } from '../analytics/report-rollups.js';
import { withConversionRollup } from '../analytics/rollups.js';
import { attributeConversion } from '../attribution/evidence.js';
import { hashCustomerData } from '../customer-data.js';
import type { Database, Writer } from '../db/database.js';
import { findClick } from '../db/repositories/clicks.js';
import { findConversion } from '../db/repositories/conversions.js';
import type { ConversionsTable, StoresTable } from '../db/schema.js';
import { fxFor } from '../fx/record.js';
import { normalizeCurrency, toMinorUnits } from '../money.js';
import { setMatchQuality } from '../quality/record.js';
import type { Tenant } from '../tenancy.js';
import { OTHER_CLICK_ID_KINDS } from '../tracking/click-ids.js';
import { applyReattribution, cluesOf, policyOf } from '../tracking/conversion-attribution.js';
import type { ConversionInput } from '../tracking/conversions.js';
import { replanDestinations } from '../tracking/reattribution-effects.js';

/**
 * One order, two reports (api.md §13 "Shopify checkout"; docs/api.md "Shopify checkout pixel"):
 * the checkout pixel's event (the buyer's browser: its ids, cookies and click ids) and the shop's
 * order webhook (the shop's own money, currency, products and customer). Whichever arrives first
 * records the conversion (dedup by store, mode, Purchase and orderId: one row, one rollup); the
 * later one never records another, and fills in what the first lacked:
 * - browser evidence (visitorId, fbp, ttp, fbc, fbclid and the other click ids, IP, user agent,
 *   page): any side fills a column the conversion does not have yet, and never overwrites one;
 * - money, currency, products and customer data: the webhook's replace the pixel's (a browser
 *   can report anything; the shop's figures are the conversion's), once.
 * When the filled-in evidence makes a click more probable than the recorded winner, the
 * conversion is re-attributed (tracking/reattribution.ts: its rollups move once, its match
 * quality, destination jobs and `conversion.attributed` follow).
 */

/** The browser-evidence columns of a conversion, as the conversion's own input would set them. */
type Evidence = Partial<
  Pick<
    ConversionsTable,
    | 'visitor_id'
    | 'fbp'
    | 'ttp'
    | 'ref_fbc'
    | 'ref_fbclid'
    | 'ref_ids'
    | 'ip_address'
    | 'user_agent'
    | 'event_source_url'
    | 'fingerprint'
  >
>;

/** The API field each evidence column is filled from (the answer's `filled` names them so). */
const FIELD_OF: Record<keyof Evidence, string> = {
  visitor_id: 'visitorId',
  fbp: 'fbp',
  ttp: 'ttp',
  ref_fbc: 'fbc',
  ref_fbclid: 'fbclid',
  ref_ids: 'clickIds',
  ip_address: 'ipAddress',
  user_agent: 'userAgent',
  event_source_url: 'eventSourceUrl',
  fingerprint: 'fingerprint',
};

function refIds(json: string | null | undefined): Record<string, string> {
  return json ? (JSON.parse(json) as Record<string, string>) : {};
}

/**
 * The columns of `input`'s evidence that `row` lacks. The other click ids are merged kind by
 * kind: a kind the conversion already names keeps its value.
 */
export function missingEvidence(row: ConversionsTable, input: ConversionInput): Evidence {
  const missing: Evidence = {};
  const fill = <K extends keyof Evidence>(column: K, value: Evidence[K] | undefined) => {
    if (value !== undefined && value !== null && (row[column] === null || row[column] === undefined)) missing[column] = value;
  };
  fill('visitor_id', input.visitorId);
  fill('fbp', input.fbp);
  fill('ttp', input.ttp);
  fill('ref_fbc', input.fbc);
  fill('ref_fbclid', input.fbclid);
  fill('ip_address', input.ipAddress);
  fill('user_agent', input.userAgent);
  fill('event_source_url', input.eventSourceUrl);
  fill('fingerprint', input.fingerprint);
  const known = refIds(row.ref_ids);
  const added: Record<string, string> = {};
  for (const kind of OTHER_CLICK_ID_KINDS) {
    const value = input[kind];
    if (value !== undefined && known[kind] === undefined) added[kind] = value;
  }
  if (Object.keys(added).length > 0) missing.ref_ids = JSON.stringify({ ...known, ...added });
  return missing;
}

export interface Merged {
  row: ConversionsTable;
  /** The API fields the later report filled in (`visitorId`, `fbc`, …; `eventValue`, … for the webhook's money). */
  filled: string[];
}

/** Fills in the evidence the stored conversion lacks; decided on the row as it is inside the write. */
export async function fillEvidence(database: Database, tenant: Tenant, id: string, input: ConversionInput): Promise<Merged> {
  const livemode = tenant.livemode ? 1 : 0;
  return database.write(async (trx) => {
    const current = await findConversion(trx, tenant.accountId, livemode, id);
    if (!current) throw new Error(`conversion ${id} vanished while its order was merged`);
    const missing = missingEvidence(current, input);
    const columns = Object.keys(missing) as Array<keyof Evidence>;
    if (columns.length === 0) return { row: current, filled: [] };
    await trx.updateTable('conversions').set(missing).where('id', '=', id).execute();
    return { row: { ...current, ...missing }, filled: columns.map((c) => FIELD_OF[c]) };
  });
}

/**
 * The webhook's money, currency, products and customer data in place of the pixel's, when the
 * conversion still holds the pixel's (`source = 'pixel'`); marks it `pixel_confirmed`. The
 * analytics rollups move with the value (withConversionRollup subtracts what was folded and adds
 * the new row); the day's exchange rate and the match quality follow the new currency and data;
 * destination jobs still pending are planned again with them (reattribution-effects.ts).
 */
export async function confirmPixelMoney(
  database: Database,
  store: StoresTable,
  tenant: Tenant,
  id: string,
  input: ConversionInput,
): Promise<Merged> {
  const livemode = tenant.livemode ? 1 : 0;
  const stored = await findConversion(database.read, tenant.accountId, livemode, id);
  if (stored?.source !== 'pixel') return { row: stored as ConversionsTable, filled: [] };
  const currency = normalizeCurrency(input.currency) ?? stored.currency;
  const userData = hashCustomerData(input.customerData);
  const products = (input.products ?? []).map((p) => ({
    productId: p.productId,
    ...(p.name !== undefined && { name: p.name }),
    ...(p.price !== undefined && { priceMinor: toMinorUnits(p.price, currency) }),
    quantity: p.quantity ?? 1,
    ...(p.category !== undefined && { category: p.category }),
  }));
  const money: Partial<ConversionsTable> = {
    value_minor: toMinorUnits(input.eventValue, currency),
    currency,
    products: JSON.stringify(products),
    user_data: JSON.stringify(userData),
    email_hash: userData.em ?? null,
    phone_hash: userData.ph ?? null,
    source: 'pixel_confirmed',
  };
  const next: ConversionsTable = { ...stored, ...money };
  Object.assign(money, await fxFor(database.read, next, store));
  Object.assign(next, money);
  // Match quality from the shop's customer data (in hand only now), for the destinations the conversion already had.
  const others = next.forwarding ? Object.keys(JSON.parse(next.forwarding) as Record<string, unknown>) : [];
  const meta = next.capi_status !== 'skipped' || next.capi_last_error !== 'not_configured';
  await setMatchQuality(database.read, next, { meta, others }, input.customerData);
  if (next.match_quality !== stored.match_quality) money.match_quality = next.match_quality ?? null;
  const changed = (['value_minor', 'currency', 'products', 'user_data'] as const).filter((c) => stored[c] !== next[c]);
  const written = await database.write((trx) =>
    withReportRollupAnd(trx, id, async () => {
      const current = await findConversion(trx, tenant.accountId, livemode, id);
      // Another delivery of the order confirmed it first: nothing more to do.
      if (current?.source !== 'pixel') return false;
      await trx.updateTable('conversions').set(money).where('id', '=', id).execute();
      // Jobs still pending go with the shop's value and customer hashes; one a platform already received is not sent again.
      const after: ConversionsTable = { ...current, ...money };
      const click = after.attributed_click_id
        ? await findClick(trx, after.account_id, after.livemode, after.attributed_click_id)
        : undefined;
      const planned = await replanDestinations(trx, { store, after, click, now: Date.now() });
      if (planned.forwarding !== (current.forwarding ?? null)) {
        await trx.updateTable('conversions').set({ forwarding: planned.forwarding }).where('id', '=', id).execute();
      }
      return true;
    }),
  );
  if (!written) return { row: (await findConversion(database.read, tenant.accountId, livemode, id)) ?? stored, filled: [] };
  const fields: Record<(typeof changed)[number], string> = {
    value_minor: 'eventValue',
    currency: 'currency',
    products: 'products',
    user_data: 'customerData',
  };
  return { row: next, filled: changed.map((c) => fields[c]) };
}

/**
 * Re-attributes the conversion when, with the evidence it has now, a click is more probable than
 * its recorded winner (or it had none and now one reaches minConfidence), through the one
 * re-attribution function (tracking/reattribution.ts: rollups, match quality, destinations and
 * `conversion.attributed` follow, decided again under the row's lock); an explicit reference
 * (100) is never replaced. Returns whether it was.
 */
export async function reattributeIfStronger(
  database: Database,
  store: StoresTable,
  tenant: Tenant,
  row: ConversionsTable,
): Promise<boolean> {
  if (row.confidence === 100) return false;
  const attribution = await attributeConversion(database.read, cluesOf(row), policyOf(store));
  const ref = { accountId: tenant.accountId, livemode: tenant.livemode ? 1 : 0, conversionId: row.id };
  const applied = await applyReattribution(database, ref, attribution, { when: 'stronger' });
  return applied?.outcome === 'changed';
}

/** Both rollups move with the change: the analytics totals (value, currency) and the reports (destinations, match quality). */
function withReportRollupAnd<T>(trx: Writer, id: string, change: () => Promise<T>): Promise<T> {
  return withReportRollup(trx, [id], () => withConversionRollup(trx, id, change));
}
