import { addDays, isValidDate, startOfDay } from '../calendar/dates.js';
import { presentAttributedTo } from '../click-channel.js';
import { presentConsent } from '../consent/consent.js';
import { type CustomerView, customerViewOf, customerViews } from '../customers/new-customer.js';
import type { Database } from '../db/database.js';
import { type ConversionFilter, findConversion, listConversions } from '../db/repositories/conversions.js';
import type { Page } from '../db/repositories/keyset.js';
import type { ConversionsTable } from '../db/schema.js';
import { presentForwarding } from '../destinations/meta/forwarding.js';
import { presentDestinationsOf } from '../destinations/routing.js';
import { presentFx } from '../fx/record.js';
import { invalid } from '../http/errors.js';
import { conversionNotFound } from '../http/not-found.js';
import { fromMinorUnits } from '../money.js';
import { requireStore } from '../stores/lookup.js';
import { modeFlag, type Tenant } from '../tenancy.js';
import { explainAttribution, reattributeConversion } from './conversion-attribution.js';
import { normalizeEventType } from './event-types.js';
import { type ForwardingQuery, forwardingFilterOf } from './forwarding-filter.js';

/** Products as stored: prices in integer minor units of the conversion's currency. */
export interface StoredProduct {
  productId: string;
  name?: string;
  priceMinor?: number;
  quantity: number;
  category?: string;
}

/** `attributedTo` of a conversion the API shows (none when not attributed). */
export function attributedTo(row: ConversionsTable) {
  if (row.attributed !== 1 || !row.attributed_click_id) return {};
  return { attributedTo: presentAttributedTo(row) };
}

export async function getConversion(database: Database, tenant: Tenant, conversionId: string): Promise<ConversionsTable> {
  const row = await findConversion(database.read, tenant.accountId, modeFlag(tenant), conversionId);
  if (!row) throw await conversionNotFound(database.read, tenant, conversionId);
  return row;
}

export interface ConversionListQuery extends ForwardingQuery {
  storeId?: string;
  eventType?: string;
  attributed?: boolean;
  capiStatus?: ConversionsTable['capi_status'];
  refunded?: boolean;
  startDate?: string;
  endDate?: string;
}

/**
 * One page of the tenant's conversions, newest event first. Dates are inclusive calendar days
 * in the store's time zone when `storeId` is given, else in UTC.
 */
export async function listConversionsOf(
  database: Database,
  tenant: Tenant,
  query: ConversionListQuery,
  page: Page,
): Promise<ConversionsTable[]> {
  // Validation before the store lookup (api.md: validation → resource lookup).
  for (const field of ['startDate', 'endDate'] as const) {
    const value = query[field];
    if (value !== undefined && !isValidDate(value))
      throw invalid(field, 'invalid_format', `${field} must be a date in YYYY-MM-DD format that exists (${value} does not)`);
  }
  if (query.startDate && query.endDate && query.startDate > query.endDate) {
    throw invalid('startDate', 'out_of_range', 'startDate must not be after endDate');
  }
  const forwarding = forwardingFilterOf(query);
  const store = query.storeId ? await requireStore(database.read, tenant, query.storeId) : undefined;
  const timezone = store?.timezone ?? 'UTC';
  const filter: ConversionFilter = {
    storeId: query.storeId,
    // As recorded: a standard event name in any case is the standard event.
    eventType: query.eventType === undefined ? undefined : normalizeEventType(query.eventType),
    attributed: query.attributed,
    capiStatus: query.capiStatus,
    refunded: query.refunded,
    forwarding,
    from: query.startDate ? startOfDay(query.startDate, timezone) : undefined,
    to: query.endDate ? startOfDay(addDays(query.endDate, 1), timezone) : undefined,
  };
  return listConversions(database.read, tenant.accountId, modeFlag(tenant), filter, page);
}

/** `capiSent`, `capi` and `forwarding` (api.md §8): `forwarding.meta` is `capi`, absent when the store had no Meta. */
function withDestinations(row: ConversionsTable) {
  const meta = presentForwarding(row);
  const forwarding = presentDestinationsOf(row, meta.capi);
  if (meta.capi.status === 'skipped' && 'reason' in meta.capi && meta.capi.reason === 'not_configured') {
    delete (forwarding as { meta?: unknown }).meta;
  }
  return { ...meta, forwarding };
}

/** The API view of a stored conversion; `customer` (api.md §11) from customers/new-customer.ts. */
export function presentConversion(row: ConversionsTable, customer: CustomerView = {}) {
  const products = JSON.parse(row.products) as StoredProduct[];
  return {
    conversionId: row.id,
    storeId: row.store_id,
    eventType: row.event_type,
    orderId: row.order_id,
    eventId: row.event_id,
    eventValue: fromMinorUnits(row.value_minor, row.currency),
    currency: row.currency,
    refundedTotal: fromMinorUnits(row.refunded_minor ?? 0, row.currency),
    attributed: row.attributed === 1,
    ...attributedTo(row),
    ...customer,
    ...withDestinations(row),
    matchQuality: row.match_quality ? (JSON.parse(row.match_quality) as Record<string, unknown>) : {},
    ...(row.fx_currency && { fx: presentFx(row) }),
    ...presentConsent(row),
    livemode: row.livemode === 1,
    timestamp: new Date(row.event_time).toISOString(),
    createdAt: new Date(row.created_at).toISOString(),
    products: products.map((p) => ({
      productId: p.productId,
      ...(p.name !== undefined && { name: p.name }),
      ...(p.priceMinor !== undefined && { price: fromMinorUnits(p.priceMinor, row.currency) }),
      quantity: p.quantity,
      ...(p.category !== undefined && { category: p.category }),
    })),
  };
}

/** The API views of a page of stored conversions: one read of their customers per store. */
export async function conversionPresenter(database: Database, rows: ConversionsTable[]) {
  const views = await customerViews(database.read, rows);
  return (row: ConversionsTable) => presentConversion(row, views(row));
}

/** One conversion with the explanation of its attribution (winning signal, score, touchpoints). */
export async function explainedConversion(database: Database, tenant: Tenant, conversionId: string) {
  const row = await getConversion(database, tenant, conversionId);
  const customer = await customerViewOf(database.read, row);
  return { ...presentConversion(row, customer), attribution: await explainAttribution(database, row) };
}

/** Re-attributes a conversion with the clicks known now and returns it explained. */
export async function reattribute(database: Database, tenant: Tenant, conversionId: string) {
  const row = await reattributeConversion(database, tenant, conversionId);
  const customer = await customerViewOf(database.read, row);
  return { ...presentConversion(row, customer), attribution: await explainAttribution(database, row) };
}
