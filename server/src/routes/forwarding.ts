import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { resendConversion } from '../destinations/meta/forwarding.js';
import { tenantOf } from '../http/auth.js';
import { ok } from '../http/envelope.js';
import { describeResponses, EXAMPLE } from '../http/openapi.js';
import { bearer, ForwardingState, type RouteDeps } from './common.js';

const Delivery = Type.Object({
  conversionId: Type.String({ description: 'The conversion’s id', examples: [EXAMPLE.conversionId] }),
  ...ForwardingState,
});

/** Operator actions on forwarding to Meta's Conversions API. */
export const forwardingRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { database, forwarding }) => {
  // POST /v1/conversions/:id/resend — put a failed (or skipped) conversion back in the Meta outbox
  app.post(
    '/conversions/:id/resend',
    {
      config: { scope: 'conversions:write' },
      schema: {
        tags: ['Conversions'],
        operationId: 'resendConversion',
        summary: 'Send a conversion to Meta again',
        description:
          "Requeues a conversion whose forwarding failed, or was skipped because the store was not configured then, under the store's current settings, and waits up to CAPI_SYNC_WAIT_MS for the first attempt. A pending conversion is left as it is; one Meta acknowledged is never sent again (invalid_request, reason already_sent). A test-mode conversion is sent only with the store's capiTestEventCode, as test_event_code.",
        security: bearer,
        params: Type.Object({
          id: Type.String({ minLength: 1, maxLength: 64, description: 'The conversion’s id', examples: [EXAMPLE.conversionId] }),
        }),
        response: describeResponses(Delivery, {
          description: 'The conversion was requeued (or is still pending): its forwarding state now',
          examples: {
            sent: {
              summary: 'Meta acknowledged the resent event',
              data: {
                conversionId: EXAMPLE.conversionId,
                capiSent: true,
                capi: { status: 'sent', attempts: 3, sentAt: '2026-11-22T11:02:14.530Z' },
              },
            },
            stillPending: {
              summary: 'Requeued; Meta has not answered within the wait',
              data: { conversionId: EXAMPLE.conversionId, capiSent: false, capi: { status: 'pending', attempts: 2 } },
            },
          },
          write: true,
          invalid: {
            alreadySent: {
              summary: 'Meta already acknowledged it',
              code: 'invalid_request',
              message: `Meta already acknowledged conversion ${EXAMPLE.conversionId}; it is never sent twice`,
              details: { reason: 'already_sent' },
            },
            notConfigured: {
              summary: 'The store still has no pixelId and capiAccessToken',
              code: 'invalid_request',
              message: `Store ${EXAMPLE.storeId} does not forward to Meta: set its pixelId and capiAccessToken`,
              details: { reason: 'not_configured' },
            },
          },
          notFound: {
            conversionNotFound: {
              summary: 'No such conversion in this mode and account',
              code: 'not_found',
              message: `No conversion ${EXAMPLE.conversionId}`,
            },
          },
        }),
      },
    },
    async (request) => ok(request, await resendConversion(database, forwarding, tenantOf(request), request.params.id)),
  );
};
