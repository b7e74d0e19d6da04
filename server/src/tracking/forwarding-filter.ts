import type { DestinationKind, ForwardingFilter, ForwardingStatus } from '../db/repositories/reconciliation.js';

/** The conversions list's forwarding filters as the query gives them (api.md §10; docs/api.md "Reconciliation"). */
export interface ForwardingQuery {
  destination?: DestinationKind;
  forwardingStatus?: ForwardingStatus;
  forwardingReason?: string;
  acknowledged?: boolean;
}

/**
 * The forwarding filter of a list query, or undefined without one. The filters combine freely:
 * without `destination` they hold when they hold at some destination.
 */
export function forwardingFilterOf(query: ForwardingQuery): ForwardingFilter | undefined {
  const { destination, forwardingStatus: status, forwardingReason: reason, acknowledged } = query;
  if (destination === undefined && status === undefined && reason === undefined && acknowledged === undefined) return undefined;
  return {
    ...(destination !== undefined && { destination }),
    ...(status !== undefined && { status }),
    ...(reason !== undefined && { reason }),
    ...(acknowledged !== undefined && { acknowledged }),
  };
}
