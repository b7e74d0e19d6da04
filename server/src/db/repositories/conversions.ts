import { type CompiledQuery, sql } from 'kysely';
import { type Reader, type Writer, writeJob } from '../database.js';
import { isPostgres } from '../dialect.js';
import { prepared, preparedQuery } from '../prepared.js';
import { rowLimit } from '../row-limit.js';
import type { ConversionsTable, DestinationJobsTable, TouchpointsTable } from '../schema.js';
import { afterKeyset, type Page } from './keyset.js';
import { type ForwardingFilter, forwardingCondition } from './reconciliation.js';
import { enqueueForRollups } from './rollup-queue.js';
import { fanOut, type WebhookEventRow } from './webhooks.js';

type ConversionKey = { storeId: string; livemode: number; eventType: string; orderId: string };

const conversionByKey = preparedQuery((db, key: ConversionKey) =>
  db
    .selectFrom('conversions')
    .selectAll()
    .where('store_id', '=', key.storeId)
    .where('livemode', '=', key.livemode)
    .where('event_type', '=', key.eventType)
    .where('order_id', '=', key.orderId),
);

export async function findConversionByKey(db: Reader, key: ConversionKey): Promise<ConversionsTable | undefined> {
  if (isPostgres(db)) {
    // By its key, then by id and time: one partition (see migration 0007).
    const found = await db
      .selectFrom('conversion_keys')
      .select(['conversion_id', 'event_time'])
      .where('store_id', '=', key.storeId)
      .where('livemode', '=', key.livemode)
      .where('event_type', '=', key.eventType)
      .where('order_id', '=', key.orderId)
      .executeTakeFirst();
    if (!found) return undefined;
    return db
      .selectFrom('conversions')
      .selectAll()
      .where('id', '=', found.conversion_id)
      .where('event_time', '=', found.event_time)
      .executeTakeFirst();
  }
  return (await conversionByKey(db, key)).rows[0];
}

const insertConversion = prepared((db, row: ConversionsTable) =>
  db
    .insertInto('conversions')
    .values(row)
    .onConflict((oc) => oc.columns(['store_id', 'livemode', 'event_type', 'order_id']).doNothing()),
);

const insertTouchpoint = prepared((db, row: TouchpointsTable) => db.insertInto('touchpoints').values(row));

/** A conversion to record: its row, its touchpoints, and its delivery jobs. */
export interface ConversionRecord {
  conversion: ConversionsTable;
  touchpoints: TouchpointsTable[];
  /** Its delivery jobs (the outbox): Meta's and the other destinations' (Google Ads, TikTok, …), api.md §8. */
  jobs?: DestinationJobsTable[];
  /** Its `conversion.attributed` webhook event (api.md §9), written to the webhook outbox with it. */
  webhook?: WebhookEventRow;
}

/**
 * Records a conversion unless (store, mode, eventType, orderId) exists, with its touchpoints,
 * its rollup queue row and its delivery job (the outbox: the job commits with the conversion,
 * so an acknowledged conversion is never lost to Meta); returns the stored row either way. Not
 * a prior read but a unique key decides: the table's own on SQLite, `conversion_keys` on
 * PostgreSQL (a partitioned table cannot hold it; migration 0007), inserted before the
 * conversion.
 */
export async function recordConversionOnce(
  db: Writer,
  record: ConversionRecord,
): Promise<{ row: ConversionsTable; duplicate: boolean }> {
  const { conversion, touchpoints } = record;
  const inserted = isPostgres(db)
    ? await recordConversionByKey(db, record)
    : Number((await insertConversion(db, conversion)).numAffectedRows ?? 0n) > 0;
  if (!inserted) {
    const key = {
      storeId: conversion.store_id,
      livemode: conversion.livemode,
      eventType: conversion.event_type,
      orderId: conversion.order_id,
    };
    const existing = await findConversionByKey(db, key);
    if (!existing) throw new Error('conversion dedup conflict without a stored row');
    return { row: existing, duplicate: true };
  }
  if (!isPostgres(db)) {
    for (const touchpoint of touchpoints) await insertTouchpoint(db, touchpoint);
    await enqueueForRollups(db, 'conversion', [conversion]);
    if (record.jobs?.length) await db.insertInto('destination_jobs').values(record.jobs).execute();
    if (record.webhook) await fanOut(db, record.webhook);
  }
  return { row: conversion, duplicate: false };
}

/**
 * `recordConversionOnce` as a `WriteJob`: on SQLite it runs on the writer thread; on PostgreSQL
 * its one statement (below) runs without a transaction around it.
 */
export const RECORD_CONVERSION = writeJob('recordConversionOnce', recordConversionOnce, {
  oneStatement: true,
});

/**
 * PostgreSQL: the key, the conversion, its touchpoints, its rollup queue row and its delivery
 * job in one statement (PostgreSQL-only SQL: data-modifying CTEs), one round trip; the rows
 * travel as JSON typed by the tables' own row types. The key goes in first: of two writers of
 * one order the second waits on the key until the first commits, then finds it taken and
 * writes nothing. True when this conversion was inserted.
 */
async function recordConversionByKey(db: Writer, record: ConversionRecord): Promise<boolean> {
  const { conversion, touchpoints } = record;
  const parameters = [
    JSON.stringify(conversion),
    JSON.stringify(touchpoints),
    ...(record.jobs?.length ? [JSON.stringify(record.jobs)] : []),
    ...(record.webhook ? [JSON.stringify(record.webhook)] : []),
  ];
  const compiled = recordStatementFor(db, record, parameters);
  const inserted = await db.executeQuery<{ id: string }>({ ...compiled, parameters });
  return inserted.rows.length > 0;
}

/**
 * The statement's text depends only on the columns of the conversion and of the delivery job:
 * it is built and compiled by Kysely once per such shape (a conversion paid ~2–3 % of its CPU
 * for building it every time), then run with the three JSON values as its parameters.
 */
const recordStatements = new Map<string, CompiledQuery>();

function recordStatementFor(db: Writer, record: ConversionRecord, parameters: string[]): CompiledQuery {
  const shape = `${Object.keys(record.conversion)}|${record.jobs?.length ? 'jobs' : '-'}|${record.webhook ? 'webhook' : '-'}`;
  let compiled = recordStatements.get(shape);
  if (!compiled) {
    compiled = recordStatement(record).compile(db);
    // The values must be exactly the parameters, in this order, for the text to be reused.
    if (compiled.parameters.length !== parameters.length || compiled.parameters.some((p, i) => p !== parameters[i])) {
      throw new Error('the conversion statement binds other parameters than its three JSON values');
    }
    recordStatements.set(shape, compiled);
  }
  return compiled;
}

function recordStatement({ conversion, touchpoints, jobs, webhook }: ConversionRecord) {
  const columnsOf = (row: object) => sql.join(Object.keys(row).map((c) => sql.ref(c)));
  const columns = columnsOf(conversion);
  const destinationJobs = jobs?.length
    ? sql`, destination_job as (
      insert into destination_jobs
      select * from json_populate_recordset(null::destination_jobs, ${JSON.stringify(jobs)}::json)
      where exists (select from conversion)
    )`
    : sql``;
  // The webhook outbox: one row per enabled endpoint of the account and mode that subscribes.
  const webhookMessages = webhook
    ? sql`, webhook_message as (
      insert into webhook_messages
        (webhook_id, event_id, account_id, livemode, event_type, payload, status, attempts, next_attempt_at, created_at)
      select w.id, e.event_id, w.account_id, w.livemode, e.event_type, e.payload, 'pending', 0, e.created_at, e.created_at
      from json_populate_record(null::webhook_messages, ${JSON.stringify(webhook)}::json) e
      join webhooks w on w.account_id = e.account_id and w.livemode = e.livemode and w.status = 'enabled'
        and w.events like '%"' || e.event_type || '"%'
      where exists (select from conversion)
    )`
    : sql``;
  return sql<{ id: string }>`
    with input as (
      select * from json_populate_record(null::conversions, ${JSON.stringify(conversion)}::json)
    ), key as (
      insert into conversion_keys (store_id, livemode, event_type, order_id, conversion_id, event_time)
      select store_id, livemode, event_type, order_id, id, event_time from input
      on conflict (store_id, livemode, event_type, order_id) do nothing
      returning conversion_id
    ), conversion as (
      insert into conversions (${columns})
      select ${columns} from input where id in (select conversion_id from key)
      returning id, store_id
    ), touchpoint as (
      insert into touchpoints (conversion_id, click_id, signal, score, click_time)
      select conversion_id, click_id, signal, score, click_time
      from json_populate_recordset(null::touchpoints, ${JSON.stringify(touchpoints)}::json)
      where exists (select from conversion)
    )${destinationJobs}${webhookMessages}
    insert into rollup_queue (id, store_id, kind, version)
    select id, store_id, 'conversion', 0 from conversion
    returning id`;
}

export async function findConversion(
  db: Reader,
  accountId: string,
  livemode: number,
  conversionId: string,
): Promise<ConversionsTable | undefined> {
  return db
    .selectFrom('conversions')
    .selectAll()
    .where('id', '=', conversionId)
    .where('account_id', '=', accountId)
    .where('livemode', '=', livemode)
    .executeTakeFirst();
}

/**
 * The mode (livemode 0/1) of a conversion of this account by id, in either mode; undefined when
 * the account has none. For telling a caller that an id belongs to the other mode, never its data.
 */
export async function conversionModeOf(db: Reader, accountId: string, conversionId: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('conversions')
    .select('livemode')
    .where('id', '=', conversionId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return row?.livemode;
}

export interface ConversionFilter {
  storeId?: string;
  eventType?: string;
  attributed?: boolean;
  capiStatus?: ConversionsTable['capi_status'];
  /** Conversions with refunds (true) or without (false). */
  refunded?: boolean;
  /** By their state at one destination (api.md §10: the reconciliation's links). */
  forwarding?: ForwardingFilter;
  from?: number;
  to?: number; // exclusive
}

export async function listConversions(
  db: Reader,
  accountId: string,
  livemode: number,
  filter: ConversionFilter,
  page: Page,
): Promise<ConversionsTable[]> {
  // Aliased `c`: the forwarding condition names the conversion so.
  let query = db.selectFrom('conversions as c').selectAll().where('account_id', '=', accountId).where('livemode', '=', livemode);
  if (filter.storeId) query = query.where('store_id', '=', filter.storeId);
  if (filter.eventType) query = query.where('event_type', '=', filter.eventType);
  if (filter.attributed !== undefined) query = query.where('attributed', '=', filter.attributed ? 1 : 0);
  if (filter.capiStatus) query = query.where('capi_status', '=', filter.capiStatus);
  if (filter.refunded !== undefined) query = query.where('refunded_minor', filter.refunded ? '>' : '=', 0);
  if (filter.forwarding) query = query.where(forwardingCondition(isPostgres(db), filter.forwarding));
  if (filter.from !== undefined) query = query.where('event_time', '>=', filter.from);
  if (filter.to !== undefined) query = query.where('event_time', '<', filter.to);
  const after = page.after;
  if (after) query = query.where((eb) => afterKeyset(eb, 'event_time', 'id', after));
  return query
    .orderBy('event_time', 'desc')
    .orderBy('id', 'desc')
    .limit(rowLimit(page.limit + 1))
    .execute();
}

type IdentityLookup = ReturnType<typeof identityLookup>;
const identityLookups = new Map<string, IdentityLookup>();

function identityLookup(column: 'email_hash' | 'phone_hash', limit: number) {
  return preparedQuery((db, v: { storeId: string; livemode: number; value: string; before: number; excludeId: string }) =>
    db
      .selectFrom('conversions')
      .select('attributed_click_id')
      .where('store_id', '=', v.storeId)
      .where('livemode', '=', v.livemode)
      .where(column, '=', v.value)
      .where('event_time', '<=', v.before)
      .where('attributed', '=', 1)
      .where('id', '!=', v.excludeId)
      .orderBy('event_time', 'desc')
      .limit(rowLimit(limit)),
  );
}

function identityByColumn(column: 'email_hash' | 'phone_hash', limit: number): IdentityLookup {
  const key = `${column}:${limit}`;
  let lookup = identityLookups.get(key);
  if (!lookup) {
    lookup = identityLookup(column, limit);
    identityLookups.set(key, lookup);
  }
  return lookup;
}

/**
 * Clicks that earlier attributed conversions of the same store and mode, sharing a hashed email
 * or phone with this one, were attributed to — most recent first (index-backed).
 */
export async function identityLinkedClickIds(
  db: Reader,
  scope: { storeId: string; livemode: number; before: number; excludeId?: string },
  hashes: { emailHash?: string; phoneHash?: string },
  limit: number,
): Promise<string[]> {
  const ids = new Set<string>();
  for (const [lookup, value] of [
    [identityByColumn('email_hash', limit), hashes.emailHash],
    [identityByColumn('phone_hash', limit), hashes.phoneHash],
  ] as const) {
    if (!value) continue;
    // No conversion has the empty id: without one to exclude, the condition excludes nothing.
    const { rows } = await lookup(db, { ...scope, value, excludeId: scope.excludeId ?? '' });
    for (const row of rows) if (row.attributed_click_id) ids.add(row.attributed_click_id);
  }
  return [...ids];
}

export async function touchpointsOf(db: Reader, conversionId: string): Promise<TouchpointsTable[]> {
  return db
    .selectFrom('touchpoints')
    .selectAll()
    .where('conversion_id', '=', conversionId)
    .orderBy('score', 'desc')
    .orderBy('click_time', 'desc')
    .orderBy('click_id', 'desc')
    .execute();
}

/** Replaces a conversion's attribution result and its touchpoints. */
export async function replaceAttribution(
  db: Writer,
  conversionId: string,
  result: Pick<
    ConversionsTable,
    'attributed' | 'attributed_click_id' | 'attributed_fbclid' | 'confidence' | 'attribution_signal'
  >,
  touchpoints: TouchpointsTable[],
): Promise<void> {
  await db.updateTable('conversions').set(result).where('id', '=', conversionId).execute();
  await db.deleteFrom('touchpoints').where('conversion_id', '=', conversionId).execute();
  for (const touchpoint of touchpoints) await insertTouchpoint(db, touchpoint);
}
