import { addDays, dateIn, daysBetween } from '../calendar/dates.js';
import type { ConversionForwarding, DestinationKind } from '../db/repositories/reconciliation.js';
import { ITEM_SEP } from './report-fold.js';

/**
 * The reconciliation report (api.md §10; docs/api.md "Reconciliation"): per day of event time in
 * the store's time zone, the conversions received, attributed and refunded, and per destination
 * what became of those it receives. Pure: it folds the states `forwardingStates` read, and
 * builds for every count the conversions-list query that lists exactly its conversions.
 */

export interface DestinationDay {
  /** Conversions the destination receives (those with a forwarding entry) = sent + pending + failed + skipped. */
  eligible: number;
  sent: number;
  /** Of `sent`, those whose delivery the platform acknowledged with a trace id. */
  acknowledged: number;
  pending: number;
  failed: { total: number; byReason: Record<string, number> };
  skipped: { total: number; byReason: Record<string, number> };
  /** The distinct trace ids of the day's acknowledged deliveries, sorted. */
  traceIds: string[];
  links: DestinationLinks;
}

export interface DestinationLinks {
  eligible: string;
  sent: string;
  acknowledged: string;
  pending: string;
  failed: string;
  skipped: string;
  failedByReason: Record<string, string>;
  skippedByReason: Record<string, string>;
}

export interface ReconciliationDay {
  date: string;
  received: number;
  attributed: number;
  refunded: number;
  destinations: Partial<Record<DestinationKind, DestinationDay>>;
  links: { received: string; attributed: string; refunded: string };
}

export interface ReconciliationInput {
  storeId: string;
  timezone: string;
  startDate: string;
  endDate: string;
  kinds: readonly DestinationKind[];
  conversions: readonly ConversionForwarding[];
}

/**
 * The list query behind a count: `/v1/conversions?storeId&startDate=date&endDate=date&…`, encoded
 * as URLSearchParams encodes it. Built by hand (a report of 90 days and eight destinations has
 * ~6,000 links; URLSearchParams made them the larger part of its time, measured ~3×).
 */
export function listLink(storeId: string, date: string, filters: Record<string, string> = {}): string {
  let query = `storeId=${formEncode(storeId)}&startDate=${formEncode(date)}&endDate=${formEncode(date)}`;
  for (const [name, value] of Object.entries(filters)) query += `&${formEncode(name)}=${formEncode(value)}`;
  return `/v1/conversions?${query}`;
}

/** application/x-www-form-urlencoded, as URLSearchParams serializes a name or a value. */
export function formEncode(value: string): string {
  if (/^[A-Za-z0-9*\-._]*$/.test(value)) return value;
  try {
    return encodeURIComponent(value)
      .replace(/[!'()~]/g, (c) => `%${(c.charCodeAt(0) as number).toString(16).toUpperCase()}`)
      .replace(/%20/g, '+');
  } catch {
    return new URLSearchParams({ v: value }).toString().slice(2); // a lone surrogate: replaced as URLSearchParams does
  }
}

/** A day's trace ids: gathered one by one (`traces`), or given whole, unique and sorted (`traceList`: the rollups'). */
function emptyDestination(): Omit<DestinationDay, 'links' | 'traceIds'> & { traces: Set<string>; traceList?: string[] } {
  return {
    eligible: 0,
    sent: 0,
    acknowledged: 0,
    pending: 0,
    failed: { total: 0, byReason: {} },
    skipped: { total: 0, byReason: {} },
    traces: new Set(),
  };
}

function destinationLinks(
  storeId: string,
  date: string,
  kind: DestinationKind,
  day: Omit<DestinationDay, 'links'>,
): DestinationLinks {
  const at = (filters: Record<string, string>) => listLink(storeId, date, { destination: kind, ...filters });
  const byReason = (status: 'failed' | 'skipped', counts: Record<string, number>) =>
    Object.fromEntries(Object.keys(counts).map((r) => [r, at({ forwardingStatus: status, forwardingReason: r })]));
  return {
    eligible: at({}),
    sent: at({ forwardingStatus: 'sent' }),
    acknowledged: at({ forwardingStatus: 'sent', acknowledged: 'true' }),
    pending: at({ forwardingStatus: 'pending' }),
    failed: at({ forwardingStatus: 'failed' }),
    skipped: at({ forwardingStatus: 'skipped' }),
    failedByReason: byReason('failed', day.failed.byReason),
    skippedByReason: byReason('skipped', day.skipped.byReason),
  };
}

function isSorted(values: readonly string[]): boolean {
  for (let i = 1; i < values.length; i++) if ((values[i - 1] as string) >= (values[i] as string)) return false;
  return true;
}

function sortedKeys(counts: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

type Tally = {
  received: number;
  attributed: number;
  refunded: number;
  kinds: Map<DestinationKind, ReturnType<typeof emptyDestination>>;
};

/** An empty tally for every day of the range (oldest first), with every destination asked for. */
function emptyTallies(input: { startDate: string; endDate: string; kinds: readonly DestinationKind[] }): Map<string, Tally> {
  const count = daysBetween(input.startDate, input.endDate) + 1;
  const dates = Array.from({ length: count }, (_, i) => addDays(input.startDate, i));
  return new Map<string, Tally>(
    dates.map((d) => [
      d,
      { received: 0, attributed: 0, refunded: 0, kinds: new Map(input.kinds.map((k) => [k, emptyDestination()])) },
    ]),
  );
}

/** Every day of the range (oldest first, days without conversions too), with every destination asked for. */
export function reconcile(input: ReconciliationInput): ReconciliationDay[] {
  const tallies = emptyTallies(input);
  for (const conversion of input.conversions) {
    const tally = tallies.get(dateIn(conversion.eventTime, input.timezone));
    if (!tally) continue; // outside the range (the read is bounded by the same days)
    tally.received += 1;
    if (conversion.attributed) tally.attributed += 1;
    if (conversion.refunded) tally.refunded += 1;
    for (const [kind, t] of tally.kinds) {
      const state = conversion.destinations[kind];
      if (!state) continue;
      t.eligible += 1;
      if (state.status === 'sent') {
        t.sent += 1;
        if (state.traceId !== null) {
          t.acknowledged += 1;
          t.traces.add(state.traceId);
        }
      } else if (state.status === 'pending') t.pending += 1;
      else {
        const bucket = t[state.status];
        const reason = state.reason ?? 'unknown';
        bucket.total += 1;
        bucket.byReason[reason] = (bucket.byReason[reason] ?? 0) + 1;
      }
    }
  }
  return render(input.storeId, tallies);
}

/** One count of the report rollups (analytics/report-fold.ts): a day's destination ('' for the totals) and item. */
export interface ReconciliationCount {
  local_date: string;
  destination: string;
  item: string;
  count: number;
}

/** `reconcile` from the report rollups' counts and trace ids of the range instead of its conversions: the same days. */
export function reconcileCounts(
  input: Omit<ReconciliationInput, 'conversions' | 'timezone'> & {
    counts: readonly ReconciliationCount[];
    /**
     * The trace ids per day and destination (report-rollups.ts `reportCountsAndLists`), each day and
     * destination once, its values unique; `counts` holds none.
     */
    traces: ReadonlyArray<{ local_date: string; destination: string; values: string[] }>;
  },
): ReconciliationDay[] {
  const tallies = emptyTallies(input);
  for (const { local_date, destination, values } of input.traces) {
    const t = tallies.get(local_date)?.kinds.get(destination as DestinationKind);
    // A year's ~245,000 ids taken as they are (a past day's come sorted), not copied into a Set.
    if (t) t.traceList = isSorted(values) ? values : [...values].sort();
  }
  for (const { local_date, destination, item, count } of input.counts) {
    const tally = tallies.get(local_date);
    if (!tally) continue;
    if (destination === '') {
      if (item === 'received' || item === 'attributed' || item === 'refunded') tally[item] += count;
      continue;
    }
    const t = tally.kinds.get(destination as DestinationKind);
    if (!t) continue;
    const cut = item.indexOf(ITEM_SEP);
    const kind = cut === -1 ? item : item.slice(0, cut);
    const value = cut === -1 ? '' : item.slice(cut + 1);
    if (kind === 'sent' || kind === 'pending') {
      t[kind] += count;
      t.eligible += count;
    } else if (kind === 'acknowledged') t.acknowledged += count;
    else if (kind === 'failed' || kind === 'skipped') {
      t[kind].total += count;
      t[kind].byReason[value] = (t[kind].byReason[value] ?? 0) + count;
      t.eligible += count;
    }
  }
  return render(input.storeId, tallies);
}

function render(storeId: string, tallies: Map<string, Tally>): ReconciliationDay[] {
  return [...tallies].map(([date, tally]) => {
    const destinations: ReconciliationDay['destinations'] = {};
    for (const [kind, t] of tally.kinds) {
      const { traces, traceList, ...counts } = t;
      const day = {
        ...counts,
        failed: { total: counts.failed.total, byReason: sortedKeys(counts.failed.byReason) },
        skipped: { total: counts.skipped.total, byReason: sortedKeys(counts.skipped.byReason) },
        traceIds: traceList ?? [...traces].sort(),
      };
      destinations[kind] = { ...day, links: destinationLinks(storeId, date, kind, day) };
    }
    return {
      date,
      received: tally.received,
      attributed: tally.attributed,
      refunded: tally.refunded,
      destinations,
      links: {
        received: listLink(storeId, date),
        attributed: listLink(storeId, date, { attributed: 'true' }),
        refunded: listLink(storeId, date, { refunded: 'true' }),
      },
    };
  });
}
