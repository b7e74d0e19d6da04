import type { DestinationJobsTable } from '../db/schema.js';

/** What becomes of claimed refund jobs before a request (see `orderRefundJobs`). */
export interface RefundOrder {
  send: DestinationJobsTable[];
  /** Waiting for an earlier job of their conversion: tried again at `until`, no attempt counted. */
  postpone: Array<{ job: DestinationJobsTable; until: number }>;
  /** Never sent: the conversion itself did not reach the platform. */
  skip: Array<{ job: DestinationJobsTable; message: string }>;
}

const before = (a: DestinationJobsTable, b: DestinationJobsTable) =>
  Number(a.created_at) < Number(b.created_at) || (Number(a.created_at) === Number(b.created_at) && a.job_key < b.job_key);

/**
 * Refund jobs (Google Ads adjustments, refund events) go after their conversion and in the order
 * of the refunds (api.md §9): a platform refuses an adjustment of a conversion it does not have
 * yet, and each adjustment states the value left after its refund, so the last one sent must be
 * the last refund. `siblings` are the destination's jobs of the same conversions (any status,
 * the claimed ones included). A refund job waits while its conversion's job or an earlier refund
 * job is pending; it is skipped when its conversion's job failed or was skipped.
 */
export function orderRefundJobs(
  claimed: DestinationJobsTable[],
  siblings: DestinationJobsTable[],
  label: string,
  now: number,
  retryMs: number,
): RefundOrder {
  const order: RefundOrder = { send: [], postpone: [], skip: [] };
  for (const job of claimed) {
    const own = siblings.filter((s) => s.conversion_id === job.conversion_id);
    const conversion = own.find((s) => s.kind === 'conversion');
    if (conversion && (conversion.status === 'failed' || conversion.status === 'skipped')) {
      order.skip.push({
        job,
        message: `Not sent: the conversion itself was not delivered to ${label}${
          conversion.last_error ? ` (${conversion.last_error})` : ''
        }, so there is nothing to adjust`,
      });
      continue;
    }
    const blocker = own.find(
      (s) => s.status === 'pending' && (s.kind === 'conversion' || (s.job_key !== job.job_key && before(s, job))),
    );
    if (!blocker) {
      order.send.push(job);
      continue;
    }
    // A blocker held by a dispatcher (this one included) is answered soon; one waiting for its retry, at that time.
    const until = blocker.claimed_by ? now + retryMs : Math.max(now + retryMs, Number(blocker.next_attempt_at) + 1);
    order.postpone.push({ job, until });
  }
  return order;
}
