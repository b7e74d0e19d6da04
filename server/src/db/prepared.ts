import type { Compilable, CompiledQuery, QueryResult } from 'kysely';
import type { Executor } from './database.js';

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

/** The dialect's adapter: one compiled form per dialect (Kysely instances of one database share it). */
function adapterOf(db: Executor): object {
  return (db as unknown as { getExecutor(): { adapter: object } }).getExecutor().adapter;
}

/** Compiles `build` with a marker per value name, once per dialect and set of names. */
function planner<V extends object, R>(build: (db: Executor, values: V) => Compilable<R>) {
  const plans = new WeakMap<object, Map<string, Plan>>();
  const compile = (db: Executor, names: string[]): Plan => {
    const markers = Object.fromEntries(names.map((name) => [name, `${MARK}${name}`])) as V;
    const compiled = build(db, markers).compile() as CompiledQuery;
    const slots = compiled.parameters.map((p) =>
      typeof p === 'string' && p.startsWith(MARK) ? { name: p.slice(MARK.length) } : { constant: p },
    );
    const bound = new Set(slots.flatMap((s) => ('name' in s ? [s.name] : [])));
    if (compiled.sql.includes(MARK) || names.some((name) => !bound.has(name))) {
      throw new Error(`prepared query does not bind every value as a parameter: ${compiled.sql}`);
    }
    return { compiled, slots };
  };
  return (db: Executor, names: string[]): Plan => {
    const adapter = adapterOf(db);
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
    return plan;
  };
}

export function prepared<V extends object, R>(
  build: (db: Executor, values: V) => Compilable<R>,
): (db: Executor, values: V) => Promise<QueryResult<R>> {
  const planFor = planner(build);
  return async (db, values) => {
    const plan = planFor(db, Object.keys(values));
    const named = values as Record<string, unknown>;
    const parameters = plan.slots.map((s) => ('name' in s ? (named[s.name] ?? null) : s.constant));
    return db.executeQuery<R>({ ...(plan.compiled as CompiledQuery<R>), parameters });
  };
}

/**
 * `prepared` for a statement with a fixed set of value `names`, whose values are read from an
 * argument: `read(name)` returns how to read the value called `name` from it. Nothing is built
 * per call but the parameter list (the rollup upserts bind ~10,000 values a second).
 */
export function preparedReading<A, R>(
  build: (db: Executor, values: Record<string, unknown>) => Compilable<R>,
  names: string[],
  read: (name: string) => (arg: A) => unknown,
): (db: Executor, arg: A) => Promise<QueryResult<R>> {
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
    const parameters = slots.map((slot) => slot(arg));
    return db.executeQuery<R>({ ...(plan.compiled as CompiledQuery<R>), parameters });
  };
}
