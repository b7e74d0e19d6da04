import type { DestinationKind, ForwardingFilter, ForwardingStatus } from '../db/repositories/reconciliation.js';
import { invalid } from '../http/errors.js';

/** The conversions list's forwarding filters as the query gives them (api.md §10; docs/api.md "Reconciliation"). */
export interface ForwardingQuery {
  destination?: DestinationKind;
  forwardingStatus?: ForwardingStatus;
  forwardingReason?: string;
  acknowledged?: boolean;
}

/**
 * The forwarding filter of a list query, or undefined without one. Each filter narrows the one
 * before it, so each needs it: `forwardingStatus` a `destination`, `forwardingReason` a
 * `forwardingStatus` of failed or skipped, `acknowledged` a `forwardingStatus` of sent.
 */
export function forwardingFilterOf(query: ForwardingQuery): ForwardingFilter | undefined {
  const { destination, forwardingStatus: status, forwardingReason: reason, acknowledged } = query;
  if (status !== undefined && destination === undefined) {
    throw invalid('destination', 'required_field_missing', 'forwardingStatus needs destination (meta, google_ads or tiktok)');
  }
  if (reason !== undefined && status !== 'failed' && status !== 'skipped') {
    throw invalid('forwardingReason', 'out_of_range', 'forwardingReason needs forwardingStatus failed or skipped');
  }
  if (acknowledged !== undefined && status !== 'sent') {
    throw invalid('acknowledged', 'out_of_range', 'acknowledged needs forwardingStatus sent');
  }
  if (destination === undefined) return undefined;
  return {
    destination,
    ...(status !== undefined && { status }),
    ...(reason !== undefined && { reason }),
    ...(acknowledged !== undefined && { acknowledged }),
  };
}
