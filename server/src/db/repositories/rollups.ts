import { type Compilable, type RawBuilder, type SelectQueryBuilder, sql } from 'kysely';
import type { Executor } from '../database.js';
import { preparedReading } from '../prepared.js';
import { rowLimit } from '../row-limit.js';
import type {
  DB,
  RollupDaysTable,
  RollupDimensionClicksTable,
  RollupDimensionCreditsTable,
  RollupHoursTable,
  RollupStoresTable,
} from '../schema.js';

/** SQL of the analytics rollups (see analytics/rollups.ts for what they hold and when they change). */

const MARKS = ['clicks', 'conversions'] as const;
export type Marks = Record<(typeof MARKS)[number], number>;

/** A click as the rollups need it; `seq` is its rowid. */
export interface ClickFact {
  seq: number;
  store_id: string;
  livemode: number;
  click_time: number;
  is_bot: number;
  utm_source: string | null;
  utm_medium: string | null;
  utm_campaign: string | null;
  utm_content: string | null;
  campaign_id: string | null;
  adset_id: string | null;
  ad_id: string | null;
  landing_page: string | null;
}

/**
 * A conversion joined with one credited click: one row per touchpoint of an attributed
 * conversion (or its attributed click when it has no touchpoints), one row with `click_id` null
 * otherwise. Rows of one conversion are adjacent.
 */
export interface ConversionFact extends Omit<ClickFact, 'seq' | 'store_id' | 'livemode' | 'click_time' | 'is_bot'> {
  seq: number;
  id: string;
  store_id: string;
  livemode: number;
  event_type: string;
  event_time: number;
  value_minor: number;
  currency: string;
  attributed: number;
  attributed_click_id: string | null;
  click_id: string | null;
  click_time: number | null;
}

export async function readMarks(db: Executor): Promise<Marks> {
  const rows = await db.selectFrom('rollup_state').select(['name', 'value']).where('name', 'in', MARKS).execute();
  const marks: Marks = { clicks: 0, conversions: 0 };
  for (const row of rows) marks[row.name as keyof Marks] = Number(row.value);
  return marks;
}

export async function writeMarks(db: Executor, marks: Marks): Promise<void> {
  await db
    .insertInto('rollup_state')
    .values(MARKS.map((name) => ({ name, value: marks[name] })))
    .onConflict((oc) => oc.column('name').doUpdateSet((eb) => ({ value: eb.ref('excluded.value') })))
    .execute();
}

/**
 * Counts changes made to stored conversions' attribution (reattribution): a fold computed from
 * rows read before such a change must not be written after it.
 */
export async function readAttributionChanges(db: Executor): Promise<number> {
  const row = await db.selectFrom('rollup_state').select('value').where('name', '=', 'attribution_changes').executeTakeFirst();
  return Number(row?.value ?? 0);
}

export async function countAttributionChange(db: Executor): Promise<void> {
  await db
    .insertInto('rollup_state')
    .values({ name: 'attribution_changes', value: 1 })
    .onConflict((oc) => oc.column('name').doUpdateSet((eb) => ({ value: eb('rollup_state.value', '+', 1) })))
    .execute();
}

/** Highest rowids stored and folded in: rows above the marks are not in the rollups yet. */
export async function rollupProgress(db: Executor): Promise<{ stored: Marks; folded: Marks }> {
  const { rows } = await sql<{ clicks: number | null; conversions: number | null; c_mark: number | null; v_mark: number | null }>`
    select (select max(rowid) from clicks) as clicks,
           (select max(rowid) from conversions) as conversions,
           (select value from rollup_state where name = 'clicks') as c_mark,
           (select value from rollup_state where name = 'conversions') as v_mark`.execute(db);
  const row = rows[0];
  return {
    stored: { clicks: Number(row?.clicks ?? 0), conversions: Number(row?.conversions ?? 0) },
    folded: { clicks: Number(row?.c_mark ?? 0), conversions: Number(row?.v_mark ?? 0) },
  };
}

/** The zone a store's rollups are computed in, and the progress of a rebuild when one is running. */
export interface RollupStore {
  timezone: string;
  tzdata: string;
  rebuild: Rebuild | null;
}

/** Rowids folded so far by a rebuild (`done`) and the watermarks it must reach (`until`). */
export interface Rebuild {
  done: Marks;
  until: Marks;
}

function rollupStoreOf(row: RollupStoresTable): RollupStore {
  const rebuild =
    row.rebuild_clicks === null
      ? null
      : {
          done: { clicks: Number(row.rebuild_clicks), conversions: Number(row.rebuild_conversions) },
          until: { clicks: Number(row.rebuild_until_clicks), conversions: Number(row.rebuild_until_conversions) },
        };
  return { timezone: row.timezone, tzdata: row.tzdata, rebuild };
}

export async function rollupStores(db: Executor, storeIds: string[]): Promise<Map<string, RollupStore>> {
  const stores = new Map<string, RollupStore>();
  if (storeIds.length === 0) return stores;
  const rows = await db.selectFrom('rollup_stores').selectAll().where('store_id', 'in', storeIds).execute();
  for (const row of rows) stores.set(row.store_id, rollupStoreOf(row));
  return stores;
}

/** Stores never folded in take their current time zone; returns every given store's rollup zone. */
export async function adoptZones(db: Executor, storeIds: string[], tzdata: string): Promise<Map<string, string>> {
  const zones = new Map<string, string>();
  for (const [id, store] of await rollupStores(db, storeIds)) zones.set(id, store.timezone);
  const missing = storeIds.filter((id) => !zones.has(id));
  if (missing.length > 0) {
    const stores = await db.selectFrom('stores').select(['id', 'timezone']).where('id', 'in', missing).execute();
    for (const store of stores) zones.set(store.id, store.timezone);
    if (stores.length > 0) {
      await db
        .insertInto('rollup_stores')
        .values(stores.map((s) => ({ store_id: s.id, timezone: s.timezone, tzdata })))
        .execute();
    }
  }
  return zones;
}

/** Records a store's new zone and the rebuild that must refold its rows (null: no rebuild). */
export async function setRollupStore(db: Executor, storeId: string, store: RollupStore): Promise<void> {
  const columns = {
    timezone: store.timezone,
    tzdata: store.tzdata,
    rebuild_clicks: store.rebuild?.done.clicks ?? null,
    rebuild_conversions: store.rebuild?.done.conversions ?? null,
    rebuild_until_clicks: store.rebuild?.until.clicks ?? null,
    rebuild_until_conversions: store.rebuild?.until.conversions ?? null,
  };
  await db
    .insertInto('rollup_stores')
    .values({ store_id: storeId, ...columns })
    .onConflict((oc) => oc.column('store_id').doUpdateSet(columns))
    .execute();
}

/** Stores whose rollups need work: their time zone or the time zone data changed, or a rebuild is running. */
export async function storesNeedingRebuild(db: Executor, tzdata: string): Promise<string[]> {
  const rows = await db
    .selectFrom('rollup_stores')
    .innerJoin('stores', 'stores.id', 'rollup_stores.store_id')
    .select('stores.id')
    .where((eb) =>
      eb.or([
        eb('stores.timezone', '!=', eb.ref('rollup_stores.timezone')),
        eb('rollup_stores.tzdata', '!=', tzdata),
        eb('rollup_stores.rebuild_clicks', 'is not', null),
      ]),
    )
    .execute();
  return rows.map((r) => r.id);
}

export async function deleteStoreRollups(db: Executor, storeId: string): Promise<void> {
  await db.deleteFrom('rollup_days').where('store_id', '=', storeId).execute();
  await db.deleteFrom('rollup_hours').where('store_id', '=', storeId).execute();
  await db.deleteFrom('rollup_dimension_clicks').where('store_id', '=', storeId).execute();
  await db.deleteFrom('rollup_dimension_credits').where('store_id', '=', storeId).execute();
}

const CLICK_COLUMNS = [
  'store_id',
  'livemode',
  'click_time',
  'is_bot',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_content',
  'campaign_id',
  'adset_id',
  'ad_id',
  'landing_page',
] as const;

/** Restricts a fetch to one store's rows up to a rowid (a rebuild). */
export interface StoreScope {
  storeId: string;
  upTo: number;
}

/** Up to `limit` clicks with rowid above `after` (of one store up to a rowid, with `scope`), in rowid order. */
export async function clicksAfter(db: Executor, after: number, limit: number, scope?: StoreScope): Promise<ClickFact[]> {
  let query = db
    .selectFrom('clicks')
    .select([sql<number>`rowid`.as('seq'), ...CLICK_COLUMNS])
    .where(sql<number>`rowid`, '>', after);
  // `+store_id` keeps SQLite on the rowid order instead of a store index that would need a sort.
  if (scope) query = query.where(sql<string>`+store_id`, '=', scope.storeId).where(sql<number>`rowid`, '<=', scope.upTo);
  return query.orderBy(sql`rowid`).limit(rowLimit(limit)).execute();
}

function conversionFacts(db: Executor): SelectQueryBuilder<DB, 'conversions' | 'touchpoints' | 'clicks', ConversionFact> {
  return (
    db
      .selectFrom('conversions')
      .leftJoin('touchpoints', (j) =>
        j.onRef('touchpoints.conversion_id', '=', 'conversions.id').on('conversions.attributed', '=', 1),
      )
      // The touchpoint's click; an attributed conversion without touchpoints credits its attributed click.
      .leftJoin('clicks', (j) =>
        j.on(
          'clicks.id',
          '=',
          sql<string>`coalesce(touchpoints.click_id, case when conversions.attributed = 1 then conversions.attributed_click_id end)`,
        ),
      )
      .select([
        sql<number>`conversions.rowid`.as('seq'),
        'conversions.id',
        'conversions.store_id',
        'conversions.livemode',
        'conversions.event_type',
        'conversions.event_time',
        'conversions.value_minor',
        'conversions.currency',
        'conversions.attributed',
        'conversions.attributed_click_id',
        'clicks.id as click_id',
        'clicks.click_time',
        'clicks.utm_source',
        'clicks.utm_medium',
        'clicks.utm_campaign',
        'clicks.utm_content',
        'clicks.campaign_id',
        'clicks.adset_id',
        'clicks.ad_id',
        'clicks.landing_page',
      ]) as unknown as SelectQueryBuilder<DB, 'conversions' | 'touchpoints' | 'clicks', ConversionFact>
  );
}

/** Facts of up to `limit` conversions with rowid above `after` (of one store up to a rowid, with `scope`), in rowid order. */
export async function conversionsAfter(
  db: Executor,
  after: number,
  limit: number,
  scope?: StoreScope,
): Promise<ConversionFact[]> {
  const last = await db
    .selectFrom((eb) => {
      let next = eb.selectFrom('conversions').select(sql<number>`rowid`.as('seq')).where(sql<number>`rowid`, '>', after);
      if (scope) next = next.where(sql<string>`+store_id`, '=', scope.storeId).where(sql<number>`rowid`, '<=', scope.upTo);
      return next.orderBy(sql`rowid`).limit(rowLimit(limit)).as('next');
    })
    .select((eb) => eb.fn.max('next.seq').as('upTo'))
    .executeTakeFirst();
  const upTo = last?.upTo;
  if (upTo === null || upTo === undefined) return [];
  let query = conversionFacts(db)
    .where(sql<number>`conversions.rowid`, '>', after)
    .where(sql<number>`conversions.rowid`, '<=', Number(upTo));
  if (scope) query = query.where(sql<string>`+conversions.store_id`, '=', scope.storeId);
  return query.orderBy(sql`conversions.rowid`).execute();
}

/** Facts of one conversion (none when it does not exist). */
export async function conversionFactsOf(db: Executor, conversionId: string): Promise<ConversionFact[]> {
  return conversionFacts(db).where('conversions.id', '=', conversionId).execute();
}

/** Rows per statement of the rollup upserts: a batch is written as chunks of these sizes. */
const CHUNK_SIZES = [64, 16, 4, 1];
const SEP = '\u0001';

/**
 * A multi-row upsert, prepared once per chunk size (prepared.ts): building a 100-row insert
 * with Kysely on every write cost twice SQLite's work (measured: 9 ms against 4 ms for one
 * second's fold at 500 conversions/s), and each new row count was a new statement to prepare.
 */
function chunkedUpsert<T extends object>(
  columns: readonly (keyof T & string)[],
  build: (db: Executor, rows: T[]) => Compilable<unknown>,
) {
  // Row r's value of column c is named `r<SEP>c`; the build sees the rows again.
  const rowsOf = (size: number, values: Record<string, unknown>) =>
    Array.from({ length: size }, (_, r) => Object.fromEntries(columns.map((c) => [c, values[`${r}${SEP}${c}`]])) as T);
  const statements = new Map(
    CHUNK_SIZES.map((size) => {
      const names = Array.from({ length: size }, (_, r) => columns.map((c) => `${r}${SEP}${c}`)).flat();
      const read = (name: string) => {
        const [r, column] = name.split(SEP) as [string, keyof T];
        const index = Number(r);
        return (chunk: { rows: T[]; at: number }) => (chunk.rows[chunk.at + index] as T)[column];
      };
      return [size, preparedReading((db, values) => build(db, rowsOf(size, values)), names, read)] as const;
    }),
  );
  return async (db: Executor, rows: T[]): Promise<void> => {
    const chunk = { rows, at: 0 };
    for (const size of CHUNK_SIZES) {
      const statement = statements.get(size) as NonNullable<ReturnType<typeof statements.get>>;
      for (; rows.length - chunk.at >= size; chunk.at += size) await statement(db, chunk);
    }
  };
}

const TOTALS = ['clicks', 'conversions', 'attributed', 'purchases', 'revenue_minor', 'attributed_revenue_minor'] as const;

/** `column = <table>.column + excluded.column` for each column: the upsert adds the row's deltas. */
function addingUp<C extends string>(table: string, columns: readonly C[]): Record<C, RawBuilder<number>> {
  return Object.fromEntries(
    columns.map((column) => [column, sql<number>`${sql.ref(`${table}.${column}`)} + ${sql.ref(`excluded.${column}`)}`]),
  ) as Record<C, RawBuilder<number>>;
}

/** Adds the given deltas to the daily totals. */
export const addDayTotals = chunkedUpsert(
  ['store_id', 'livemode', 'local_date', 'currency', ...TOTALS],
  (db, rows: RollupDaysTable[]) =>
    db
      .insertInto('rollup_days')
      .values(rows)
      .onConflict((oc) =>
        oc.columns(['store_id', 'livemode', 'local_date', 'currency']).doUpdateSet(addingUp('rollup_days', TOTALS)),
      ),
);

/** Adds the given deltas to the hourly totals. */
export const addHours = chunkedUpsert(
  ['store_id', 'livemode', 'local_date', 'hour_start', 'currency', ...TOTALS],
  (db, rows: RollupHoursTable[]) =>
    db
      .insertInto('rollup_hours')
      .values(rows)
      .onConflict((oc) =>
        oc
          .columns(['store_id', 'livemode', 'local_date', 'hour_start', 'currency'])
          .doUpdateSet(addingUp('rollup_hours', TOTALS)),
      ),
);

export const addDimensionClicks = chunkedUpsert(
  ['store_id', 'livemode', 'dimension', 'local_date', 'value', 'clicks'],
  (db, rows: RollupDimensionClicksTable[]) =>
    db
      .insertInto('rollup_dimension_clicks')
      .values(rows)
      .onConflict((oc) =>
        oc
          .columns(['store_id', 'livemode', 'dimension', 'local_date', 'value'])
          .doUpdateSet(addingUp('rollup_dimension_clicks', ['clicks'])),
      ),
);

export const addDimensionCredits = chunkedUpsert(
  ['store_id', 'livemode', 'dimension', 'model', 'local_date', 'value', 'currency', 'units', 'revenue_minor'],
  (db, rows: RollupDimensionCreditsTable[]) =>
    db
      .insertInto('rollup_dimension_credits')
      .values(rows)
      .onConflict((oc) =>
        oc
          .columns(['store_id', 'livemode', 'dimension', 'model', 'local_date', 'value', 'currency'])
          .doUpdateSet(addingUp('rollup_dimension_credits', ['units', 'revenue_minor'])),
      ),
);

export interface DateSpan {
  startDate: string;
  endDate: string; // inclusive
}

export interface Totals {
  currency: string;
  clicks: number;
  conversions: number;
  attributed: number;
  purchases: number;
  revenueMinor: number;
  attributedRevenueMinor: number;
}

const totals = (r: {
  currency: string;
  clicks: number | string;
  conversions: number | string;
  attributed: number | string;
  purchases: number | string;
  revenue_minor: number | string;
  attributed_revenue_minor: number | string;
}): Totals => ({
  currency: r.currency,
  clicks: Number(r.clicks),
  conversions: Number(r.conversions),
  attributed: Number(r.attributed),
  purchases: Number(r.purchases),
  revenueMinor: Number(r.revenue_minor),
  attributedRevenueMinor: Number(r.attributed_revenue_minor),
});

function daySums(db: Executor, storeId: string, livemode: number, span: DateSpan) {
  return db
    .selectFrom('rollup_days')
    .select((eb) => [
      'currency',
      eb.fn.sum<number>('clicks').as('clicks'),
      eb.fn.sum<number>('conversions').as('conversions'),
      eb.fn.sum<number>('attributed').as('attributed'),
      eb.fn.sum<number>('purchases').as('purchases'),
      eb.fn.sum<number>('revenue_minor').as('revenue_minor'),
      eb.fn.sum<number>('attributed_revenue_minor').as('attributed_revenue_minor'),
    ])
    .where('store_id', '=', storeId)
    .where('livemode', '=', livemode)
    .where('local_date', '>=', span.startDate)
    .where('local_date', '<=', span.endDate);
}

/** Totals over local dates, per currency ('' carries the clicks). */
export async function sumTotals(db: Executor, storeId: string, livemode: number, span: DateSpan): Promise<Totals[]> {
  const rows = await daySums(db, storeId, livemode, span).groupBy('currency').execute();
  return rows.map(totals);
}

/** Totals of one bucket: clicks, conversions and attributed ones of every currency, purchases and revenue in one. */
export interface BucketTotals {
  clicks: number;
  conversions: number;
  attributed: number;
  purchases: number;
  revenueMinor: number;
  attributedRevenueMinor: number;
}

function bucketSums<T extends 'rollup_days' | 'rollup_hours'>(db: Executor, table: T, currency: string) {
  // Summed in SQL: a row per bucket reaches JavaScript instead of one per bucket and currency.
  return db.selectFrom(table as 'rollup_hours').select((eb) => {
    const inCurrency = (column: 'purchases' | 'revenue_minor' | 'attributed_revenue_minor') =>
      eb.fn.sum<number>(eb.case().when('currency', '=', currency).then(eb.ref(column)).else(0).end());
    return [
      eb.fn.sum<number>('clicks').as('clicks'),
      eb.fn.sum<number>('conversions').as('conversions'),
      eb.fn.sum<number>('attributed').as('attributed'),
      inCurrency('purchases').as('purchases'),
      inCurrency('revenue_minor').as('revenue_minor'),
      inCurrency('attributed_revenue_minor').as('attributed_revenue_minor'),
    ];
  });
}

const bucketTotals = (r: {
  clicks: number | string;
  conversions: number | string;
  attributed: number | string;
  purchases: number | string;
  revenue_minor: number | string;
  attributed_revenue_minor: number | string;
}): BucketTotals => ({
  clicks: Number(r.clicks),
  conversions: Number(r.conversions),
  attributed: Number(r.attributed),
  purchases: Number(r.purchases),
  revenueMinor: Number(r.revenue_minor),
  attributedRevenueMinor: Number(r.attributed_revenue_minor),
});

/** Totals per local date (revenue in `currency`). */
export async function totalsByDate(
  db: Executor,
  storeId: string,
  livemode: number,
  span: DateSpan,
  currency: string,
): Promise<Array<BucketTotals & { localDate: string }>> {
  const rows = await bucketSums(db, 'rollup_days', currency)
    .select('local_date')
    .where('store_id', '=', storeId)
    .where('livemode', '=', livemode)
    .where('local_date', '>=', span.startDate)
    .where('local_date', '<=', span.endDate)
    .groupBy('local_date')
    .execute();
  return rows.map((r) => ({ ...bucketTotals(r), localDate: r.local_date }));
}

/** Totals per local-hour bucket, by its start instant (revenue in `currency`). */
export async function totalsByHour(
  db: Executor,
  storeId: string,
  livemode: number,
  span: DateSpan,
  currency: string,
): Promise<Array<BucketTotals & { hourStart: number }>> {
  const rows = await bucketSums(db, 'rollup_hours', currency)
    .select('hour_start')
    .where('store_id', '=', storeId)
    .where('livemode', '=', livemode)
    .where('local_date', '>=', span.startDate)
    .where('local_date', '<=', span.endDate)
    // in key order, so SQLite groups without sorting
    .groupBy(['local_date', 'hour_start'])
    .execute();
  return rows.map((r) => ({ ...bucketTotals(r), hourStart: Number(r.hour_start) }));
}

/** Clicks per dimension value over local dates. */
export async function sumDimensionClicks(
  db: Executor,
  storeId: string,
  livemode: number,
  dimension: string,
  span: DateSpan,
): Promise<Array<{ value: string; clicks: number }>> {
  const rows = await db
    .selectFrom('rollup_dimension_clicks')
    .select((eb) => ['value', eb.fn.sum<number>('clicks').as('clicks')])
    .where('store_id', '=', storeId)
    .where('livemode', '=', livemode)
    .where('dimension', '=', dimension)
    .where('local_date', '>=', span.startDate)
    .where('local_date', '<=', span.endDate)
    .groupBy('value')
    .execute();
  return rows.map((r) => ({ value: r.value, clicks: Number(r.clicks) }));
}

/** Credited conversions (units, every currency) and credited revenue in `currency`, per dimension value. */
export async function sumDimensionCredits(
  db: Executor,
  storeId: string,
  livemode: number,
  dimension: string,
  model: string,
  span: DateSpan,
  currency: string,
): Promise<Array<{ value: string; units: number; revenueMinor: number }>> {
  const rows = await db
    .selectFrom('rollup_dimension_credits')
    .select((eb) => [
      'value',
      eb.fn.sum<number>('units').as('units'),
      eb.fn
        .sum<number>(eb.case().when('currency', '=', currency).then(eb.ref('revenue_minor')).else(0).end())
        .as('revenue_minor'),
    ])
    .where('store_id', '=', storeId)
    .where('livemode', '=', livemode)
    .where('dimension', '=', dimension)
    .where('model', '=', model)
    .where('local_date', '>=', span.startDate)
    .where('local_date', '<=', span.endDate)
    .groupBy('value')
    .execute();
  return rows.map((r) => ({ value: r.value, units: Number(r.units), revenueMinor: Number(r.revenue_minor) }));
}
