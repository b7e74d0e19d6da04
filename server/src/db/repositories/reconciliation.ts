import { type Expression, type RawBuilder, type SqlBool, sql } from 'kysely';
import type { Reader } from '../database.js';
import { engineOf, type JsonStatements } from '../engine.js';

/**
 * Each conversion's state per destination, for reconciliation (api.md §10) and for the
 * conversions list's forwarding filters — read from today's tables in ONE place: Meta's from the
 * conversion's `capi_*` columns, the others' from the conversion's `forwarding` JSON, every
 * destination's trace id from `destination_jobs`. Every state below is one SQL expression, used both
 * to read the states (`forwardingStates`) and to filter the list (`forwardingCondition`), so a
 * report's count and the list behind it cannot disagree. When the storage moves, this file is
 * the one to change.
 */

export const DESTINATION_KINDS = [
  'meta',
  'google_ads',
  'tiktok',
  'microsoft',
  'pinterest',
  'snapchat',
  'reddit',
  'linkedin',
] as const;
export type DestinationKind = (typeof DESTINATION_KINDS)[number];

/** Whether a destination is one the report knows (a job's `destination` is any string). */
export function isDestinationKind(kind: string): kind is DestinationKind {
  return (DESTINATION_KINDS as readonly string[]).includes(kind);
}

export const FORWARDING_STATUSES = ['pending', 'sent', 'failed', 'skipped'] as const;
export type ForwardingStatus = (typeof FORWARDING_STATUSES)[number];

/** Why delivery failed: the age limit passed before delivery, or the last error ended it. */
export const FAILURE_REASONS = ['expired', 'delivery_error'] as const;

/** A destination's state on one conversion; absent when the destination does not receive it. */
export interface DestinationState {
  status: ForwardingStatus;
  /** failed: a FAILURE_REASONS entry; skipped: the skip reason (`unknown` when none was kept). */
  reason: string | null;
  /** The platform's trace id of the delivery that was acknowledged (sent only; may be null). */
  traceId: string | null;
}

export interface ConversionForwarding {
  id: string;
  eventTime: number;
  attributed: boolean;
  refunded: boolean;
  destinations: Partial<Record<DestinationKind, DestinationState>>;
}

/**
 * What the list's forwarding filters ask for: conversions that a destination (the one named, or
 * any of them) receives and where every given condition holds.
 */
export interface ForwardingFilter {
  destination?: DestinationKind;
  status?: ForwardingStatus;
  /** The failure or skip reason (only failed and skipped conversions have one). */
  reason?: string;
  /** Delivered and acknowledged with a platform trace id (true), or not (false). */
  acknowledged?: boolean;
}

const META_SKIP_REASONS = ['not_configured', 'test_event_code_missing', 'expired'];
/** Meta's age limit, for skipped rows recorded before skip reasons were kept (destinations/meta/forwarding.ts skipReasonOf). */
const META_MAX_AGE_MS = 7 * 86_400_000;
/** Both dispatchers' error for a job whose age limit passed: "Not delivered [to X] within …". */
const EXPIRED_PREFIX = 'Not delivered';

type Raw = RawBuilder<string | null>;

interface Expressions {
  status: Raw;
  reason: Raw;
  traceId: Raw;
}

function failureReason(lastError: Raw): Raw {
  return sql`(case when substr(${lastError}, 1, ${sql.lit(EXPIRED_PREFIX.length)}) = ${sql.lit(EXPIRED_PREFIX)} then 'expired' else 'delivery_error' end)`;
}

function metaExpressions(): Expressions {
  const known = sql.join(META_SKIP_REASONS.map((r) => sql.lit(r)));
  const skipReason = sql<string>`(case when c.capi_last_error in (${known}) then c.capi_last_error
    when c.created_at - c.event_time > ${sql.lit(META_MAX_AGE_MS)} then 'expired'
    when c.livemode = 1 then 'not_configured' else 'unknown' end)`;
  // A conversion skipped because the store had no Meta is not one Meta receives: no entry (api.md §8).
  const status = sql<string | null>`(case when c.capi_status = 'skipped' and ${skipReason} = 'not_configured' then null
    else c.capi_status end)`;
  const reason = sql<string | null>`(case when ${status} = 'skipped' then ${skipReason}
    when ${status} = 'failed' then ${failureReason(sql`c.capi_last_error`)} else null end)`;
  const traceId = sql<string | null>`(case when ${status} = 'sent' then (select j.trace_id from destination_jobs j
    where j.conversion_id = c.id and j.destination = 'meta' and j.job_key = '' and j.status = 'sent') else null end)`;
  return { status, reason, traceId };
}

function otherExpressions(kind: Exclude<DestinationKind, 'meta'>, json: JsonStatements): Expressions {
  const field = (name: string): Raw => json.field(sql`c.forwarding`, kind, name);
  const status = field('status');
  const reason = sql<string | null>`(case when ${status} = 'skipped' then coalesce(${field('reason')}, 'unknown')
    when ${status} = 'failed' then ${failureReason(field('lastError'))} else null end)`;
  const traceId = sql<string | null>`(case when ${status} = 'sent' then (select j.trace_id from destination_jobs j
    where j.conversion_id = c.id and j.destination = ${sql.lit(kind)} and j.job_key = '' and j.status = 'sent') else null end)`;
  return { status, reason, traceId };
}

function expressionsOf(kind: DestinationKind, json: JsonStatements): Expressions {
  return kind === 'meta' ? metaExpressions() : otherExpressions(kind, json);
}

/**
 * The condition a conversions query (its table aliased `c`) needs for `filter`: the destination
 * (or, without one, any destination) receives the conversion, in that status, for that reason,
 * acknowledged or not.
 */
export function forwardingCondition(db: Reader, filter: ForwardingFilter): Expression<SqlBool> {
  const { json } = engineOf(db);
  const kinds = filter.destination ? [filter.destination] : DESTINATION_KINDS;
  const each = kinds.map((kind) => {
    const e = expressionsOf(kind, json);
    const parts: RawBuilder<unknown>[] = [sql`${e.status} is not null`];
    if (filter.status) parts.push(sql`${e.status} = ${filter.status}`);
    if (filter.reason !== undefined) parts.push(sql`${e.reason} = ${filter.reason}`);
    if (filter.acknowledged !== undefined) {
      parts.push(filter.acknowledged ? sql`${e.traceId} is not null` : sql`${e.traceId} is null`);
    }
    return sql`(${sql.join(parts, sql` and `)})`;
  });
  return sql<SqlBool>`(${sql.join(each, sql` or `)})`;
}

/**
 * The conversions of a store and mode with event time in [from, to), each with its state per
 * destination: the raw computation the report's rollups (analytics/report-fold.ts) are checked against.
 */
export async function forwardingStates(
  db: Reader,
  scope: { accountId: string; livemode: number; storeId: string; from: number; to: number },
  kinds: readonly DestinationKind[] = DESTINATION_KINDS,
): Promise<ConversionForwarding[]> {
  const { json } = engineOf(db);
  let query = db
    .selectFrom('conversions as c')
    .select(['c.id', 'c.event_time', 'c.attributed', 'c.refunded_minor'])
    .where('c.account_id', '=', scope.accountId)
    .where('c.livemode', '=', scope.livemode)
    .where('c.store_id', '=', scope.storeId)
    .where('c.event_time', '>=', scope.from)
    .where('c.event_time', '<', scope.to);
  for (const kind of kinds) {
    const e = expressionsOf(kind, json);
    query = query.select([
      e.status.as(`${kind}_status`),
      e.reason.as(`${kind}_reason`),
      e.traceId.as(`${kind}_trace`),
    ]) as unknown as typeof query;
  }
  const rows = (await query.execute()) as unknown as Array<Record<string, unknown>>;
  return rows.map((row) => ({
    id: row.id as string,
    eventTime: Number(row.event_time),
    attributed: Number(row.attributed) === 1,
    refunded: Number(row.refunded_minor ?? 0) > 0,
    destinations: statesOf(row, kinds),
  }));
}

/** The destinations' states of one row read with the expressions above (`<kind>_status`, …). */
function statesOf(row: Record<string, unknown>, kinds: readonly DestinationKind[]): ConversionForwarding['destinations'] {
  const destinations: ConversionForwarding['destinations'] = {};
  for (const kind of kinds) {
    const status = row[`${kind}_status`] as ForwardingStatus | null;
    if (status === null || status === undefined) continue;
    destinations[kind] = {
      status,
      reason: (row[`${kind}_reason`] as string | null) ?? null,
      traceId: (row[`${kind}_trace`] as string | null) ?? null,
    };
  }
  return destinations;
}

/** A conversion as the report rollups need it (analytics/report-fold.ts). */
export interface ReportFact {
  id: string;
  store_id: string;
  livemode: number;
  event_time: number;
  attributed: boolean;
  refunded: boolean;
  /** Per destination that receives it: its state, read with the very expressions of the report. */
  destinations: Partial<Record<DestinationKind, DestinationState>>;
  match_quality: string | null;
}

const ID_CHUNK = 500;

/**
 * The report facts of these conversions (those that exist), read in chunks of ids. With `only`,
 * the facts a change of that destination's jobs alone can move: its state, and none of what no
 * job changes (attribution, refunds, match quality, the other destinations) — those would be
 * subtracted and added back unchanged.
 */
export async function reportFacts(db: Reader, ids: readonly string[], only?: DestinationKind): Promise<ReportFact[]> {
  const { json } = engineOf(db);
  const kinds = only ? [only] : DESTINATION_KINDS;
  const facts: ReportFact[] = [];
  for (let i = 0; i < ids.length; i += ID_CHUNK) {
    let query = db
      .selectFrom('conversions as c')
      .select(['c.id', 'c.store_id', 'c.livemode', 'c.event_time'])
      .$if(!only, (q) => q.select(['c.attributed', 'c.refunded_minor', 'c.match_quality']))
      .where('c.id', 'in', ids.slice(i, i + ID_CHUNK));
    for (const kind of kinds) {
      const e = expressionsOf(kind, json);
      query = query.select([
        e.status.as(`${kind}_status`),
        e.reason.as(`${kind}_reason`),
        e.traceId.as(`${kind}_trace`),
      ]) as unknown as typeof query;
    }
    const rows = (await query.execute()) as unknown as Array<Record<string, unknown>>;
    for (const row of rows) {
      facts.push({
        id: row.id as string,
        store_id: row.store_id as string,
        livemode: Number(row.livemode),
        event_time: Number(row.event_time),
        attributed: Number(row.attributed) === 1,
        refunded: Number(row.refunded_minor ?? 0) > 0,
        destinations: statesOf(row, kinds),
        match_quality: (row.match_quality as string | null) ?? null,
      });
    }
  }
  return facts;
}
