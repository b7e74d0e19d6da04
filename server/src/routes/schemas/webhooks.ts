import { Type } from 'typebox';
import { type ErrorExample, EXAMPLE, serverRules } from '../../http/openapi.js';
import { WEBHOOK_EVENTS } from '../../webhooks/events.js';
import { Nullable, Timestamp } from '../common.js';

// Schemas and examples of the webhooks-out routes (routes/webhooks.ts), api.md §9.

export const EXAMPLE_WEBHOOK_ID = 'wh_01m81c0d4x3q7h2m9r5t8v1wkz';
export const EXAMPLE_EVENT_ID = 'msg_01m81b1x9k2p4r6t8v0w2y4a6c';
export const EXAMPLE_DELIVERY_ID = 'whd_01m81b1xa3c5e7g9j1m3p5r7tv';

const EventName = Type.Enum([...WEBHOOK_EVENTS], { description: 'An event type' });

const EndpointUrl = Type.String({
  minLength: 1,
  maxLength: 2048,
  format: 'uri',
  // https, no user name or password, no #fragment; the address is checked by the server (x-rules).
  pattern: '^[Hh][Tt][Tt][Pp][Ss]://[^\\s/?#@]+([/?][^\\s#]*)?$',
  'x-error-reason': 'invalid_url',
  'x-error-message': 'must be an absolute https URL',
  ...serverRules('public-address'),
  description:
    'Where events are POSTed: an https URL without user name, password or #fragment whose host is, and resolves to, only public unicast addresses — not private, loopback, link-local, unique-local, site-local, carrier-grade NAT, multicast, documentation or other special-purpose ranges, nor IPv6 forms embedding such an IPv4 address (IPv4-mapped, IPv4-compatible, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) (x-rules `public-address`, unless the server sets WEBHOOKS_ALLOW_PRIVATE)',
  examples: ['https://shop.acme-outdoor.com/hooks/waytrack'],
});

const eventList = (description: string) =>
  Type.Array(EventName, {
    minItems: 1,
    maxItems: WEBHOOK_EVENTS.length,
    description,
    examples: [['conversion.attributed', 'refund.recorded']],
  });

export const CreateWebhookBody = Type.Object(
  {
    url: EndpointUrl,
    events: eventList('The events to receive (at least one)'),
    description: Type.Optional(Type.String({ maxLength: 500, description: 'For people', examples: ['Order system'] })),
  },
  {
    additionalProperties: false,
    'x-examples': {
      conversions: {
        summary: 'Attributed conversions and refunds',
        value: { url: 'https://shop.acme-outdoor.com/hooks/waytrack', events: ['conversion.attributed', 'refund.recorded'] },
      },
    },
  },
);

export const UpdateWebhookBody = Type.Object(
  {
    url: Type.Optional(EndpointUrl),
    events: Type.Optional(eventList('The events to receive from now on (at least one): replaces the list')),
    description: Type.Optional(Nullable(Type.String({ maxLength: 500, description: 'For people; null clears it' }))),
    enabled: Type.Optional(
      Type.Boolean({
        description:
          'true re-enables a disabled endpoint (same secret; disabledReason and disabledAt cleared; events from now on are sent to it); false disables it (its pending messages are given up)',
      }),
    ),
  },
  {
    additionalProperties: false,
    description: 'Any subset; the fields left out keep their values. The signing secret never changes',
    'x-examples': {
      reenable: { summary: 'Re-enable an endpoint disabled after failures', value: { enabled: true } },
      moved: { summary: 'A new address', value: { url: 'https://shop.acme-outdoor.com/hooks/waytrack-v2' } },
    },
  },
);

const webhookProperties = {
  id: Type.String({ examples: [EXAMPLE_WEBHOOK_ID] }),
  url: Type.String({ examples: ['https://shop.acme-outdoor.com/hooks/waytrack'] }),
  events: Type.Array(Type.String(), { description: 'The events it receives' }),
  description: Nullable(Type.String()),
  status: Type.Union([Type.Literal('enabled'), Type.Literal('disabled')], {
    description:
      'disabled: nothing more is sent — after its deliveries failed for 3 days, or by PATCH `enabled: false` (disabledReason says which); PATCH `enabled: true` re-enables it',
  }),
  disabledReason: Nullable(Type.String({ description: 'Why it was disabled; null while enabled' })),
  disabledAt: Nullable(Type.String({ description: 'When it was disabled; null while enabled' })),
  livemode: Type.Boolean({ description: 'true: it receives live events; false: test events (the mode of the key that made it)' }),
  createdAt: Timestamp('When it was created'),
};

export const Webhook = Type.Object(webhookProperties);

export const CreatedWebhook = Type.Object({
  ...webhookProperties,
  secret: Nullable(
    Type.String({
      description:
        'The signing secret (Standard Webhooks `whsec_…`); shown only in this answer: keep it. null in a replay of this answer (`Idempotent-Replayed: true`, `secretRedacted: true`): the secret is never kept for replays',
      examples: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
    }),
  ),
  secretRedacted: Type.Boolean({
    description:
      'false in the answer that created the endpoint; true in a replay of it (the same Idempotency-Key and body within 24 h), whose `secret` is null. A client that lost the first answer deletes the endpoint and makes a new one',
  }),
});

export const DeletedWebhook = Type.Object({ ...webhookProperties, deleted: Type.Literal(true) });

export const Delivery = Type.Object({
  id: Type.String({ description: 'This attempt’s id', examples: [EXAMPLE_DELIVERY_ID] }),
  webhookId: Type.String({ examples: [EXAMPLE_WEBHOOK_ID] }),
  eventId: Type.String({ description: 'The message’s `webhook-id`, the same on every attempt', examples: [EXAMPLE_EVENT_ID] }),
  event: Type.String({ description: 'The event type', examples: ['conversion.attributed'] }),
  attempt: Type.Integer({ description: 'Which attempt of the message this was (1 = the first)' }),
  status: Type.Union([Type.Literal('succeeded'), Type.Literal('failed')], { description: 'succeeded: a 2xx within 15 s' }),
  responseCode: Nullable(Type.Integer({ description: 'The endpoint’s HTTP status; null when none came' })),
  error: Nullable(Type.String({ description: 'Why it failed; null when it succeeded' })),
  durationMs: Type.Integer({ description: 'How long the attempt took' }),
  at: Timestamp('When the attempt ended'),
});

export const EXAMPLE_WEBHOOK = {
  id: EXAMPLE_WEBHOOK_ID,
  url: 'https://shop.acme-outdoor.com/hooks/waytrack',
  events: ['conversion.attributed', 'refund.recorded'],
  description: null,
  status: 'enabled' as const,
  disabledReason: null,
  disabledAt: null,
  livemode: true,
  createdAt: EXAMPLE.recordedAt,
};

export const EXAMPLE_DELIVERY = {
  id: EXAMPLE_DELIVERY_ID,
  webhookId: EXAMPLE_WEBHOOK_ID,
  eventId: EXAMPLE_EVENT_ID,
  event: 'conversion.attributed',
  attempt: 2,
  status: 'succeeded' as const,
  responseCode: 200,
  error: null,
  durationMs: 84,
  at: EXAMPLE.responseTime,
};

export const WEBHOOK_NOT_FOUND: Record<string, ErrorExample> = {
  webhookNotFound: {
    summary: 'No such endpoint in this account and mode',
    code: 'not_found',
    message: `No webhook endpoint ${EXAMPLE_WEBHOOK_ID}`,
  },
};

export const URL_REFUSED: Record<string, ErrorExample> = {
  notHttps: {
    summary: 'An http URL',
    code: 'invalid_request',
    message: 'url must use https',
    details: { field: 'url', reason: 'invalid_url' },
  },
  privateAddress: {
    summary: 'A URL on a private address',
    code: 'invalid_request',
    message:
      'url must not point to a private, loopback or link-local address (10.0.0.5 is 10.0.0.5); WEBHOOKS_ALLOW_PRIVATE=true allows it for local development',
    details: { field: 'url', reason: 'invalid_url' },
  },
};

export const WebhookParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, description: 'The endpoint’s id', examples: [EXAMPLE_WEBHOOK_ID] }),
});

export const DeliveryParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, description: 'The endpoint’s id', examples: [EXAMPLE_WEBHOOK_ID] }),
  deliveryId: Type.String({ minLength: 1, maxLength: 64, description: 'An attempt’s id', examples: [EXAMPLE_DELIVERY_ID] }),
});
