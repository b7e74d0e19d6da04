import type { Database } from '../db/database.js';
import type { Forwarder } from '../destinations/meta/forwarding.js';
import type { Tenant } from '../tenancy.js';
import { type ClickInput, type ClickResult, prepareClick, recordClick } from './clicks.js';
import { type ConversionInput, type ConversionResult, recordConversion } from './conversions.js';
import { type RefundInput, trackRefundWithForwarding } from './refunds.js';

/**
 * How one kind of event of `POST /v1/track/batch` is recorded, as its own endpoint records it.
 *
 * - `prepare` kinds (clicks) check and read nothing an earlier event of the batch writes: a run
 *   of them is prepared first, then their writes are handed to the database together, in the
 *   batch's order, so that they share one commit (SQLite's group commit, PostgreSQL's click
 *   batcher) instead of paying one each.
 * - `record` kinds (conversions) read what the events before them wrote (a conversion may name
 *   a click sent earlier in the same batch, or share an email with an earlier conversion), so
 *   each is recorded after everything before it is durable. `settled`, when given, is what the
 *   answer waits for besides (Meta's acknowledgement, for `capiSent`); those waits overlap.
 */
export type EventKind<I, R> =
  | {
      /** The write, and the keys it records once (a later event of the run with one of them waits for it). */
      prepare: (
        database: Database,
        tenant: Tenant,
        input: I,
        now: number,
      ) => Promise<{ write: () => Promise<R>; keys: string[] }>;
    }
  | {
      record: (
        database: Database,
        tenant: Tenant,
        input: I,
        now: number,
        forwarding?: Forwarder,
      ) => Promise<{ value: R; settled?: Promise<R> }>;
    };

export const CLICK_EVENT: EventKind<ClickInput, ClickResult> = {
  async prepare(database, tenant, input, now) {
    const row = await prepareClick(database, tenant, input, now);
    const keys = Object.entries(row.ids).flatMap(([kind, value]) => (value ? [`${kind}:${value}`] : []));
    return { write: () => recordClick(database, row), keys };
  },
};

export const CONVERSION_EVENT: EventKind<ConversionInput, ConversionResult> = {
  async record(database, tenant, input, now, forwarding) {
    const { result, delivered } = await recordConversion(database, tenant, input, now, forwarding);
    return {
      value: result,
      settled: delivered?.then((capiSent) => ({ ...result, capiSent })),
    };
  },
};

/** A refund reads the conversion (and the refunds) the events before it wrote. */
export const REFUND_EVENT: EventKind<RefundInput, Awaited<ReturnType<typeof trackRefundWithForwarding>>> = {
  async record(database, tenant, input, now) {
    return { value: await trackRefundWithForwarding(database, tenant, input, now) };
  },
};

/** One event of a batch that passed its checks (scope, schema), or the error it already has. */
export type BatchItem = { kind: EventKind<unknown, unknown>; input: unknown } | { error: unknown };

export type BatchOutcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * Records a batch's events as if they had been sent one by one, in order, and answers one
 * outcome per item. `fatal(error)` says which errors end the batch (the database being away):
 * it rethrows the first, after every write already handed over has finished.
 */
export async function trackBatch(
  database: Database,
  tenant: Tenant,
  items: BatchItem[],
  options: { forwarding?: Forwarder; fatal: (error: unknown) => boolean; now?: () => number },
): Promise<BatchOutcome[]> {
  const now = options.now ?? Date.now;
  const outcomes: Array<BatchOutcome | Promise<BatchOutcome>> = [];
  const settle = (promise: Promise<unknown>): Promise<BatchOutcome> =>
    promise.then(
      (value) => ({ ok: true, value }),
      (error: unknown) => ({ ok: false, error }),
    );
  const failIfFatal = async () => {
    const settled = await Promise.all(outcomes);
    const fatal = settled.find((o) => o !== undefined && !o.ok && options.fatal(o.error));
    if (fatal && !fatal.ok) throw fatal.error;
    return settled;
  };

  let i = 0;
  // A prepared event held over to start the next run (its key repeats one of the run before).
  let carried: { at: number; write: () => Promise<unknown> } | undefined;
  let carriedKeys: string[] = [];
  while (i < items.length || carried) {
    const item = (carried ? { kind: CLICK_EVENT, input: undefined } : items[i]) as BatchItem;
    if ('error' in item) {
      outcomes[i++] = { ok: false, error: item.error };
      continue;
    }
    const kind = item.kind;
    if ('record' in kind) {
      const at = i++;
      try {
        const { value, settled } = await kind.record(database, tenant, item.input, now(), options.forwarding);
        // Meta's acknowledgement is awaited with the others', after the last event.
        outcomes[at] = settled ? settle(settled.catch(() => value)) : { ok: true, value };
      } catch (error) {
        outcomes[at] = { ok: false, error };
        if (options.fatal(error)) await failIfFatal();
      }
      continue;
    }
    // A run of events prepared independently, then written together in order. An event with a
    // key an earlier event of the run records (the same click id twice) starts the next run, so
    // it is written after the first is durable and answers as its duplicate: writes handed over
    // together may be run side by side (PostgreSQL's pool).
    const run: Array<{ at: number; write: () => Promise<unknown> }> = carried ? [carried] : [];
    const keys = new Set<string>(carriedKeys);
    carried = undefined;
    carriedKeys = [];
    for (; i < items.length; i++) {
      const next = items[i] as BatchItem;
      if ('error' in next) {
        outcomes[i] = { ok: false, error: next.error };
        continue;
      }
      if (!('prepare' in next.kind)) break;
      try {
        const prepared = await next.kind.prepare(database, tenant, next.input, now());
        if (prepared.keys.some((key) => keys.has(key))) {
          carried = { at: i++, write: prepared.write };
          carriedKeys = prepared.keys;
          break;
        }
        for (const key of prepared.keys) keys.add(key);
        run.push({ at: i, write: prepared.write });
      } catch (error) {
        outcomes[i] = { ok: false, error };
        if (options.fatal(error)) await failIfFatal();
      }
    }
    // Handed over in one turn of the event loop: the database queues them in this order.
    const written = run.map(({ at, write }) => {
      const outcome = settle(write());
      outcomes[at] = outcome;
      return outcome;
    });
    if ((await Promise.all(written)).some((o) => !o.ok && options.fatal(o.error))) await failIfFatal();
  }
  return failIfFatal();
}
