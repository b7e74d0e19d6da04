import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { resendConversion } from '../capi/forwarding.js';
import { tenantOf } from '../http/auth.js';
import { ok } from '../http/envelope.js';
import { bearer, ForwardingState, type RouteDeps, responses } from './common.js';

const Delivery = Type.Object({ conversionId: Type.String(), ...ForwardingState });

/** Operator actions on forwarding to Meta's Conversions API. */
export const forwardingRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { database, forwarding }) => {
  // POST /v1/conversions/:id/resend — put a failed (or skipped) conversion back in the Meta outbox
  app.post(
    '/conversions/:id/resend',
    {
      config: { scope: 'conversions:write' },
      schema: {
        tags: ['Conversions'],
        summary: 'Send a conversion to Meta again',
        description:
          "Requeues a conversion whose forwarding failed, or was skipped because the store was not configured then, under the store's current settings, and waits up to CAPI_SYNC_WAIT_MS for the first attempt. A pending conversion is left as it is; one Meta acknowledged is never sent again (invalid_request, reason already_sent).",
        security: bearer,
        params: Type.Object({ id: Type.String({ maxLength: 64 }) }),
        response: responses(200, Delivery),
      },
    },
    async (request) => ok(request, await resendConversion(database, forwarding, tenantOf(request), request.params.id)),
  );
};
