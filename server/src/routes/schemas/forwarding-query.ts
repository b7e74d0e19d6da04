import { Type } from 'typebox';

const BOOLEAN = (description: string) =>
  Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')], { description }));

/** The conversions list's reconciliation filters (api.md §10; docs/api.md "Reconciliation"). */
export const ForwardingListQuery = {
  destination: Type.Optional(
    Type.Union(
      [
        Type.Literal('meta'),
        Type.Literal('google_ads'),
        Type.Literal('tiktok'),
        Type.Literal('microsoft'),
        Type.Literal('reddit'),
        Type.Literal('linkedin'),
        Type.Literal('pinterest'),
        Type.Literal('snapchat'),
      ],
      {
        description:
          'Only conversions this destination receives (those with a `forwarding.<destination>` entry); the other forwarding filters then apply to it (without destination: to any destination)',
      },
    ),
  ),
  forwardingStatus: Type.Optional(
    Type.Union([Type.Literal('pending'), Type.Literal('sent'), Type.Literal('failed'), Type.Literal('skipped')], {
      description: 'Only conversions in this state at the destination (or at any destination)',
    }),
  ),
  forwardingReason: Type.Optional(
    Type.String({
      pattern: '^[a-z][a-z0-9_]{0,63}$',
      description:
        'Only conversions failed (`expired`, `delivery_error`) or skipped (the skip reason, e.g. `expired`, `test_event_code_missing`) for this reason',
      examples: ['expired'],
    }),
  ),
  acknowledged: BOOLEAN(
    'Only conversions delivered and acknowledged with a platform trace id (true), or received but not so acknowledged (false)',
  ),
  refunded: BOOLEAN('Only conversions with at least one refund (true) or with none (false)'),
};
