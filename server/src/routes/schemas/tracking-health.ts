import { Type } from 'typebox';
import { EXAMPLE } from '../../http/openapi.js';

/** Schemas of GET /v1/analytics/tracking-health (api.md §11 "Tracking health"; docs/api.md "Tracking health"). */

export const TrackingHealthItem = Type.Object(
  {
    type: Type.String({
      description:
        'One of spend_without_clicks, untagged_clicks, destination_failing, spend_source_failing, conversions_pending (a string: more may come)',
      examples: ['untagged_clicks'],
    }),
    message: Type.String({ description: 'One sentence saying what is wrong and what to do' }),
  },
  {
    additionalProperties: true,
    description:
      'The figures of each type: spend_without_clicks {channel, campaignId, campaignName, spend, currency}; untagged_clicks {channel, clicks, untagged, share (percent), parameters}; destination_failing {destination, consecutiveFailures, failingSince, lastError}; spend_source_failing {kind, lastSyncedAt, syncedThrough, lastError}; conversions_pending {destination, conversions, oldestPendingAt}',
  },
);

export const TrackingHealth = Type.Object({
  storeId: Type.String({ examples: [EXAMPLE.storeId] }),
  startDate: Type.String({ examples: ['2026-11-01'] }),
  endDate: Type.String({ examples: ['2026-11-22'] }),
  livemode: Type.Boolean(),
  items: Type.Array(TrackingHealthItem, {
    description:
      'Spend without clicks (highest spend first), untagged clicks per channel, failing destinations, failing spend sources, pending conversions; empty when all is well',
  }),
});
