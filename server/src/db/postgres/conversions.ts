import { type CompiledQuery, sql } from 'kysely';
import type { Reader, Writer } from '../database.js';
import type { ConversionKey, ConversionRecord, ConversionStatements } from '../engine.js';
import type { ConversionsTable } from '../schema.js';
import { postgresDb } from './schema.js';

/** The partitioned conversions table cannot hold its key unique: `conversion_keys` does (migration 0007). */
export class PostgresConversions implements ConversionStatements {
  /**
   * The key, the conversion, its touchpoints, its rollup queue row and its delivery jobs in one
   * statement (PostgreSQL-only SQL: data-modifying CTEs), one round trip; the rows travel as JSON
   * typed by the tables' own row types. The partitioned table cannot hold the key unique;
   * `conversion_keys` does (migration 0007), and the key goes in first: of two writers of one
   * order the second waits on the key until the first commits, then finds it taken and writes
   * nothing. True when this conversion was inserted.
   */
  async recordOnce(db: Writer, record: ConversionRecord): Promise<boolean> {
    const { conversion, touchpoints } = record;
    const parameters = [
      JSON.stringify(conversion),
      JSON.stringify(touchpoints),
      ...(record.jobs?.length ? [JSON.stringify(record.jobs)] : []),
      ...(record.webhook ? [JSON.stringify(record.webhook)] : []),
      ...(record.customer ? [JSON.stringify(record.customer)] : []),
    ];
    const compiled = recordStatementFor(db, record, parameters);
    const inserted = await db.executeQuery<{ id: string }>({ ...compiled, parameters });
    return inserted.rows.length > 0;
  }

  /** By its key, then by id and time: one partition (see migration 0007). */
  async byKey(db: Reader, key: ConversionKey): Promise<ConversionsTable | undefined> {
    const found = await this.idOfKey(db, key);
    if (!found) return undefined;
    return db
      .selectFrom('conversions')
      .selectAll()
      .where('id', '=', found.id)
      .where('event_time', '=', found.eventTime)
      .executeTakeFirst();
  }

  async idOfKey(db: Reader, key: ConversionKey): Promise<{ id: string; eventTime: number } | undefined> {
    const row = await postgresDb(db)
      .selectFrom('conversion_keys')
      .select(['conversion_id', 'event_time'])
      .where('store_id', '=', key.storeId)
      .where('livemode', '=', key.livemode)
      .where('event_type', '=', key.eventType)
      .where('order_id', '=', key.orderId)
      .executeTakeFirst();
    return row && { id: row.conversion_id, eventTime: Number(row.event_time) };
  }

  /** From the unpartitioned `conversion_keys`. */
  async ofOrder(db: Reader, order: { storeId: string; livemode: number; orderId: string }, limit: number) {
    const rows = await postgresDb(db)
      .selectFrom('conversion_keys')
      .select(['conversion_id', 'event_type', 'event_time'])
      .where('store_id', '=', order.storeId)
      .where('livemode', '=', order.livemode)
      .where('order_id', '=', order.orderId)
      .limit(limit)
      .execute();
    return rows.map((r) => ({ id: r.conversion_id, eventType: r.event_type, eventTime: Number(r.event_time) }));
  }

  /** Their dedup keys (migration 0007), found through the time index. */
  async deleteKeys(trx: Writer, before: number, conversionIds: string[]): Promise<void> {
    await postgresDb(trx)
      .deleteFrom('conversion_keys')
      .where('event_time', '<', before)
      .where('conversion_id', 'in', conversionIds)
      .execute();
  }
}

/**
 * The statement's text depends only on the columns of the conversion and of the delivery job:
 * it is built and compiled by Kysely once per such shape (a conversion paid ~2–3 % of its CPU
 * for building it every time), then run with the three JSON values as its parameters.
 */
const recordStatements = new Map<string, CompiledQuery>();

function recordStatementFor(db: Writer, record: ConversionRecord, parameters: string[]): CompiledQuery {
  const shape = `${Object.keys(record.conversion)}|${record.jobs?.length ? 'jobs' : '-'}|${record.webhook ? 'webhook' : '-'}|${record.customer ? 'customer' : '-'}`;
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

function recordStatement({ conversion, touchpoints, jobs, webhook, customer }: ConversionRecord) {
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
  // The customer (api.md §11): the earliest conversion by (event time, id) stays its first.
  const customerRow = customer
    ? sql`, customer as (
      insert into customers
      select * from json_populate_record(null::customers, ${JSON.stringify(customer)}::json)
      where exists (select from conversion)
      on conflict (store_id, livemode, customer_key) do update set
        first_conversion_id = excluded.first_conversion_id, first_event_time = excluded.first_event_time,
        channel = excluded.channel, campaign_id = excluded.campaign_id
      where (excluded.first_event_time, excluded.first_conversion_id) < (customers.first_event_time, customers.first_conversion_id)
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
    )${destinationJobs}${webhookMessages}${customerRow}
    insert into rollup_queue (id, store_id, kind, version)
    select id, store_id, 'conversion', 0 from conversion
    returning id`;
}
