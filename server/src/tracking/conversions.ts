import { attributeConversion } from '../attribution/evidence.js';
import { type ClickInOtherMode, clickInOtherMode } from '../attribution/other-mode.js';
import { attributedClickIdsColumn, type presentAttributedTo } from '../click-channel.js';
import { CONSENT_FIELDS, consentOf } from '../consent/consent.js';
import { type CustomerData, hashCustomerData } from '../customer-data.js';
import { customerKeyOf } from '../customers/identity.js';
import { type CustomerView, customerRowOf, customerViewOf } from '../customers/new-customer.js';
import type { Database } from '../db/database.js';
import { attributedClickOf } from '../db/repositories/clicks.js';
import { RECORD_CONVERSION } from '../db/repositories/conversions.js';
import type { ClicksTable, ConversionsTable } from '../db/schema.js';
import { type Forwarder, planDelivery, skippedColumns } from '../destinations/meta/forwarding.js';
import { planDestinations } from '../destinations/routing.js';
import { fxFor } from '../fx/record.js';
import { fieldError } from '../http/errors.js';
import { exactNumber } from '../http/json-reader.js';
import { newId } from '../ids.js';
import { fromMinorUnits, normalizeCurrency, toMinorUnits } from '../money.js';
import { setMatchQuality } from '../quality/record.js';
import { requireActiveStoreCached } from '../stores/lookup.js';
import { modeFlag, type Tenant } from '../tenancy.js';
import { conversionAttributedEvent } from '../webhooks/events.js';
import { checkClickId, OTHER_CLICK_ID_KINDS } from './click-ids.js';
import { type ConsentFields, checkLimitedDataUse, consentColumns } from './consent-input.js';
import { attributionColumns, cluesOf, NOT_ATTRIBUTED, policyOf, touchpointRows } from './conversion-attribution.js';
import { attributedTo, type StoredProduct } from './conversion-views.js';
import { normalizeEventType } from './event-types.js';
import { checkHttpUrl, checkIpAddress, parseEventTime } from './input.js';

export interface ProductInput {
  productId: string;
  name?: string;
  price?: number;
  quantity?: number;
  category?: string;
}

export interface ConversionInput extends ConsentFields {
  storeId: string;
  eventType: string;
  orderId: string;
  eventValue: number;
  currency: string;
  customerData?: CustomerData;
  fingerprint?: string;
  products?: ProductInput[];
  clickId?: string;
  fbclid?: string;
  fbc?: string;
  fbp?: string;
  /** Other click ids as explicit references (api.md §8), and TikTok's browser id. */
  gclid?: string;
  gbraid?: string;
  wbraid?: string;
  ttclid?: string;
  msclkid?: string;
  epik?: string;
  ScCid?: string;
  rdt_cid?: string;
  li_fat_id?: string;
  ttp?: string;
  /** Snapchat's `_scid` and Reddit's `_rdt_uuid` browser ids (the tag's identifiers()). */
  scid?: string;
  rdtUuid?: string;
  /** The tag's first-party visitor id (`_wt_vid`): same-browser evidence (api.md §13). */
  visitorId?: string;
  ipAddress?: string;
  userAgent?: string;
  eventSourceUrl?: string;
  eventId?: string;
  timestamp?: string;
}

export interface ConversionResult {
  conversionId: string;
  eventType: string;
  attributed: boolean;
  attributedTo?: ReturnType<typeof presentAttributedTo>;
  capiSent: boolean;
  timestamp: string;
  duplicate: boolean;
  /** On a duplicate only: the fields of this request that differ from the original's (which is kept). */
  differences?: string[];
  /** When no reference attributed it: a click reference that names a click of the other mode. */
  clickInOtherMode?: ClickInOtherMode;
  /** Whether it is its customer's first conversion (api.md §11); absent without email and phone. */
  customer?: CustomerView['customer'];
}

function resultOf(row: ConversionsTable, duplicate: boolean): ConversionResult {
  return {
    conversionId: row.id,
    eventType: row.event_type,
    attributed: row.attributed === 1,
    ...attributedTo(row),
    capiSent: row.capi_status === 'sent',
    timestamp: new Date(row.event_time).toISOString(),
    duplicate,
  };
}

function validate(input: ConversionInput, now: number) {
  const currency = normalizeCurrency(input.currency);
  if (!currency) {
    throw fieldError('invalid_currency', 'currency', 'invalid_format', `"${input.currency}" is not an ISO 4217 currency code`);
  }
  if (input.ipAddress !== undefined) checkIpAddress('ipAddress', input.ipAddress);
  for (const kind of OTHER_CLICK_ID_KINDS) {
    const value = input[kind];
    if (value !== undefined) checkClickId(kind, value);
  }
  if (input.eventSourceUrl !== undefined) checkHttpUrl('eventSourceUrl', input.eventSourceUrl);
  checkLimitedDataUse(input.limitedDataUse);
  const eventTime = parseEventTime('timestamp', input.timestamp, now);
  const products: StoredProduct[] = (input.products ?? []).map((p) => ({
    productId: p.productId,
    ...(p.name !== undefined && { name: p.name }),
    ...(p.price !== undefined && { priceMinor: toMinorUnits(exactNumber(p, 'price') ?? p.price, currency) }),
    quantity: p.quantity ?? 1,
    ...(p.category !== undefined && { category: p.category }),
  }));
  // The literal as written when a double could not hold it (json-reader.ts): one decimal parser, exact.
  const valueMinor = toMinorUnits(exactNumber(input, 'eventValue') ?? input.eventValue, currency);
  return { currency, eventTime, valueMinor, products };
}

type Validated = ReturnType<typeof validate>;

/** `ref_ids`, the browser ids and `visitor_id`, present only when the conversion has them. */
function refColumns(input: ConversionInput): Pick<ConversionsTable, 'ref_ids' | 'ttp' | 'scid' | 'rdt_uuid' | 'visitor_id'> {
  const refs: Record<string, string> = {};
  for (const kind of OTHER_CLICK_ID_KINDS) {
    const value = input[kind];
    if (value !== undefined) refs[kind] = value;
  }
  return {
    ...(Object.keys(refs).length > 0 && { ref_ids: JSON.stringify(refs) }),
    ...(input.ttp !== undefined && { ttp: input.ttp }),
    ...(input.scid !== undefined && { scid: input.scid }),
    ...(input.rdtUuid !== undefined && { rdt_uuid: input.rdtUuid }),
    ...(input.visitorId !== undefined && { visitor_id: input.visitorId }),
  };
}

/**
 * The fields of a resent conversion (same store, mode, eventType and orderId) that differ from
 * the recorded one: its value and currency always, the optional fields when the resend has them.
 * Field names only — the values may be customer data.
 */
function differencesFrom(original: ConversionsTable, input: ConversionInput, given: Validated): string[] {
  const differences: string[] = [];
  const compare = (field: string, resent: unknown, recorded: unknown) => {
    if (resent !== undefined && resent !== recorded) differences.push(field);
  };
  compare(
    'eventValue',
    fromMinorUnits(given.valueMinor, given.currency),
    fromMinorUnits(original.value_minor, original.currency),
  );
  compare('currency', given.currency, original.currency);
  if (input.timestamp !== undefined) compare('timestamp', given.eventTime, original.event_time);
  compare('eventId', input.eventId, original.event_id);
  if (input.products !== undefined) compare('products', JSON.stringify(given.products), original.products);
  if (input.customerData !== undefined) {
    compare('customerData', JSON.stringify(hashCustomerData(input.customerData)), original.user_data);
  }
  compare('fingerprint', input.fingerprint, original.fingerprint);
  compare('clickId', input.clickId, original.ref_click_id);
  compare('fbclid', input.fbclid, original.ref_fbclid);
  compare('fbc', input.fbc, original.ref_fbc);
  compare('fbp', input.fbp, original.fbp);
  compare('ttp', input.ttp, original.ttp ?? undefined);
  compare('scid', input.scid, original.scid ?? undefined);
  compare('rdtUuid', input.rdtUuid, original.rdt_uuid ?? undefined);
  compare('visitorId', input.visitorId, original.visitor_id ?? undefined);
  const refs = original.ref_ids ? (JSON.parse(original.ref_ids) as Record<string, string>) : {};
  for (const kind of OTHER_CLICK_ID_KINDS) compare(kind, input[kind], refs[kind]);
  compare('ipAddress', input.ipAddress, original.ip_address);
  compare('userAgent', input.userAgent, original.user_agent);
  compare('eventSourceUrl', input.eventSourceUrl, original.event_source_url);
  const consent = consentOf(original.consent);
  for (const field of CONSENT_FIELDS) compare(`consent.${field}`, input.consent?.[field], consent[field]);
  return differences;
}

/** The original's result for a duplicate, noting where the resent request differs from it. */
function duplicateResult(original: ConversionsTable, input: ConversionInput, given: Validated): ConversionResult {
  const differences = differencesFrom(original, input, given);
  return { ...resultOf(original, true), ...(differences.length > 0 && { differences }) };
}

/**
 * Records a conversion once per (account, mode, store, eventType, orderId), attributes it to
 * the click that caused it, and returns the stored result (the original one for a duplicate).
 */
export async function trackConversion(
  database: Database,
  tenant: Tenant,
  input: ConversionInput,
  now = Date.now(),
  forwarding?: Forwarder,
): Promise<ConversionResult> {
  const { result, delivered } = await recordConversion(database, tenant, input, now, forwarding);
  if (delivered) result.capiSent = await delivered;
  return result;
}

/**
 * `trackConversion` up to the durable write: the result, and when the conversion was handed to
 * the dispatcher, whether Meta acknowledged it within CAPI_SYNC_WAIT_MS (`capiSent`). A batch
 * records its conversions one after the other and waits for their acknowledgements together.
 */
export async function recordConversion(
  database: Database,
  tenant: Tenant,
  input: ConversionInput,
  now: number,
  forwarding?: Forwarder,
  /** `pixel`: the Shopify checkout pixel's, money as the browser reported it (shops/pixel-checkout.ts). */
  source?: 'pixel',
): Promise<{ result: ConversionResult; delivered?: Promise<boolean> }> {
  const given = validate(input, now);
  const { currency, eventTime, valueMinor, products } = given;
  const eventType = normalizeEventType(input.eventType);
  // Its settings as this instance last read them (at most 2 s ago; a change made here is seen at once: stores/lookup.ts).
  const store = await requireActiveStoreCached(database.read, tenant, input.storeId);
  const livemode = modeFlag(tenant);
  // No lookup of the order first: the write finds a duplicate itself (below), atomically, and
  // a resend is the rare case — checking every new conversion first cost each one a statement.
  const userData = hashCustomerData(input.customerData);
  const id = newId('conversion', now);
  const customerKey = customerKeyOf(userData);
  const recorded: ConversionsTable = {
    id,
    account_id: tenant.accountId,
    store_id: store.id,
    livemode,
    event_type: eventType,
    order_id: input.orderId,
    event_id: input.eventId ?? input.orderId,
    event_time: eventTime,
    created_at: now,
    value_minor: valueMinor,
    currency,
    products: JSON.stringify(products),
    user_data: JSON.stringify(userData),
    email_hash: userData.em ?? null,
    phone_hash: userData.ph ?? null,
    ip_address: input.ipAddress ?? null,
    user_agent: input.userAgent ?? null,
    fingerprint: input.fingerprint ?? null,
    ref_click_id: input.clickId ?? null,
    ref_fbclid: input.fbclid ?? null,
    ref_fbc: input.fbc ?? null,
    fbp: input.fbp ?? null,
    event_source_url: input.eventSourceUrl ?? null,
    ...attributionColumns(NOT_ATTRIBUTED),
    capi_status: 'skipped', // 'pending' below when it is forwarded to Meta
    capi_attempts: 0,
    capi_last_error: null,
    capi_sent_at: null,
    // Only when given: a conversion without them keeps the row shape (and statements) it had.
    ...refColumns(input),
    // Resolved now against the store's default and kept: every send and resend applies this consent.
    ...consentColumns(input, store),
    ...(source && { source }),
    // Only when known: a conversion without email and phone keeps the row shape it had.
    ...(customerKey && { customer_key: customerKey }),
  };
  const candidates = new Map<string, ClicksTable>();
  const attribution = await attributeConversion(database.read, cluesOf(recorded), policyOf(store), candidates);
  const row: ConversionsTable = { ...recorded, ...attributionColumns(attribution) };
  const touchpoints = touchpointRows(id, attribution);
  // Meta's event, the other destinations', match quality and `attributedTo.clickIds` (stored with
  // the result: api.md §12) all use the attributed click: one primary-key read, when attributed.
  const attributedClick = attributedClickOf(database.read, row, candidates, attribution.winner?.clickTime);
  if (row.attributed === 1) row.attributed_click_ids = attributedClickIdsColumn(await attributedClick());
  const plan = await planDelivery(database.read, store, row, now, attributedClick);
  // Google Ads, TikTok, …: their jobs commit with the conversion too (destinations/routing.ts).
  const destinations = await planDestinations(database.read, store, row, input.customerData, now, attributedClick);
  if (Object.keys(destinations.forwarding).length > 0) row.forwarding = JSON.stringify(destinations.forwarding);
  const delivery = 'job' in plan ? plan.job : undefined;
  // One outbox: Meta's job beside the others' (destinations/dispatcher.ts sends them all).
  const all = delivery ? [delivery, ...destinations.jobs] : destinations.jobs;
  const jobs = all.length > 0 ? all : undefined;
  if (jobs) forwarding?.reserve(jobs);
  if (delivery) {
    row.capi_status = 'pending';
  } else if ('skip' in plan) {
    Object.assign(row, skippedColumns(plan.skip));
  }
  // Match quality (from the raw customer data, in hand only now) and, in another currency than the store's, its day's rate.
  const meta = delivery !== undefined || ('skip' in plan && plan.skip !== 'not_configured');
  await setMatchQuality(
    database.read,
    row,
    { meta, others: Object.keys(destinations.forwarding) },
    input.customerData,
    {},
    attributedClick,
  );
  if (currency !== store.currency) Object.assign(row, await fxFor(database.read, row, store));
  // Outbox: the delivery job commits with the conversion, so an acknowledged conversion is never lost to Meta.
  // conversion.attributed (api.md §9): its webhook messages commit with the conversion too.
  // Its customer (api.md §11): whether it is new as known before this write, for the webhook.
  const customer = customerRowOf(row, row.attributed === 1 ? ((await attributedClick())?.campaign_id ?? '') : '');
  const webhook =
    row.attributed === 1
      ? conversionAttributedEvent(row, row.created_at, customer && (await customerViewOf(database.read, row)))
      : undefined;
  const stored = await database.runWrite(RECORD_CONVERSION, {
    conversion: row,
    touchpoints,
    ...(jobs && { jobs }),
    ...(webhook && { webhook }),
    ...(customer && { customer }),
  });
  // Whether it is new as recorded (a concurrent earlier conversion of the customer may have committed first).
  const view = await customerViewOf(database.read, stored.row);
  // The order was recorded before (a resend, or a concurrent identical request that committed
  // first): this one is its duplicate, answered after the original's commit is durable.
  if (stored.duplicate) {
    return { result: await withModeHint(database, stored.row, { ...duplicateResult(stored.row, input, given), ...view }) };
  }
  const result = await withModeHint(database, stored.row, { ...resultOf(stored.row, false), ...view });
  // capiSent is true only if Meta acknowledged the event before this response (CAPI_SYNC_WAIT_MS).
  const delivered = jobs && forwarding ? forwarding.handoff(jobs) : undefined;
  return delivery && delivered ? { result, delivered } : { result };
}

/** A conversion no reference attributed, whose reference names a click of the other mode, says so. */
async function withModeHint(database: Database, row: ConversionsTable, result: ConversionResult): Promise<ConversionResult> {
  if (row.attribution_signal === 'explicit' || !(row.ref_click_id || row.ref_fbclid || row.ref_fbc)) return result;
  const hint = await clickInOtherMode(database.read, cluesOf(row));
  return hint ? { ...result, clickInOtherMode: hint } : result;
}
