import type { Compilable, CompiledQuery, Kysely, QueryResult } from 'kysely';
import type { Reader, Writer } from './database.js';
import type { DB } from './schema.js';

/** What a prepared statement is built with (a statement built here is executed only through the typed functions below). */
type Builder = Kysely<DB>;

/**
 * Queries of the hot paths, built and compiled by Kysely once and then executed with new
 * values. Building and compiling a query costs more than SQLite's execution of these indexed
 * lookups (measured on the conversion endpoint: ~60 µs of query building per statement, against
 * 20–30 µs of SQLite), so the typed query stays the single definition and the per-request work
 * is filling in parameters.
 *
 * The query is compiled with a marker in place of each value; the markers' positions among the
 * compiled parameters say where each value goes. Values must be plain parameters (compared,
 * inserted): anything Kysely would inline into the SQL text is refused when compiling.
 */
const MARK = '\u0000wt-param:';

interface Plan {
  compiled: CompiledQuery;
  /** Per compiled parameter: the name of the value it takes, or a constant of the query. */
  slots: Array<{ name: string } | { constant: unknown }>;
}

/** The Kysely instance's adapter (its transactions share it): one compiled form per instance. */
function adapterOf(db: Reader): object {
  return (db as unknown as { getExecutor(): { adapter: object } }).getExecutor().adapter;
}

/** Compiles `build` with a marker per value name, once per Kysely instance and set of names. */
function planner<V extends object, R>(build: (db: Builder, values: V) => Compilable<R>) {
  const plans = new WeakMap<object, Map<string, Plan>>();
  const compile = (db: Reader, names: string[]): Plan => {
    const markers = Object.fromEntries(names.map((name) => [name, `${MARK}${name}`])) as V;
    const compiled = build(db as Builder, markers).compile() as CompiledQuery;
    const slots = compiled.parameters.map((p) =>
      typeof p === 'string' && p.startsWith(MARK) ? { name: p.slice(MARK.length) } : { constant: p },
    );
    const bound = new Set(slots.flatMap((s) => ('name' in s ? [s.name] : [])));
    if (compiled.sql.includes(MARK) || names.some((name) => !bound.has(name))) {
      throw new Error(`prepared query does not bind every value as a parameter: ${compiled.sql}`);
    }
    return { compiled, slots };
  };
  // The plan of the last call per instance, with its names: calls of a hot path repeat the same
  // names in the same order, and comparing them (~0.3 µs for a click's 24 columns) costs a tenth
  // of joining them into a key and hashing it (~3 µs, measured).
  const last = new WeakMap<object, { names: string[]; plan: Plan }>();
  return (db: Reader, names: string[]): Plan => {
    const adapter = adapterOf(db);
    const previous = last.get(adapter);
    if (previous && sameNames(previous.names, names)) return previous.plan;
    let byShape = plans.get(adapter);
    if (!byShape) {
      byShape = new Map();
      plans.set(adapter, byShape);
    }
    const shape = names.join(',');
    let plan = byShape.get(shape);
    if (!plan) {
      plan = compile(db, names);
      byShape.set(shape, plan);
    }
    last.set(adapter, { names, plan });
    return plan;
  };
}

function sameNames(a: string[], b: string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function execute<R>(db: Reader, plan: Plan, parameters: unknown[]): Promise<QueryResult<R>> {
  return (db as Builder).executeQuery<R>({ ...(plan.compiled as CompiledQuery<R>), parameters });
}

function preparedOn<V extends object, R>(build: (db: Builder, values: V) => Compilable<R>) {
  const planFor = planner(build);
  return async (db: Reader, values: V) => {
    const plan = planFor(db, Object.keys(values));
    const named = values as Record<string, unknown>;
    return execute<R>(
      db,
      plan,
      plan.slots.map((s) => ('name' in s ? (named[s.name] ?? null) : s.constant)),
    );
  };
}

/** A prepared write: runs only inside `Database.write`. */
export function prepared<V extends object, R>(
  build: (db: Builder, values: V) => Compilable<R>,
): (db: Writer, values: V) => Promise<QueryResult<R>> {
  return preparedOn(build);
}

/** A prepared read (a SELECT). */
export function preparedQuery<V extends object, R>(
  build: (db: Reader, values: V) => Compilable<R>,
): (db: Reader, values: V) => Promise<QueryResult<R>> {
  return preparedOn(build);
}

/**
 * `prepared` for a statement with a fixed set of value `names`, whose values are read from an
 * argument: `read(name)` returns how to read the value called `name` from it. Nothing is built
 * per call but the parameter list (the rollup upserts bind ~10,000 values a second).
 */
export function preparedReading<A, R>(
  build: (db: Builder, values: Record<string, unknown>) => Compilable<R>,
  names: string[],
  read: (name: string) => (arg: A) => unknown,
): (db: Writer, arg: A) => Promise<QueryResult<R>> {
  const planFor = planner(build);
  const readers = new WeakMap<Plan, Array<(arg: A) => unknown>>();
  return async (db, arg) => {
    const plan = planFor(db, names);
    let slots = readers.get(plan);
    if (!slots) {
      slots = plan.slots.map((s) => {
        if ('constant' in s) return () => s.constant;
        const value = read(s.name);
        return (a: A) => value(a) ?? null;
      });
      readers.set(plan, slots);
    }
    return execute<R>(
      db,
      plan,
      slots.map((slot) => slot(arg)),
    );
  };
}
