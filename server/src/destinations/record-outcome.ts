import { withReportRollup } from '../analytics/report-rollups.js';
import { writeJob } from '../db/database.js';
import { type JobKey, type JobOutcome, type MarkedJob, markJobs } from '../db/repositories/destinations.js';
import { showOnConversions } from '../db/repositories/job-status.js';
import { isDestinationKind } from '../db/repositories/reconciliation.js';
import { webhookEvents } from '../webhooks/events.js';
import { type AttemptHealth, type HealthTurn, recordAttempt } from './health.js';

/** Jobs of one destination moved to one state by a recording. */
export interface JobMark {
  keys: JobKey[];
  status: 'sent' | 'pending' | 'failed';
  outcome: JobOutcome;
}

/** One transaction of a recording, as plain data: what the dispatcher decided, the database does. */
export interface OutcomeRecording {
  destination: string;
  storeId: string;
  /** The destination's account (its health row's key). */
  accountId: string;
  owner: string;
  now: number;
  /** The conversions whose jobs these are (conversion jobs only): their report rollups move with them. */
  conversionIds: string[];
  marks: JobMark[];
  /** The request's outcome as the destination's health counts it (with the first part of a request only). */
  health?: AttemptHealth;
}

/** A job as recorded, as much of it as the dispatcher's metrics read. */
export type RecordedJob = Pick<MarkedJob, 'conversion_id' | 'job_key' | 'status' | 'livemode' | 'kind'>;

/**
 * Records a delivery's outcome in one transaction: the jobs' state, their conversions (Meta's
 * `capi_*`, the others' `forwarding`), the report rollups, `conversion.forwarding_failed`, and
 * the destination's health (api.md §12). A `WriteJob`: on the embedded database it runs on the
 * writer thread, so the recordings of eight destinations' batches never hold the event loop
 * (and the requests behind it), and after the requests' own writes (`background`); on
 * PostgreSQL it runs on the pool as any write does.
 */
export const RECORD_OUTCOME = writeJob(
  'recordDeliveryOutcome',
  async (trx, r: OutcomeRecording): Promise<{ rows: RecordedJob[]; turn: HealthTurn | undefined }> =>
    withReportRollup(
      trx,
      r.conversionIds,
      async () => {
        const rows: MarkedJob[] = [];
        for (const mark of r.marks)
          rows.push(...(await markJobs(trx, r.destination, mark.keys, r.owner, mark.status, mark.outcome)));
        await showOnConversions(trx, rows);
        await webhookEvents.jobsFailed(trx, r.destination, rows); // conversion.forwarding_failed for the rows now failed
        // The destination's health in the same transaction as the attempt's outcome.
        const turn =
          r.health &&
          (await recordAttempt(trx, { storeId: r.storeId, kind: r.destination, accountId: r.accountId }, r.health, r.now));
        const recorded = rows.map(({ conversion_id, job_key, status, livemode, kind }) => ({
          conversion_id,
          job_key,
          status,
          livemode,
          kind,
        }));
        return { rows: recorded, turn };
      },
      // The destination whose jobs alone it changes: only its report facts are read (when the report knows it).
      isDestinationKind(r.destination) ? r.destination : undefined,
    ),
  { background: true },
);
