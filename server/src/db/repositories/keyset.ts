import type { ExpressionBuilder } from 'kysely';

/** A position in a newest-first list: the (time, id) of the last item already returned. */
export interface Keyset {
  time: number | string;
  id: string;
}

export interface Page {
  limit: number;
  after?: Keyset;
}

/** `(timeColumn, id) < (after.time, after.id)`: the rows strictly after the cursor in newest-first order. */
export function afterKeyset<DB, TB extends keyof DB>(
  eb: ExpressionBuilder<DB, TB>,
  timeColumn: string,
  idColumn: string,
  after: Keyset,
) {
  // biome-ignore lint/suspicious/noExplicitAny: column names are checked by the callers' table types
  const e = eb as ExpressionBuilder<any, any>;
  // `time <= t` on its own lets the index bound the range (the `or` alone does not: a deep page
  // walked every row before it); the `or` then decides ties by id.
  return e.and([
    e(timeColumn, '<=', after.time),
    e.or([e(timeColumn, '<', after.time), e.and([e(timeColumn, '=', after.time), e(idColumn, '<', after.id)])]),
  ]);
}
