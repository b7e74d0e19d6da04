import { Type } from 'typebox';

const BOOLEAN = (description: string) =>
  Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')], { description }));

/** The conversions list's reconciliation filters (api.md §10; docs/api.md "Reconciliation"). */
export const ForwardingListQuery = {
  destination: Type.Optional(
    Type.Union([Type.Literal('meta'), Type.Literal('google_ads'), Type.Literal('tiktok')], {
      description: 'Only conversions this destination receives (those with a `forwarding.<destination>` entry)',
    }),
  ),
  forwardingStatus: Type.Optional(
    Type.Union([Type.Literal('pending'), Type.Literal('sent'), Type.Literal('failed'), Type.Literal('skipped')], {
      description: 'With destination: only conversions in this state there',
    }),
  ),
  forwardingReason: Type.Optional(
    Type.String({
      pattern: '^[a-z][a-z0-9_]{0,63}$',
      description:
        'With forwardingStatus failed (`expired`, `delivery_error`) or skipped (the skip reason, e.g. `expired`, `test_event_code_missing`): only that reason',
      examples: ['expired'],
    }),
  ),
  acknowledged: BOOLEAN(
    'With forwardingStatus sent: only deliveries the platform acknowledged with a trace id (true) or without one (false)',
  ),
  refunded: BOOLEAN('Only conversions with at least one refund (true) or with none (false)'),
};
