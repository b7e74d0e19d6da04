import type { CustomerData } from '../customer-data.js';
import type { Reader } from '../db/database.js';
import { type AttributedClick, attributedClickOf } from '../db/repositories/clicks.js';
import type { ConversionsTable, DestinationJobsTable, StoreDestinationsTable, StoresTable } from '../db/schema.js';
import { adapterOf } from './registry.js';
import { destinationsForRouting } from './settings.js';

/** A destination's state on a conversion (`forwarding.<kind>`). */
export interface ForwardingEntry {
  status: 'pending' | 'sent' | 'failed' | 'skipped';
  attempts: number;
  lastError?: string;
  sentAt?: string;
  reason?: string;
  message?: string;
}

/**
 * Which destinations other than Meta a conversion about to be recorded goes to (api.md §8: each
 * only when configured; Google Ads with a gclid, gbraid or wbraid; TikTok with a ttclid or ttp;
 * each within its age limit), the job for each, and its initial `forwarding` entry. A
 * destination that does not receive the conversion has no entry. Reads only: the jobs are
 * written with the conversion (recordConversionOnce).
 */
export async function planDestinations(
  db: Reader,
  store: StoresTable,
  conversion: ConversionsTable,
  customerData: CustomerData | undefined,
  now: number,
  attributedClick: AttributedClick = attributedClickOf(db, conversion),
): Promise<{ jobs: DestinationJobsTable[]; forwarding: Record<string, ForwardingEntry> }> {
  const jobs: DestinationJobsTable[] = [];
  const forwarding: Record<string, ForwardingEntry> = {};
  const destinations = await destinationsForRouting(db, store.id, now);
  if (destinations.length === 0) return { jobs, forwarding };
  const click = await attributedClick();
  for (const destination of destinations) {
    const adapter = adapterOf(destination.kind);
    if (!adapter) continue;
    const plan = adapter.plan({
      store,
      settings: settingsOf(destination),
      conversion,
      click,
      customerData,
      now,
    });
    if (!plan) continue;
    if ('skip' in plan) {
      forwarding[adapter.kind] = { status: 'skipped', attempts: 0, reason: plan.skip, message: plan.message };
      continue;
    }
    forwarding[adapter.kind] = { status: 'pending', attempts: 0 };
    jobs.push({
      conversion_id: conversion.id,
      destination: adapter.kind,
      job_key: '',
      kind: 'conversion',
      account_id: conversion.account_id,
      store_id: store.id,
      livemode: conversion.livemode,
      route: '',
      payload: JSON.stringify(plan.payload),
      status: 'pending',
      attempts: 0,
      next_attempt_at: now,
      expires_at: plan.expiresAt,
      claimed_by: null,
      last_error: null,
      trace_id: null,
      created_at: now,
      updated_at: now,
      sent_at: null,
    });
  }
  return { jobs, forwarding };
}

/**
 * A destination's settings, parsed once per row of the routing cache (destinationsForRouting
 * keeps a store's rows for a few seconds): with eight destinations configured, parsing every
 * one's settings for every conversion was most of the planning's own time. Adapters read
 * settings and never change them.
 */
const parsedSettings = new WeakMap<StoreDestinationsTable, Record<string, unknown>>();
function settingsOf(row: StoreDestinationsTable): Record<string, unknown> {
  let settings = parsedSettings.get(row);
  if (!settings) {
    settings = JSON.parse(row.config) as Record<string, unknown>;
    parsedSettings.set(row, settings);
  }
  return settings;
}

/** `forwarding` of a conversion as the API shows it: Meta's (= `capi`) beside the others'. */
export function presentDestinationsOf(
  row: ConversionsTable,
  meta: { status: string; attempts: number; lastError?: string; sentAt?: string; reason?: string; message?: string },
) {
  const others = row.forwarding ? (JSON.parse(row.forwarding) as Record<string, ForwardingEntry>) : {};
  // Meta receives every conversion of the store (§2); one recorded before Meta was configured is skipped with its reason.
  return { meta, ...others };
}
