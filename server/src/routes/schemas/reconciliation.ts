import { Type } from 'typebox';
import { EXAMPLE } from '../../http/openapi.js';

const Count = (description: string) => Type.Integer({ minimum: 0, description });
const Link = (description: string) =>
  Type.String({ description: `GET path of the conversions list that lists exactly ${description}` });
const ByReason = (what: string) =>
  Type.Record(Type.String(), Type.Integer({ minimum: 0 }), { description: `${what} per reason (the totals add up)` });

const ReasonCounts = (what: string, reasons: string) =>
  Type.Object(
    { total: Count(`Conversions ${what}`), byReason: ByReason(`Conversions ${what}`) },
    { description: `${what[0]?.toUpperCase()}${what.slice(1)}; reasons: ${reasons}` },
  );

const DestinationDay = Type.Object(
  {
    eligible: Count(
      'Conversions of the day the destination receives (those with a `forwarding.<destination>` entry) = sent + pending + failed.total + skipped.total',
    ),
    sent: Count('Delivered: the platform accepted them'),
    acknowledged: Count('Of sent, those the platform acknowledged with a trace id (listed in traceIds)'),
    pending: Count('Not yet delivered: queued or being retried'),
    failed: ReasonCounts(
      'given up',
      '`expired` (not delivered within the platform’s age limit), `delivery_error` (the last error ended delivery: the platform refused it, or retries could not finish in time)',
    ),
    skipped: ReasonCounts(
      'not sent',
      'the skip reason recorded with the conversion (`expired`, `test_event_code_missing`, …; `unknown` when none was kept)',
    ),
    traceIds: Type.Array(Type.String(), {
      description:
        'Distinct trace ids of the day’s acknowledged deliveries: Meta `fbtrace_id`, Google Ads job id, TikTok `request_id`; sorted',
    }),
    links: Type.Object(
      {
        eligible: Link('these conversions'),
        sent: Link('the sent ones'),
        acknowledged: Link('the acknowledged ones'),
        pending: Link('the pending ones'),
        failed: Link('the failed ones'),
        skipped: Link('the skipped ones'),
        failedByReason: Type.Record(Type.String(), Type.String(), { description: 'Per reason in failed.byReason, its list' }),
        skippedByReason: Type.Record(Type.String(), Type.String(), { description: 'Per reason in skipped.byReason, its list' }),
      },
      { description: 'Each count’s conversions-list query' },
    ),
  },
  { description: 'What became of the day’s conversions at one destination' },
);

const Day = Type.Object({
  date: Type.String({
    description: 'The day (YYYY-MM-DD) of the conversions’ event time in the store’s time zone',
    examples: ['2026-11-21'],
  }),
  received: Count('Conversions (any eventType) with event time that day'),
  attributed: Count('Of received, those attributed'),
  refunded: Count('Of received, those with at least one refund (by now)'),
  destinations: Type.Object(
    {
      meta: Type.Optional(DestinationDay),
      google_ads: Type.Optional(DestinationDay),
      tiktok: Type.Optional(DestinationDay),
      microsoft: Type.Optional(DestinationDay),
      pinterest: Type.Optional(DestinationDay),
      snapchat: Type.Optional(DestinationDay),
      reddit: Type.Optional(DestinationDay),
      linkedin: Type.Optional(DestinationDay),
    },
    { description: 'Every destination (or the one asked for with `destination`), configured or not' },
  ),
  links: Type.Object(
    { received: Link('the received ones'), attributed: Link('the attributed ones'), refunded: Link('the refunded ones') },
    { description: 'Each count’s conversions-list query' },
  ),
});

export const Reconciliation = Type.Object({
  storeId: Type.String({ examples: [EXAMPLE.storeId] }),
  startDate: Type.String({ examples: ['2026-11-21'] }),
  endDate: Type.String({ examples: ['2026-11-21'] }),
  timezone: Type.String({ description: 'The store’s time zone the days are in', examples: ['Europe/Berlin'] }),
  days: Type.Array(Day, { description: 'Every day of the range, oldest first (days without conversions too)' }),
});

const link = (filters: string) => `/v1/conversions?storeId=${EXAMPLE.storeId}&startDate=2026-11-21&endDate=2026-11-21${filters}`;

export const EXAMPLE_RECONCILIATION = {
  storeId: EXAMPLE.storeId,
  startDate: '2026-11-21',
  endDate: '2026-11-21',
  timezone: 'Europe/Berlin',
  days: [
    {
      date: '2026-11-21',
      received: 12,
      attributed: 9,
      refunded: 1,
      destinations: {
        meta: {
          eligible: 12,
          sent: 10,
          acknowledged: 10,
          pending: 0,
          failed: { total: 1, byReason: { delivery_error: 1 } },
          skipped: { total: 1, byReason: { expired: 1 } },
          traceIds: ['AbCdEfGh123', 'XyZ987654'],
          links: {
            eligible: link('&destination=meta'),
            sent: link('&destination=meta&forwardingStatus=sent'),
            acknowledged: link('&destination=meta&forwardingStatus=sent&acknowledged=true'),
            pending: link('&destination=meta&forwardingStatus=pending'),
            failed: link('&destination=meta&forwardingStatus=failed'),
            skipped: link('&destination=meta&forwardingStatus=skipped'),
            failedByReason: { delivery_error: link('&destination=meta&forwardingStatus=failed&forwardingReason=delivery_error') },
            skippedByReason: { expired: link('&destination=meta&forwardingStatus=skipped&forwardingReason=expired') },
          },
        },
      },
      links: { received: link(''), attributed: link('&attributed=true'), refunded: link('&refunded=true') },
    },
  ],
};
