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

export function prepared<V extends object, R>(
  build: (db: Executor, values: V) => Compilable<R>,
): (db: Executor, values: V) => Promise<QueryResult<R>> {
  // Per dialect, per set of value names (an insert's columns are its values' keys).
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

  return async (db, values) => {
    const adapter = adapterOf(db);
    let byShape = plans.get(adapter);
    if (!byShape) {
      byShape = new Map();
      plans.set(adapter, byShape);
    }
    const names = Object.keys(values);
    const shape = names.join(',');
    let plan = byShape.get(shape);
    if (!plan) {
      plan = compile(db, names);
      byShape.set(shape, plan);
    }
    const named = values as Record<string, unknown>;
    const parameters = plan.slots.map((s) => ('name' in s ? (named[s.name] ?? null) : s.constant));
    return db.executeQuery<R>({ ...(plan.compiled as CompiledQuery<R>), parameters });
  };
}
