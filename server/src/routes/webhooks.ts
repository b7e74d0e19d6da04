import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { tenantOf } from '../http/auth.js';
import { ok } from '../http/envelope.js';
import { describeResponses, ID_TOO_LONG, PAGE_ERRORS } from '../http/openapi.js';
import { listContext, PageQuery } from '../http/pagination.js';
import type { WebhookDispatcher } from '../webhooks/dispatcher.js';
import {
  createWebhook,
  deleteWebhookOf,
  listDeliveriesOf,
  listWebhooksOf,
  presentDelivery,
  presentWebhook,
  resendDelivery,
  updateWebhookOf,
  type WebhookPatch,
  type WebhookPolicy,
} from '../webhooks/endpoints.js';
import type { WebhookEventType } from '../webhooks/events.js';
import { bearer, Nullable, Query, type RouteDeps } from './common.js';
import {
  CreatedWebhook,
  CreateWebhookBody,
  DeletedWebhook,
  Delivery,
  DeliveryParams,
  EXAMPLE_DELIVERY,
  EXAMPLE_WEBHOOK,
  UpdateWebhookBody,
  URL_REFUSED,
  WEBHOOK_NOT_FOUND,
  Webhook,
  WebhookParams,
} from './schemas/webhooks.js';

export interface WebhookRouteDeps extends RouteDeps {
  webhooks: WebhookDispatcher;
  webhookPolicy: WebhookPolicy;
}

const READ = { anyScope: ['webhooks:read' as const, 'webhooks:write' as const] };
const READ_FORBIDDEN = {
  noWebhookScope: {
    summary: 'A key with neither webhooks:read nor webhooks:write',
    code: 'forbidden' as const,
    message: 'This API key needs at least one of the scopes webhooks:read, webhooks:write',
    details: { requiredScope: 'webhooks:read', requiredScopes: ['webhooks:read', 'webhooks:write'] },
  },
};
const Page = <T extends Parameters<typeof Type.Array>[0]>(name: string, item: T, description: string) =>
  Type.Object({
    [name]: Type.Array(item, { description }),
    hasMore: Type.Boolean({ description: 'true when another page follows' }),
    nextCursor: Nullable(Type.String({ description: 'Pass as `cursor` for the next page; null on the last page' })),
  });

const SIGNING =
  'Each delivery is a POST of `{type, timestamp, data}` signed per Standard Webhooks: headers `webhook-id` (the same on every attempt of a message), `webhook-timestamp` and `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">` keyed with the base64-decoded part of the secret after `whsec_`. The client libraries’ `verify` helpers check it.';

export const webhookRoutes: FastifyPluginAsyncTypebox<WebhookRouteDeps> = async (
  app,
  { database, cursors, secrets, webhooks, webhookPolicy },
) => {
  // POST /v1/webhooks — add an endpoint that receives events
  app.post(
    '/webhooks',
    {
      // The secret is shown in this answer only: a replay (Idempotency-Key) has it null (http/idempotency.ts).
      config: { scope: 'webhooks:write', shownOnce: ['secret'] },
      schema: {
        tags: ['Webhooks'],
        operationId: 'createWebhook',
        summary: 'Add a webhook endpoint',
        description: `Adds an endpoint of the key’s account and mode (a test key’s endpoint receives test events; \`store.updated\` goes to both). The answer shows the signing secret once: it is sealed at rest and never kept for replays, so a replay of this request (the same \`Idempotency-Key\` and body within 24 h) answers the same endpoint with \`secret: null\` and \`secretRedacted: true\`. ${SIGNING} A 2xx within 15 s is a success; anything else is retried after 5 s, 30 s, 2 min, 10 min, 1 h, then every 6 h until 3 days have passed, then the endpoint is disabled (PATCH \`enabled: true\` re-enables it).`,
        security: bearer,
        body: CreateWebhookBody,
        response: describeResponses(CreatedWebhook, {
          status: 201,
          description: 'The endpoint was created; `secret` is shown only now (null in a replay, with `secretRedacted: true`)',
          examples: {
            created: {
              summary: 'Attributed conversions and refunds',
              data: { ...EXAMPLE_WEBHOOK, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', secretRedacted: false },
            },
            replayed: {
              summary: 'A replay (Idempotent-Replayed: true): the secret is not shown again',
              data: { ...EXAMPLE_WEBHOOK, secret: null, secretRedacted: true },
            },
          },
          write: true,
          json: true,
          invalid: {
            ...URL_REFUSED,
            unknownEvent: {
              summary: 'An event that does not exist',
              code: 'invalid_request',
              message:
                'events[0] must be one of: conversion.attributed, conversion.forwarding_failed, refund.recorded, store.updated, destination.failing, destination.recovered, spend_source.failing, spend_source.recovered',
              details: { field: 'events[0]', reason: 'unknown_value' },
            },
          },
        }),
      },
    },
    async (request, reply) => {
      const body = request.body as { url: string; events: WebhookEventType[]; description?: string };
      const created = await createWebhook(database, tenantOf(request), body, secrets, webhookPolicy);
      return reply.code(201).send(ok(request, created));
    },
  );

  // GET /v1/webhooks — the account's endpoints in the key's mode, newest first
  app.get(
    '/webhooks',
    {
      config: READ,
      schema: {
        tags: ['Webhooks'],
        operationId: 'listWebhooks',
        summary: 'List webhook endpoints',
        description:
          'The endpoints of the key’s account and mode, newest first, paginated. Secrets are never shown again.\n\n**Scope:** `webhooks:read` or `webhooks:write` (or `*`).',
        security: bearer,
        querystring: Query({ ...PageQuery }),
        response: describeResponses(Page('webhooks', Webhook, 'This page, newest first'), {
          description: 'A page of endpoints',
          examples: {
            page: { summary: 'One endpoint', data: { webhooks: [EXAMPLE_WEBHOOK], hasMore: false, nextCursor: null } },
          },
          invalid: PAGE_ERRORS,
          forbidden: READ_FORBIDDEN,
        }),
      },
    },
    async (request) => {
      const auth = tenantOf(request);
      const { limit = 20, cursor } = request.query;
      const context = listContext('webhooks', auth, {});
      const rows = await listWebhooksOf(database, auth, { limit, after: cursors.decode(cursor, context) });
      const page = cursors.page(rows, limit, context, (r) => ({ time: r.created_at, id: r.id }), presentWebhook);
      return ok(request, { webhooks: page.items, hasMore: page.hasMore, nextCursor: page.nextCursor });
    },
  );

  // PATCH /v1/webhooks/:id — change an endpoint, re-enable or disable it
  app.patch(
    '/webhooks/:id',
    {
      config: { scope: 'webhooks:write', keepNulls: true },
      schema: {
        tags: ['Webhooks'],
        operationId: 'updateWebhook',
        summary: 'Update, re-enable or disable a webhook endpoint',
        description:
          'Changes the endpoint’s url, events or description (the fields left out keep their values; the url is checked as on creation). `enabled: true` re-enables an endpoint that was disabled (after 3 days of failed deliveries, or by `enabled: false`): it keeps its signing secret, `disabledReason` and `disabledAt` become null, and the events from now on are delivered to it; the messages given up when it was disabled stay failed (resend any with POST /v1/webhooks/{id}/deliveries/{deliveryId}/resend). `enabled: false` disables it: nothing more is sent and its pending messages are given up. The secret is never shown again.',
        security: bearer,
        params: WebhookParams,
        body: UpdateWebhookBody,
        response: describeResponses(Webhook, {
          description: 'The endpoint as it is now',
          examples: { reenabled: { summary: 'After PATCH {"enabled": true}', data: EXAMPLE_WEBHOOK } },
          write: true,
          json: true,
          invalid: { ...ID_TOO_LONG, ...URL_REFUSED },
          notFound: WEBHOOK_NOT_FOUND,
        }),
      },
    },
    async (request) =>
      ok(
        request,
        await updateWebhookOf(database, tenantOf(request), request.params.id, request.body as WebhookPatch, webhookPolicy),
      ),
  );

  // DELETE /v1/webhooks/:id — remove an endpoint
  app.delete(
    '/webhooks/:id',
    {
      config: { scope: 'webhooks:write' },
      schema: {
        tags: ['Webhooks'],
        operationId: 'deleteWebhook',
        summary: 'Remove a webhook endpoint',
        description:
          'Removes the endpoint: nothing more is sent to it; its pending messages and its attempts are deleted with it.',
        security: bearer,
        params: WebhookParams,
        response: describeResponses(DeletedWebhook, {
          description: 'The endpoint as it was, now deleted',
          examples: { deleted: { summary: 'Removed', data: { ...EXAMPLE_WEBHOOK, deleted: true } } },
          write: true,
          invalid: ID_TOO_LONG,
          notFound: WEBHOOK_NOT_FOUND,
        }),
      },
    },
    async (request) => ok(request, await deleteWebhookOf(database, tenantOf(request), request.params.id)),
  );

  // GET /v1/webhooks/:id/deliveries — every attempt, newest first
  app.get(
    '/webhooks/:id/deliveries',
    {
      config: READ,
      schema: {
        tags: ['Webhooks'],
        operationId: 'listWebhookDeliveries',
        summary: 'List an endpoint’s delivery attempts',
        description:
          'Every attempt to deliver a message to the endpoint (the retries and the resends), newest first, paginated: its status, the endpoint’s response code and the time.\n\n**Scope:** `webhooks:read` or `webhooks:write` (or `*`).',
        security: bearer,
        params: WebhookParams,
        querystring: Query({ ...PageQuery }),
        response: describeResponses(Page('deliveries', Delivery, 'This page, newest first'), {
          description: 'A page of attempts',
          examples: {
            page: { summary: 'One attempt', data: { deliveries: [EXAMPLE_DELIVERY], hasMore: false, nextCursor: null } },
          },
          invalid: { ...ID_TOO_LONG, ...PAGE_ERRORS },
          forbidden: READ_FORBIDDEN,
          notFound: WEBHOOK_NOT_FOUND,
        }),
      },
    },
    async (request) => {
      const auth = tenantOf(request);
      const { limit = 20, cursor } = request.query;
      const context = listContext('webhook-deliveries', auth, { webhookId: request.params.id });
      const rows = await listDeliveriesOf(database, auth, request.params.id, { limit, after: cursors.decode(cursor, context) });
      const page = cursors.page(rows, limit, context, (r) => ({ time: r.at, id: r.id }), presentDelivery);
      return ok(request, { deliveries: page.items, hasMore: page.hasMore, nextCursor: page.nextCursor });
    },
  );

  // POST /v1/webhooks/:id/deliveries/:deliveryId/resend — send that message again now
  app.post(
    '/webhooks/:id/deliveries/:deliveryId/resend',
    {
      config: { scope: 'webhooks:write' },
      schema: {
        tags: ['Webhooks'],
        operationId: 'resendWebhookDelivery',
        summary: 'Resend a message',
        description:
          'Sends the message of that attempt again, now, with the same `webhook-id` (receivers deduplicate by it) and a fresh timestamp and signature; answers with the new attempt once it is over (up to 15 s). Works on a disabled endpoint too, which stays disabled; a success ends the message’s retries.',
        security: bearer,
        params: DeliveryParams,
        response: describeResponses(Delivery, {
          status: 201,
          description: 'The new attempt, succeeded or failed',
          examples: { resent: { summary: 'The endpoint answered 200', data: EXAMPLE_DELIVERY } },
          write: true,
          invalid: ID_TOO_LONG,
          notFound: {
            ...WEBHOOK_NOT_FOUND,
            deliveryNotFound: {
              summary: 'No such attempt of this endpoint',
              code: 'not_found',
              message: 'No delivery whd_01m81b1xa3c5e7g9j1m3p5r7tv of webhook endpoint wh_01m81c0d4x3q7h2m9r5t8v1wkz',
            },
          },
        }),
      },
    },
    async (request, reply) => {
      const { id, deliveryId } = request.params;
      const attempt = await resendDelivery(database, tenantOf(request), id, deliveryId, webhooks);
      return reply.code(201).send(ok(request, attempt));
    },
  );
};
