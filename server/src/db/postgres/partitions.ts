import { type Kysely, type QueryExecutorProvider, sql } from 'kysely';

/**
 * PostgreSQL keeps clicks and conversions in monthly range partitions of their event time
 * (migration 0007), so that retention drops a month as one cheap `DROP TABLE` instead of
 * deleting its rows one by one (dead rows, vacuum, index bloat). Partitions are named
 * `<table>_pYYYYMM` (UTC months); each table also has a `<table>_pdefault` partition that takes
 * what no month holds — a conversion reported with an event time older than the oldest month
 * kept. SQLite tables are not partitioned: nothing here runs there.
 */
export const PARTITIONED = [
  { table: 'clicks', column: 'click_time' },
  { table: 'conversions', column: 'event_time' },
] as const;

export type PartitionedTable = (typeof PARTITIONED)[number]['table'];

/** Months created ahead of the current one, so an insert never finds its month missing. */
export const MONTHS_AHEAD = 3;

/** The start of the UTC month `ms` falls in, moved by `months`. */
export function monthStart(ms: number, months = 0): number {
  const date = new Date(ms);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + months, 1);
}

export function partitionName(table: PartitionedTable, month: number): string {
  const date = new Date(month);
  return `${table}_p${date.getUTCFullYear()}${String(date.getUTCMonth() + 1).padStart(2, '0')}`;
}

export interface Partition {
  name: string;
  /** Its time range [lower, upper) in ms; both undefined for the default partition. */
  lower: number | undefined;
  upper: number | undefined;
}

/** The partitions of `table` in the connection's schema, oldest first, the default one last. */
export async function listPartitions(db: QueryExecutorProvider, table: PartitionedTable): Promise<Partition[]> {
  const { rows } = await sql<{ name: string; bound: string }>`
    select child.relname as name, pg_get_expr(child.relpartbound, child.oid) as bound
    from pg_inherits
    join pg_class parent on parent.oid = pg_inherits.inhparent
    join pg_class child on child.oid = pg_inherits.inhrelid
    where parent.relname = ${table} and parent.relnamespace = current_schema()::regnamespace`.execute(db);
  return rows
    .map((row) => {
      // "FOR VALUES FROM ('1764547200000') TO ('1767225600000')", or "DEFAULT"
      const range = /FROM \('?(-?\d+)'?\) TO \('?(-?\d+)'?\)/.exec(row.bound);
      return { name: row.name, lower: range ? Number(range[1]) : undefined, upper: range ? Number(range[2]) : undefined };
    })
    .sort((a, b) => (a.upper ?? Number.POSITIVE_INFINITY) - (b.upper ?? Number.POSITIVE_INFINITY));
}

/** Whether the event tables are partitioned (false before migration 0007 has run). */
export async function arePartitioned(db: QueryExecutorProvider): Promise<boolean> {
  const { rows } = await sql<{ kind: string }>`
    select relkind as kind from pg_class
    where relname = 'clicks' and relnamespace = current_schema()::regnamespace`.execute(db);
  return rows[0]?.kind === 'p';
}

/**
 * Creates, in the caller's transaction, the monthly partitions from `from` up to `MONTHS_AHEAD`
 * months after `now`'s. Several instances may run this at once: an advisory lock held for the
 * transaction serializes them, and a month that exists is skipped. A month whose rows already
 * sit in the default partition (it was missing when they came) cannot be created: it is
 * skipped, and those rows stay in the default partition, which retention also empties.
 */
export async function createPartitions(trx: QueryExecutorProvider, from: number, now: number): Promise<string[]> {
  const created: string[] = [];
  const until = monthStart(now, MONTHS_AHEAD + 1);
  await sql`select pg_advisory_xact_lock(hashtext('waytrack.partitions'))`.execute(trx);
  for (const { table } of PARTITIONED) {
    const existing = new Set((await listPartitions(trx, table)).map((p) => p.name));
    for (let month = monthStart(from); month < until; month = monthStart(month, 1)) {
      const name = partitionName(table, month);
      if (existing.has(name)) continue;
      try {
        await sql`savepoint partition`.execute(trx);
        await sql`create table ${sql.id(name)} partition of ${sql.id(table)}
            for values from (${sql.lit(month)}) to (${sql.lit(monthStart(month, 1))})`.execute(trx);
        await sql`release savepoint partition`.execute(trx);
        created.push(name);
      } catch (error) {
        // 23514: the default partition holds rows of this month.
        if ((error as { code?: string }).code !== '23514') throw error;
        await sql`rollback to savepoint partition`.execute(trx);
      }
    }
  }
  return created;
}

/** Makes sure the current month and the next `MONTHS_AHEAD` exist (also filling any gap after the newest). */
export async function ensurePartitions<T>(db: Kysely<T>, now: number): Promise<string[]> {
  if (!(await arePartitioned(db))) return [];
  let from = monthStart(now);
  for (const { table } of PARTITIONED) {
    const months = (await listPartitions(db, table)).filter((p) => p.upper !== undefined);
    const newest = months.at(-1)?.upper;
    if (newest !== undefined && newest < from) from = newest;
  }
  return db.transaction().execute((trx) => createPartitions(trx, from, now));
}
