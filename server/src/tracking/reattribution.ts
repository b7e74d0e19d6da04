/**
 * Re-attribution of a stored conversion (issue 38 point 5): one domain function that replaces a
 * conversion's attribution with a new result and moves everything that follows the attributed
 * click, in one transaction. Used by POST /v1/conversions/:id/reattribute, `waytrack attribution
 * recompute`, and the Shopify checkout merge (pixel event + order webhook).
 */
import { withReportRollup } from '../analytics/report-rollups.js';
import { withConversionRollup } from '../analytics/rollups.js';
import type { Attribution } from '../attribution/model.js';
import { attributedClickIdsColumn } from '../click-channel.js';
import { firstChannelOf } from '../customers/identity.js';
import { customerViewOf } from '../customers/new-customer.js';
import type { Database } from '../db/database.js';
import { findClick } from '../db/repositories/clicks.js';
import { findConversion, replaceAttribution, touchpointsOf } from '../db/repositories/conversions.js';
import { setFirstChannel } from '../db/repositories/customers.js';
import { type ReattributedColumns, updateReattributedColumns } from '../db/repositories/reattribution.js';
import { lockConversion } from '../db/repositories/rollup-queue.js';
import { findStore } from '../db/repositories/stores.js';
import type { ConversionsTable, TouchpointsTable } from '../db/schema.js';
import { conversionAttributedEvent, webhookEvents } from '../webhooks/events.js';
import { attributionColumns, touchpointRows } from './attribution-columns.js';
import { type JobChange, recomputeMatchQuality, replanDestinations } from './reattribution-effects.js';

/** Which conversion: its account and mode, as every lookup of a conversion takes them. */
export interface ConversionRef {
  accountId: string;
  livemode: number;
  conversionId: string;
}

/** The clues a caller learned about the conversion with the new result (the checkout pixel's ids). */
export type ConversionCluesUpdate = Omit<ReattributedColumns, 'match_quality' | 'forwarding'>;

export interface ReattributionOptions {
  /**
   * 'always' (default): the new result replaces the stored one. 'stronger': only when it is
   * stronger — attributed where the stored one is not, or a higher confidence.
   */
  when?: 'always' | 'stronger';
  /** Written with the result in the same transaction; they never make a weaker result win. */
  clues?: ConversionCluesUpdate;
  now?: number;
}

export interface ReattributionOutcome {
  /** 'changed': the new result was written; otherwise why the stored one stays. */
  outcome: 'changed' | 'unchanged' | 'explicit_kept' | 'not_stronger';
  before: ConversionsTable;
  /** The row as stored after the call (`before` with the changes). */
  after: ConversionsTable;
  /** Per destination, what happened to its job (only when the result changed). */
  jobs: Record<string, JobChange>;
  /** Whether `conversion.attributed` was emitted again. */
  webhook: boolean;
}

/**
 * Applies a new attribution result to a stored conversion. Contract:
 * - `attribution` is a result of attribution/ for this conversion (attributeConversion on its
 *   clues, as they are after `options.clues`); computed by the caller, outside any transaction.
 * - One write transaction, the conversion's row locked first: decided again on the row as it is
 *   then, so concurrent callers (two requests, a CLI beside the server, another instance) apply
 *   each result at most once and never count a conversion's revenue twice.
 * - A stored confidence 100 (an explicit reference) is never replaced; a result equal to the
 *   stored one (winner, confidence, signal, touchpoints) writes nothing — idempotent.
 * - When it changes: the attribution columns and touchpoints; every analytics rollup (metrics,
 *   timeseries, each multi-touch model's breakdown) moves the conversion's credit in the same
 *   transaction (withConversionRollup); match quality is computed again for the new click;
 *   destination jobs are planned again (reattribution-effects.ts: sent ones never resent, pending
 *   ones carry the new click); `conversion.attributed` is emitted again when the result has a
 *   winner and the winner, confidence or signal changed (none when it is no longer attributed).
 * - Returns undefined when the account has no such conversion in that mode.
 */
export async function applyReattribution(
  database: Database,
  ref: ConversionRef,
  attribution: Attribution,
  options: ReattributionOptions = {},
): Promise<ReattributionOutcome | undefined> {
  const now = options.now ?? Date.now();
  const clues = options.clues ?? {};
  return database.write(async (trx) => {
    const found = await findConversion(trx, ref.accountId, ref.livemode, ref.conversionId);
    if (!found) return undefined;
    await lockConversion(trx, found.id);
    const before = (await findConversion(trx, ref.accountId, ref.livemode, ref.conversionId)) ?? found;
    const columns = attributionColumns(attribution);
    const keep = (outcome: ReattributionOutcome['outcome']) => ({ outcome, before, after: before, jobs: {}, webhook: false });
    if (before.confidence === 100) return keep('explicit_kept');
    if (options.when === 'stronger' && (columns.confidence ?? -1) <= (before.confidence ?? -1)) return keep('not_stronger');
    const touchpoints = touchpointRows(before.id, attribution);
    const cluesChanged = Object.entries(clues).some(([key, value]) => before[key as keyof ConversionsTable] !== value);
    if (!cluesChanged && (await sameResult(trx, before, columns, touchpoints))) return keep('unchanged');

    const click = columns.attributed_click_id
      ? await findClick(trx, before.account_id, before.livemode, columns.attributed_click_id)
      : undefined;
    // The new click's ids are stored with the result (api.md §12 attributedTo.clickIds).
    const result = { ...columns, attributed_click_ids: attributedClickIdsColumn(click) };
    const after: ConversionsTable = { ...before, ...clues, ...result };
    let jobs: Record<string, JobChange> = {};
    // The reconciliation's and match quality's counts move with the attribution, destinations and match quality.
    await withReportRollup(trx, [before.id], async () => {
      await withConversionRollup(trx, before.id, () => replaceAttribution(trx, before.id, result, touchpoints));
      const store = await findStore(trx, before.account_id, before.store_id);
      if (store) {
        const planned = await replanDestinations(trx, { store, after, click, now });
        after.forwarding = planned.forwarding;
        jobs = planned.changes;
      }
      await recomputeMatchQuality(trx, after, click, before.match_quality);
      await updateReattributedColumns(trx, after.id, {
        ...clues,
        forwarding: after.forwarding ?? null,
        match_quality: after.match_quality ?? null,
      });
    });
    const moved =
      after.attributed_click_id !== before.attributed_click_id ||
      after.confidence !== before.confidence ||
      after.attribution_signal !== before.attribution_signal;
    // A customer's first conversion credited to another click moves the customer's cohort channel (api.md §11).
    if (moved && after.customer_key) {
      const first = {
        storeId: after.store_id,
        livemode: after.livemode,
        customerKey: after.customer_key,
        conversionId: after.id,
      };
      await setFirstChannel(trx, first, firstChannelOf(after), click?.campaign_id ?? '');
    }
    const webhook = after.attributed === 1 && moved;
    if (webhook) await webhookEvents.emit(trx, conversionAttributedEvent(after, now, await customerViewOf(trx, after)));
    return { outcome: 'changed', before, after, jobs, webhook };
  });
}

/** Whether the stored result is the new one: same winner, confidence, signal and touchpoints. */
async function sameResult(
  trx: Parameters<typeof touchpointsOf>[0],
  row: ConversionsTable,
  columns: ReturnType<typeof attributionColumns>,
  touchpoints: ReturnType<typeof touchpointRows>,
): Promise<boolean> {
  if (!sameColumns(row, columns)) return false;
  return sameTouchpoints(await touchpointsOf(trx, row.id), touchpoints);
}

function sameColumns(row: ConversionsTable, columns: ReturnType<typeof attributionColumns>): boolean {
  return (
    row.attributed === columns.attributed &&
    row.attributed_click_id === columns.attributed_click_id &&
    row.confidence === columns.confidence &&
    row.attribution_signal === columns.attribution_signal
  );
}

function sameTouchpoints(a: TouchpointsTable[], b: TouchpointsTable[]): boolean {
  const key = (t: TouchpointsTable) => `${t.click_id}:${t.score}:${t.signal}`;
  const x = a.map(key).sort();
  const y = b.map(key).sort();
  return x.length === y.length && x.every((k, i) => k === y[i]);
}

/**
 * Whether `attribution` would change the stored conversion (`row` and its `stored` touchpoints):
 * what `applyReattribution` decides under its lock, for a caller that only reports (a dry run).
 */
export function wouldChange(row: ConversionsTable, stored: TouchpointsTable[], attribution: Attribution): boolean {
  if (row.confidence === 100) return false;
  return !sameColumns(row, attributionColumns(attribution)) || !sameTouchpoints(stored, touchpointRows(row.id, attribution));
}
