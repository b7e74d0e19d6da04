import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { tenantOf } from '../http/auth.js';
import { answerPreflight } from '../http/cors.js';
import { ok } from '../http/envelope.js';
import { describeResponses, EXAMPLE, STORE_NOT_FOUND } from '../http/openapi.js';
import { identify } from '../tracking/identify.js';
import { requireKeyStore } from '../tracking/publishable-click.js';
import { bearer, fillKeyStore, ORIGIN_NOT_ALLOWED, type RouteDeps } from './common.js';
import { setFirstPartyCookies } from './first-party.js';
import { IdentifyBody, IdentifyResult } from './schemas/identify.js';

export const identifyRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { database }) => {
  // POST /v1/track/identify — link a browser to a hashed email or phone (also the browser tag's, with a publishable key)
  app.post(
    '/track/identify',
    {
      config: { scope: 'clicks:write', publishable: true },
      schema: {
        tags: ['Tracking'],
        operationId: 'trackIdentify',
        summary: 'Link a browser to a person',
        description: [
          'Links a browser (its `visitorId`, `fbp`, `ttp`) to the person using it, by their email or phone, normalized and SHA-256 hashed on arrival (or sent already hashed, as the browser tag does). A later conversion with the same email or phone, from any device, then has identity evidence for that browser’s ad clicks (api.md §13).',
          '',
          '- **Idempotent:** a link is unique per store, mode, hash and browser; sending it again answers `duplicate: true` and only moves its last-seen time. An `Idempotency-Key` header also replays the stored response.',
          "- **From the browser:** publishable keys (`wt_pk_…`) may call it, from a page on the store’s domain (CORS preflight answered); `storeId` may then be left out. `waytrack('identify', {email, phone})` in the `/tag.js` tag hashes in the browser and sends only hashes.",
          '- Only hashes are stored; they serve attribution only and are never forwarded to an ad platform from here.',
        ].join('\n'),
        security: bearer,
        body: IdentifyBody,
        response: describeResponses(IdentifyResult, {
          description: 'The links were recorded, or (`duplicate: true`) they already were',
          examples: {
            recorded: {
              summary: 'A browser linked to an email',
              data: { storeId: EXAMPLE.storeId, identified: true, links: 1, duplicate: false, timestamp: EXAMPLE.recordedAt },
            },
            duplicate: {
              summary: 'The same link again',
              data: { storeId: EXAMPLE.storeId, identified: true, links: 1, duplicate: true, timestamp: EXAMPLE.recordedAt },
            },
          },
          write: true,
          json: true,
          invalid: {
            noBrowser: {
              summary: 'No browser id',
              code: 'missing_required_field',
              message: 'At least one browser id is required: visitorId, fbp, ttp',
              details: { field: 'visitorId', reason: 'required_field_missing', anyOf: ['visitorId', 'fbp', 'ttp'] },
            },
            noIdentity: {
              summary: 'Neither email nor phone',
              code: 'missing_required_field',
              message: 'At least one of email and phone is required: email, phone',
              details: { field: 'email', reason: 'required_field_missing', anyOf: ['email', 'phone'] },
            },
            emptyPhone: {
              summary: 'A phone with no digit',
              code: 'invalid_request',
              message: 'phone has nothing left once normalized; send a real phone or its SHA-256 hex',
              details: { field: 'phone', reason: 'invalid_format' },
            },
          },
          forbidden: {
            originNotAllowed: ORIGIN_NOT_ALLOWED,
          },
          notFound: STORE_NOT_FOUND,
        }),
      },
      preValidation: fillKeyStore,
    },
    async (request, reply) => {
      const auth = tenantOf(request);
      if (auth.publishable) requireKeyStore(request.body.storeId, auth.publishable.storeId);
      const result = await identify(database, auth, request.body);
      // Through the shop's own origin, the browser ids it carried become lasting cookies (docs/first-party.md).
      const { storeId, visitorId, fbp, ttp } = request.body;
      await setFirstPartyCookies(database, request, reply, auth, { storeId, ids: { visitorId, fbp, ttp } });
      return ok(request, result);
    },
  );

  // OPTIONS /v1/track/identify — CORS preflight of the browser tag (http/cors.ts says why any origin's)
  app.options('/track/identify', { config: { public: true }, schema: { hide: true } }, answerPreflight);
};
