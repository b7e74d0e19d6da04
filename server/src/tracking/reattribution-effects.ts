/**
 * What follows a conversion's attributed click besides its rollups: the destinations' jobs and
 * `forwarding` entries, and its match quality (api.md §8, §10). Re-attribution (reattribution.ts)
 * runs these in its transaction; the decisions are in docs/api.md "Re-attribution".
 */

import type { CustomerData, HashedUserData } from '../customer-data.js';
import type { Writer } from '../db/database.js';
import { conversionJobsOf, enqueueReattributedJob, replanPendingJob, skipPendingJob } from '../db/repositories/reattribution.js';
import type { ClicksTable, ConversionsTable, DestinationJobsTable, StoresTable } from '../db/schema.js';
import { buildMetaEvent } from '../destinations/meta/event.js';
import { adapterOf } from '../destinations/registry.js';
import type { ForwardingEntry } from '../destinations/routing.js';
import { destinationsForRouting } from '../destinations/settings.js';
import type { MatchQuality } from '../quality/match-quality.js';
import { setMatchQuality } from '../quality/record.js';

const SHA256_HEX = /^[a-f0-9]{64}$/i;

/** What re-planning did, per destination (for the caller's report and tests). */
export type JobChange = 'replanned' | 'kept_sent' | 'kept' | 'skipped' | 'enqueued';

/**
 * Re-plans the conversion's destinations with its new attribution (`after`, `click`), in the
 * caller's transaction, with the conversion's row locked:
 * - a job already sent (or failed, or in another state than pending) is left as it is: what a
 *   platform received is never sent again;
 * - Meta's pending job gets the event built again (the click's fbc, fbp, IP and user agent);
 * - another destination's pending job gets the adapter's payload planned again; when the new
 *   click no longer gives that destination anything to send (no gclid for Google), the job is
 *   skipped with the reason, never sent with the old click's id;
 * - a destination that now receives the conversion (the new click has its click id) gets a job.
 * Returns the new `forwarding` JSON (null when no entry) and what happened per destination.
 */
export async function replanDestinations(
  trx: Writer,
  input: { store: StoresTable; after: ConversionsTable; click: ClicksTable | undefined; now: number },
): Promise<{ forwarding: string | null; changes: Record<string, JobChange> }> {
  const { store, after, click, now } = input;
  const jobs = new Map((await conversionJobsOf(trx, after.id)).map((j) => [j.destination, j]));
  const changes: Record<string, JobChange> = {};
  const meta = jobs.get('meta');
  if (meta) {
    if (meta.status !== 'pending') changes.meta = 'kept_sent';
    else {
      const payload = JSON.stringify(buildMetaEvent(after, click));
      const done = await replanPendingJob(trx, meta, { payload, expiresAt: Number(meta.expires_at) }, now);
      changes.meta = done ? 'replanned' : 'kept_sent';
    }
  }
  const forwarding: Record<string, ForwardingEntry> = after.forwarding ? JSON.parse(after.forwarding) : {};
  for (const destination of await destinationsForRouting(trx, store.id, now)) {
    const adapter = adapterOf(destination.kind);
    if (!adapter) continue;
    const kind = adapter.kind;
    const job = jobs.get(kind);
    if (job && job.status !== 'pending' && job.status !== 'skipped') {
      changes[kind] = 'kept_sent';
      continue;
    }
    const plan = adapter.plan({
      store,
      settings: JSON.parse(destination.config),
      conversion: after,
      click,
      customerData: identifiersOf(after, job),
      now,
    });
    if (plan && 'payload' in plan) {
      const payload = JSON.stringify(plan.payload);
      if (job?.status === 'pending') {
        const done = await replanPendingJob(trx, job, { payload, expiresAt: plan.expiresAt }, now);
        changes[kind] = done ? 'replanned' : 'kept_sent';
        continue;
      }
      if (await enqueueReattributedJob(trx, newJob(after, kind, payload, plan.expiresAt, now))) {
        forwarding[kind] = { status: 'pending', attempts: job?.attempts ?? 0 };
        changes[kind] = 'enqueued';
      } else changes[kind] = 'kept';
      continue;
    }
    const reason = plan ? plan.skip : 'reattributed';
    const message = plan
      ? plan.message
      : `Not sent to ${adapter.label}: the conversion was re-attributed to a click that gives ${adapter.label} nothing to match it by`;
    if (job?.status === 'pending') {
      const skipped = await skipPendingJob(trx, job, message, now);
      if (skipped) {
        forwarding[kind] = { status: 'skipped', attempts: skipped.attempts, reason, message };
        changes[kind] = 'skipped';
      } else changes[kind] = 'kept_sent';
      continue;
    }
    // No job (or a skipped one): the entry says what the new attribution gives, or goes.
    if (plan) forwarding[kind] = { status: 'skipped', attempts: job?.attempts ?? 0, reason, message };
    else if (forwarding[kind]?.status === 'skipped') delete forwarding[kind];
    changes[kind] = 'kept';
  }
  return { forwarding: Object.keys(forwarding).length > 0 ? JSON.stringify(forwarding) : null, changes };
}

function newJob(
  conversion: ConversionsTable,
  kind: string,
  payload: string,
  expiresAt: number,
  now: number,
): DestinationJobsTable {
  return {
    conversion_id: conversion.id,
    destination: kind,
    job_key: '',
    kind: 'conversion',
    account_id: conversion.account_id,
    store_id: conversion.store_id,
    livemode: conversion.livemode,
    route: '',
    payload,
    status: 'pending',
    attempts: 0,
    next_attempt_at: now,
    expires_at: expiresAt,
    claimed_by: null,
    last_error: null,
    trace_id: null,
    created_at: now,
    updated_at: now,
    sent_at: null,
  };
}

/**
 * The customer identifiers to plan a destination's payload with again. Raw customer data is never
 * stored, so: the hashes the destination's earlier payload already carried (each platform
 * normalizes differently: Google's email rule, the phone in E.164), else the stored email hash
 * (Meta's normalization: trim, lower-case). A hash passes through every adapter's hashing as is.
 */
function identifiersOf(conversion: ConversionsTable, job: DestinationJobsTable | undefined): CustomerData | undefined {
  const found: CustomerData = {};
  if (job) collectHashes(JSON.parse(job.payload), found);
  if (!found.email && conversion.email_hash) found.email = conversion.email_hash;
  return found.email || found.phone ? found : undefined;
}

const EMAIL_KEYS = new Set(['hashedEmail', 'emailAddress', 'email']);
const PHONE_KEYS = new Set(['hashedPhoneNumber', 'phoneNumber', 'phone']);

function collectHashes(value: unknown, found: CustomerData): void {
  if (Array.isArray(value)) {
    for (const item of value) collectHashes(item, found);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  for (const [key, item] of Object.entries(value)) {
    if (typeof item === 'string' && SHA256_HEX.test(item)) {
      if (EMAIL_KEYS.has(key)) found.email ??= item;
      else if (PHONE_KEYS.has(key)) found.phone ??= item;
    } else collectHashes(item, found);
  }
}

/**
 * The conversion's match quality again, for the destinations that receive it now and with its
 * new click. The customer data's part is what the stored hashes show, with the warnings about
 * the raw values (`email_invalid`, `phone_without_country_code`) carried over from the recorded
 * match quality: only the request had them. Sets `after.match_quality`.
 */
export async function recomputeMatchQuality(
  trx: Writer,
  after: ConversionsTable,
  click: ClicksTable | undefined,
  previous: string | null | undefined,
): Promise<void> {
  const before: Partial<Record<string, MatchQuality>> = previous ? JSON.parse(previous) : {};
  const others = after.forwarding ? Object.keys(JSON.parse(after.forwarding) as Record<string, unknown>) : [];
  // Meta has an entry whenever the store had Meta configured at record time (see conversions.ts).
  const meta = 'meta' in before || after.capi_status !== 'skipped';
  after.match_quality = null;
  await setMatchQuality(trx, after, { meta, others }, customerDataOf(after, before), {}, async () => click);
}

function customerDataOf(row: ConversionsTable, before: Partial<Record<string, MatchQuality>>): CustomerData | undefined {
  const hashes = JSON.parse(row.user_data) as HashedUserData;
  const warned = new Set(
    Object.values(before)
      .flatMap((q) => q?.warnings ?? [])
      .map((w) => w.code),
  );
  const data: CustomerData = {};
  // Stand-ins that score as the raw value did: an invalid address, a number without its country code.
  if (warned.has('email_invalid')) data.email = 'invalid';
  else if (hashes.em) data.email = hashes.em;
  if (warned.has('phone_without_country_code')) data.phone = '0';
  else if (hashes.ph) data.phone = hashes.ph;
  if (hashes.fn) data.firstName = hashes.fn;
  if (hashes.ln) data.lastName = hashes.ln;
  if (hashes.ct) data.city = hashes.ct;
  if (hashes.st) data.state = hashes.st;
  if (hashes.zp) data.zipCode = hashes.zp;
  // With a country, a number without its code would have scored as complete: the warning says there was none.
  if (hashes.country && !warned.has('phone_without_country_code')) data.country = hashes.country;
  return Object.keys(data).length > 0 ? data : undefined;
}
