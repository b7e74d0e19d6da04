import { Kysely, type PostgresPool, type PostgresPoolClient } from 'kysely';
import pg from 'pg';
import type { BackgroundErrorHandler, Database, WriteJob, Writer } from '../database.js';
import { checkSchema, migrateToLatest } from '../migrations/index.js';
import type { DB } from '../schema.js';
import { DatabaseThread } from '../worker-thread.js';
import { Batcher } from './batcher.js';
import { PostgresEngineDialect } from './engine.js';
import { ensurePartitions } from './partitions.js';

/** How often an instance makes sure next months' partitions exist (they are created 3 months ahead). */
const PARTITION_CHECK_MS = 6 * 3_600_000;

/**
 * PostgreSQL: a connection pool and one short transaction per write (no group commit — the
 * server already groups its WAL flushes across connections). Any number of instances may share
 * the database; every write job holds its invariants through unique constraints, row locks and
 * `FOR UPDATE SKIP LOCKED` claims (engine.ts `locks`), never through in-process ordering.
 */
export interface PostgresOptions {
  /** Connections per instance (default 10). */
  poolSize?: number;
  /**
   * How long a request may wait for the database before it is answered 503 (default 4 s):
   * the bound on acquiring a connection and on any one statement, so an unreachable database
   * answers within seconds instead of hanging.
   */
  timeoutMs?: number;
  /**
   * Frequent statements as named prepared statements (default true; `StatementNames`). Off for
   * a connection pooler that cannot keep them (PgBouncer before 1.21, or without
   * `max_prepared_statements`, in transaction mode).
   */
  preparedStatements?: boolean;
  onError?: BackgroundErrorHandler;
  /** The background thread loads the built code (`WorkerOptions.built`): the test suite's databases. */
  builtThreads?: boolean;
  /**
   * The connections' `application_name` (what `pg_stat_activity` shows); by default the URL's,
   * if any. The background thread's connection is `waytrack background`.
   */
  applicationName?: string;
}

/** `PostgresOptions.timeoutMs` when not given. */
const DEFAULT_TIMEOUT_MS = 4000;

// bigint (times in ms, money in minor units) and numeric (their sums) as numbers: every value
// the schema stores is a safe integer (money ≤ 1e14 minor units, times ~1.8e12).
const INT8 = 20;
const NUMERIC = 1700;
const types = {
  getTypeParser(oid: number, format?: string) {
    if (oid === INT8 || oid === NUMERIC) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

/**
 * Names for the statements this instance runs often, so that PostgreSQL parses and plans each
 * once per connection instead of once per execution: `pg` sends a query without a name as an
 * unnamed statement, which the server parses and plans every time (measured: most of the
 * PostgreSQL CPU a click cost). A statement gets a name once it has run `minUses` times, and at
 * most `maxNamed` statements ever do, so that one-off texts (an `IN` list of a rare length, DDL)
 * never fill each connection's memory with statements run once. The same idea, and the same
 * two bounds, as Npgsql's automatic preparation.
 */
/**
 * A list of more than 16 parameters after `in`: such statements run unnamed. A named statement
 * gets a generic plan after five runs, and a generic plan of `key in ($1 … $100)` over the
 * monthly partitions scanned them all (a cohort fold step: 3.9 s named, 1.1 s unnamed, at 2M
 * clicks); unnamed, each is planned for its values. Batch inserts (many parameters, no `in`)
 * stay named.
 */
const LONG_IN_LIST = /\bin \((\$\d+, ){16}/i;

/** `PLANNED_PER_VALUES` (db/database.ts) in a statement's text: it runs unnamed, planned for its values. */
const MARKED_PER_VALUES = /\/\* planned per values \*\//;

export class StatementNames {
  private readonly uses = new Map<string, number>();
  private readonly names = new Map<string, string>();

  constructor(
    private readonly minUses = 3,
    private readonly maxNamed = 500,
  ) {}

  /** The name to run `sql` under, or undefined to run it unnamed. */
  nameOf(sql: string): string | undefined {
    const name = this.names.get(sql);
    if (name !== undefined || this.names.size >= this.maxNamed) return name;
    if (!/^\s*(select|insert|update|delete|with)\b/i.test(sql) || LONG_IN_LIST.test(sql) || MARKED_PER_VALUES.test(sql)) {
      return undefined;
    }
    const uses = (this.uses.get(sql) ?? 0) + 1;
    if (uses < this.minUses) {
      // Counting is bounded too: texts seen once or twice are forgotten when too many pile up.
      if (this.uses.size >= this.maxNamed * 20) this.uses.clear();
      this.uses.set(sql, uses);
      return undefined;
    }
    this.uses.delete(sql);
    const named = `waytrack_${this.names.size + 1}`;
    this.names.set(sql, named);
    return named;
  }
}

/**
 * The pool as Kysely sees it, with two differences. Frequent statements run named (see
 * `StatementNames`). And a connection on which a query timed out is
 * closed instead of going back to the pool. pg's `query_timeout` fails the query but leaves it
 * active on its connection, and every later query there queues behind it: on a database that
 * went silent without closing anything (a half-open connection), that connection would answer
 * nothing ever again, and the instance would stay unavailable after the database came back.
 * Queries after the timeout on the same checkout (the transaction's ROLLBACK) fail at once
 * instead of waiting out another timeout.
 */
function kyselyPool(pool: pg.Pool, statements: StatementNames): PostgresPool {
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      let broken: Error | undefined;
      // A transaction that raised its own statement bound (`set local statement_timeout`, the
      // rare long job such as a store's rollup rebuild) gets the same bound on the client side.
      let longMs: number | undefined;
      const query = async (sql: string, parameters: ReadonlyArray<unknown>) => {
        if (broken) throw broken;
        const raised = /^set local statement_timeout = '(\d+)min'/.exec(sql);
        if (raised) longMs = Number(raised[1]) * 60_000;
        try {
          // pg reads query_timeout from a query's config (its types do not declare it).
          const config = { text: sql, values: parameters as unknown[], name: statements.nameOf(sql), query_timeout: longMs };
          return await client.query(config as pg.QueryConfig);
        } catch (error) {
          if ((error as Error | undefined)?.message === 'Query read timeout') broken = error as Error;
          throw error;
        }
      };
      return {
        query: query as unknown as PostgresPoolClient['query'],
        // With an error, the pool ends the connection (destroying the socket of a hung query).
        release: () => client.release(broken),
      };
    },
    end: () => pool.end(),
  };
}

/** Serialization failures and deadlocks: the transaction did nothing and may simply run again. */
const RETRYABLE = new Set(['40001', '40P01']);
const MAX_ATTEMPTS = 5;

/**
 * The URL with `-c jit=off` added to its startup `options` (after any it has, such as a
 * `search_path`: the URL's own options replace a pool's, so they are joined here). Every
 * statement Waytrack runs is short (rollups answer the reports), and compiling the large
 * expressions of a short one cost more than running it: the report facts of 500 conversions
 * took 1.3 s with JIT (the plan's cost estimate over 17 monthly partitions passed
 * `jit_above_cost`) and 30 ms without, on a store of 2M clicks (bench/README.md).
 */
export function withoutJit(url: string): string {
  const parsed = new URL(url);
  const options = parsed.searchParams.get('options');
  parsed.searchParams.set('options', options ? `${options} -c jit=off` : '-c jit=off');
  return parsed.toString();
}

/**
 * Kysely over a pool of this module's settings: `poolSize` connections, the timeouts, the
 * number types, named statements, and listeners that keep a lost connection from ending the
 * process. The instance's pool (`openPostgres`) and its background thread's (worker.ts) are both.
 */
export function postgresKysely(url: string, options: PostgresOptions = {}): Kysely<DB> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const pool = new pg.Pool({
    connectionString: withoutJit(url),
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: timeoutMs,
    // Client-side bound on a query (a database that stopped answering without closing the
    // connection); the server-side one cancels the statement itself.
    query_timeout: timeoutMs,
    statement_timeout: timeoutMs,
    idle_in_transaction_session_timeout: timeoutMs * 5,
    idleTimeoutMillis: 30_000,
    types,
    ...(options.applicationName !== undefined && { application_name: options.applicationName }),
  });
  // An idle connection that breaks (database restarted) is dropped by the pool; without a
  // listener the error would end the process.
  pool.on('error', (error) =>
    options.onError?.(error, 'database connection lost while idle; the pool opens another when needed'),
  );
  // A connection that breaks while checked out (mid-transaction, or between a query's timeout
  // and its release) makes its client emit 'error' with no pool listener attached: without
  // this one the process would end. The query in flight fails on its own (→ 503).
  pool.on('connect', (client) =>
    client.on('error', (error) => options.onError?.(error, 'database connection lost; the pool opens another when needed')),
  );
  return new Kysely<DB>({
    dialect: new PostgresEngineDialect({
      pool: kyselyPool(pool, new StatementNames(3, options.preparedStatements === false ? 0 : 500)),
    }),
  });
}

/**
 * The instance's database: a pool of `poolSize` connections for requests and writes, and a
 * background thread with a connection of its own (db/postgres/worker.ts) for background jobs:
 * the rollup fold reads and folds there, off the event loop, as on the embedded database, and
 * only its one short write runs here.
 */
export function openPostgres(url: string, options: PostgresOptions = {}): Database {
  const db = postgresKysely(url, options);
  const background = new DatabaseThread(
    {
      engine: 'postgres',
      url,
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      preparedStatements: options.preparedStatements !== false,
    },
    { built: options.builtThreads ?? false, lowPriority: true },
  );
  const partitionCheck = setInterval(
    () =>
      ensurePartitions(db, Date.now()).catch((error) =>
        options.onError?.(error, 'database partitions for the next months could not be created; retrying in 6 hours'),
      ),
    PARTITION_CHECK_MS,
  );
  partitionCheck.unref();

  async function write<T>(work: (trx: Writer) => Promise<T>): Promise<T> {
    return withRetries(() => db.transaction().execute(work));
  }

  async function withRetries<T>(attempt: () => Promise<T>): Promise<T> {
    for (let attempts = 1; ; attempts++) {
      try {
        return await attempt();
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        if (attempts >= MAX_ATTEMPTS || typeof code !== 'string' || !RETRYABLE.has(code)) throw error;
        await new Promise((r) => setTimeout(r, Math.random() * 10 * attempts));
      }
    }
  }

  function runOne<A, R>(job: WriteJob<A, R>, arg: A): Promise<R> {
    return job.oneStatement ? withRetries(() => job.run(db, arg)) : write((trx) => job.run(trx, arg));
  }

  // biome-ignore lint/suspicious/noExplicitAny: one batcher per job, whatever its types
  const batchers = new Map<WriteJob<any, any>, Batcher<unknown, unknown>>();
  function runWrite<A, R>(job: WriteJob<A, R>, arg: A): Promise<R> {
    const runBatch = job.runBatch;
    if (!runBatch) return runOne(job, arg);
    let batcher = batchers.get(job) as Batcher<A, R> | undefined;
    if (!batcher) {
      batcher = new Batcher<A, R>(
        (args) => withRetries(() => runBatch(db, args)),
        (one) => runOne(job, one),
      );
      batchers.set(job, batcher as Batcher<unknown, unknown>);
    }
    return batcher.run(arg);
  }

  return {
    read: db,
    write,
    runWrite,
    background: (job, arg) => background.run({ type: 'job', name: job.name, arg }),
    migrate: () => migrateWithoutTimeout(url),
    checkSchema: () => checkSchema(db as unknown as Kysely<unknown>),
    async ping() {
      await db.selectNoFrom((eb) => eb.lit(1).as('one')).execute();
    },
    async close() {
      clearInterval(partitionCheck);
      await background.close();
      await db.destroy();
    },
  };
}

/**
 * Migrations run on a connection of their own without the request timeouts (an index on a
 * large table takes longer than a request may). Several instances starting at once are
 * serialized by Kysely's advisory lock. Then this month's and the next months' partitions.
 */
async function migrateWithoutTimeout(url: string): Promise<string[]> {
  const pool = new pg.Pool({ connectionString: url, max: 1, types });
  const db = new Kysely<unknown>({ dialect: new PostgresEngineDialect({ pool }) });
  try {
    const applied = await migrateToLatest(db);
    await ensurePartitions(db, Date.now());
    return applied;
  } finally {
    await db.destroy();
  }
}

/** `host:port/database` of a PostgreSQL URL (never its credentials). */
export function postgresLocation(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    return `${url.host || 'localhost'}${url.pathname || '/'}`;
  } catch {
    return 'server';
  }
}
