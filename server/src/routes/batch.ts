import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { type TSchema, Type } from 'typebox';
import { grants, type Scope } from '../accounts/keys.js';
import { tenantOf } from '../http/auth.js';
import { ErrorEnvelope, ok } from '../http/envelope.js';
import { toApiError } from '../http/error-handler.js';
import { ApiError } from '../http/errors.js';
import { describeResponses, EXAMPLE } from '../http/openapi.js';
import { rateLimited, rateLimitHeaders, takeTokens } from '../http/rate-limit.js';
import { bodyCheck, prepareInput, validatorCompiler } from '../http/validation.js';
import { type BatchItem, CLICK_EVENT, CONVERSION_EVENT, type EventKind, REFUND_EVENT, trackBatch } from '../tracking/batch.js';
import { bearer, type RouteDeps } from './common.js';
import { RefundBody, RefundResult } from './refunds.js';
import { ClickBody, ClickResult } from './schemas/clicks.js';
import { ConversionBody, ConversionResult, EXAMPLE_ATTRIBUTED_TO } from './schemas/conversions.js';

export const MAX_EVENTS = 500;

/**
 * The event types of a batch: the scope each needs, its own endpoint's body schema (the same
 * object, so the batch follows every change to it) and how it is recorded (tracking/batch.ts).
 */
type EventType = {
  scope: Scope;
  body: TSchema;
  kind: EventKind<never, unknown>;
  check?: (value: unknown) => ApiError | undefined;
};

const EVENT_TYPES: Record<string, EventType> = {
  click: { scope: 'clicks:write', body: ClickBody, kind: CLICK_EVENT },
  conversion: { scope: 'conversions:write', body: ConversionBody, kind: CONVERSION_EVENT },
  refund: { scope: 'conversions:write', body: RefundBody, kind: REFUND_EVENT },
};

const KNOWN_TYPES = Object.keys(EVENT_TYPES).join(', ');

/** What an event of `type` would be as its own endpoint's body (for the document). */
const eventOf = (type: string, body: TSchema & { properties?: object }, description: string) =>
  Type.Object(
    { type: Type.Literal(type, { description: 'The kind of event' }), ...(body.properties as Record<string, TSchema>) },
    { description },
  );

const BatchBody = Type.Object(
  {
    events: Type.Array(
      Type.Union([
        eventOf('click', ClickBody, 'An ad click: `type: "click"` and the fields of POST /v1/track/click'),
        eventOf('conversion', ConversionBody, 'A conversion: `type: "conversion"` and the fields of POST /v1/track/conversion'),
        eventOf('refund', RefundBody, 'A refund: `type: "refund"` and the fields of POST /v1/track/refund'),
      ]),
      {
        minItems: 1,
        maxItems: MAX_EVENTS,
        description: `1–${MAX_EVENTS} events, recorded in this order.`,
      },
    ),
  },
  {
    description: 'Events to record, at most 1 MiB in all. Each event is checked on its own: one bad event fails alone.',
    'x-examples': {
      clickAndPurchase: {
        summary: 'A click and the purchase it led to',
        value: {
          events: [
            { type: 'click', fbclid: EXAMPLE.fbclid, storeId: EXAMPLE.storeId, landingPage: EXAMPLE.landingPage },
            {
              type: 'conversion',
              storeId: EXAMPLE.storeId,
              eventType: 'Purchase',
              orderId: '1001',
              eventValue: 49.9,
              currency: 'EUR',
              fbclid: EXAMPLE.fbclid,
            },
          ],
        },
      },
    },
  },
);

/** What the request itself is checked against: a list of 1–500 anythings (each event is checked on its own). */
const BatchEnvelope = Type.Object({
  events: Type.Array(Type.Unknown(), { minItems: 1, maxItems: MAX_EVENTS }),
});

const { error: EventError } = ErrorEnvelope.properties;

const BatchResult = Type.Object({
  received: Type.Integer({ description: 'Events in the request' }),
  failed: Type.Integer({ description: 'Results with an error' }),
  results: Type.Array(
    Type.Union([
      Type.Object(
        {
          index: Type.Integer({ description: 'The event’s position in `events`, from 0' }),
          status: Type.Integer({ description: 'The status its own endpoint would answer (200)' }),
          data: Type.Union([ClickResult, ConversionResult, RefundResult], { description: 'What its own endpoint would answer' }),
        },
        { description: 'A recorded event (or a duplicate: `data.duplicate`)' },
      ),
      Type.Object(
        {
          index: Type.Integer({ description: 'The event’s position in `events`, from 0' }),
          status: Type.Integer({ description: 'The status its own endpoint would answer (4xx)' }),
          error: EventError,
        },
        { description: 'An event not recorded: the error its own endpoint would answer (`details.field` within the event)' },
      ),
    ]),
    { description: 'One per event, in the order of `events`' },
  ),
});

function eventError(index: number, error: ApiError) {
  const { code, message, details } = error;
  return { index, status: error.status, error: { code, message, ...(details && { details }) } };
}

/** An event's checks before anything is recorded, in the single endpoints' order: scope, then body. */
function checkEvent(event: unknown, scopes: string[]): BatchItem {
  if (event === null || typeof event !== 'object' || Array.isArray(event)) {
    return { error: new ApiError('invalid_request', 'Each event must be a JSON object', { reason: 'invalid_type' }) };
  }
  const { type, ...fields } = event as Record<string, unknown>;
  if (type === undefined || type === null || type === '') {
    return {
      error: new ApiError('invalid_request', `type is required: one of ${KNOWN_TYPES}`, {
        field: 'type',
        reason: 'required_field_missing',
      }),
    };
  }
  const entry = typeof type === 'string' && Object.hasOwn(EVENT_TYPES, type) ? EVENT_TYPES[type] : undefined;
  if (!entry) {
    return {
      error: new ApiError('invalid_request', `type must be one of: ${KNOWN_TYPES}`, {
        field: 'type',
        reason: typeof type === 'string' ? 'unknown_value' : 'invalid_type',
      }),
    };
  }
  if (!grants(scopes, entry.scope)) {
    return {
      error: new ApiError('forbidden', `This API key lacks the ${entry.scope} scope`, { requiredScope: entry.scope }),
    };
  }
  try {
    prepareInput(fields, { schema: entry.body });
  } catch (error) {
    return { error };
  }
  entry.check ??= bodyCheck(entry.body);
  const invalid = entry.check(fields);
  return invalid ? { error: invalid } : { kind: entry.kind as EventKind<unknown, unknown>, input: fields };
}

/** The request's body before validation: `null` and `""` members count as absent, as for every body. */
function prepareEnvelope(request: FastifyRequest): void {
  const body = request.body as Record<string, unknown> | null;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return;
  for (const key of Object.keys(body)) if (body[key] === null || body[key] === '') delete body[key];
}

const CLICK_DATA = {
  clickId: EXAMPLE.clickId,
  fbclid: EXAMPLE.fbclid,
  tracked: true,
  timestamp: EXAMPLE.recordedAt,
  duplicate: false,
};

export const batchRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { database, forwarding }) => {
  const envelope = validatorCompiler({ schema: BatchEnvelope, httpPart: 'body', method: 'POST', url: '/v1/track/batch' });

  // POST /v1/track/batch — many clicks and conversions in one request
  app.post(
    '/track/batch',
    {
      config: { anyScope: ['clicks:write', 'conversions:write'], preparesOwnBody: true },
      // The document shows each event's fields; the request is checked as a list, each event on its own.
      validatorCompiler: () => envelope,
      preValidation: async (request) => prepareEnvelope(request),
      schema: {
        tags: ['Tracking'],
        operationId: 'trackBatch',
        summary: 'Record many clicks and conversions in one request',
        description: [
          'For server-side integrations, imports and client libraries that queue: up to 500 events (clicks and conversions, mixed) in one request of at most 1 MiB. Each event is recorded exactly as its own endpoint would record it, in the order sent — a conversion may name a click sent earlier in the same batch — with the same idempotency (a click by fbclid, a conversion by eventType and orderId) and the same answer.',
          '',
          '- **One result per event**, in order: `{index, status: 200, data}` as the event’s own endpoint answers, or `{index, status, error}` with its error (`details.field` within the event). One bad event fails alone; the answer is 200 whenever the request itself is well formed.',
          '- **Scopes:** the key needs `clicks:write` or `conversions:write` (else the whole request is 403); an event whose own scope the key lacks is that event’s 403.',
          '- **Rate limits:** each event takes one token of the key’s bucket. Events past the bucket are answered 429 `rate_limit_exceeded` (`details.retryAfterSeconds`): send those again later. When not even the first event has a token, the whole request is 429 with `Retry-After`.',
          '- **Durable:** every event answered 200 is stored before the answer. Recording many events in one request costs far less than one request each (they share commits).',
          '- `Idempotency-Key` replays the whole answer, as for any POST (events answered 429 stay 429 in the replay: send them in a new request).',
          '',
          '**Scope:** `clicks:write` or `conversions:write` (or `*`), and each event its own type’s.',
        ].join('\n'),
        security: bearer,
        body: BatchBody,
        response: describeResponses(BatchResult, {
          description: 'The request was well formed: one result per event, in order',
          examples: {
            mixed: {
              summary: 'A click, a conversion attributed to it, and an invalid event',
              data: {
                received: 3,
                failed: 1,
                results: [
                  { index: 0, status: 200, data: CLICK_DATA },
                  {
                    index: 1,
                    status: 200,
                    data: {
                      conversionId: EXAMPLE.conversionId,
                      eventType: 'Purchase',
                      attributed: true,
                      attributedTo: EXAMPLE_ATTRIBUTED_TO,
                      capiSent: false,
                      timestamp: EXAMPLE.conversionTime,
                      duplicate: false,
                    },
                  },
                  {
                    index: 2,
                    status: 400,
                    error: {
                      code: 'missing_required_field',
                      message: 'landingPage is required',
                      details: { field: 'landingPage', reason: 'required_field_missing' },
                    },
                  },
                ],
              },
            },
          },
          write: true,
          json: true,
          invalid: {
            noEvents: {
              summary: '`events` absent',
              code: 'missing_required_field',
              message: 'events is required',
              details: { field: 'events', reason: 'required_field_missing' },
            },
            tooMany: {
              summary: 'More than 500 events',
              code: 'invalid_request',
              message: 'events must have at most 500 items',
              details: { field: 'events', reason: 'out_of_range' },
            },
          },
          forbidden: {
            noTrackingScope: {
              summary: 'A key with neither clicks:write nor conversions:write',
              code: 'forbidden',
              message: 'This API key needs at least one of the scopes clicks:write, conversions:write',
              details: { requiredScope: 'clicks:write', requiredScopes: ['clicks:write', 'conversions:write'] },
            },
          },
        }),
      },
    },
    async (request, reply) => {
      const auth = tenantOf(request);
      const events = (request.body as { events: unknown[] }).events;
      // The request's own token was the first event's; each further event takes one.
      const bucket = request.keyBucket;
      const more = bucket ? await takeTokens(bucket, events.length - 1) : { taken: events.length - 1 };
      if (more.last) reply.headers(rateLimitHeaders(more.last));
      const limited = more.last && !more.last.allowed ? rateLimited(more.last) : undefined;
      const items = events.map((event, i) =>
        i > more.taken && limited
          ? { error: new ApiError(limited.code, limited.message, limited.details) }
          : checkEvent(event, auth.scopes),
      );
      const outcomes = await trackBatch(database, auth, items, {
        forwarding,
        fatal: (error) => toApiError(error).status >= 500,
      });
      let failed = 0;
      const results = outcomes.map((outcome, index) => {
        if (!outcome.ok) {
          failed++;
          return eventError(index, toApiError(outcome.error));
        }
        const { differences } = outcome.value as { differences?: string[] };
        // Field names only: the values may be customer data.
        if (differences) request.log.warn({ index, differences }, 'duplicate conversion differs from the original');
        return { index, status: 200, data: outcome.value };
      });
      return ok(request, { received: events.length, failed, results });
    },
  );
};
