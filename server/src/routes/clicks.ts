import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { tenantOf } from '../http/auth.js';
import { answerPreflight } from '../http/cors.js';
import { ok } from '../http/envelope.js';
import { describeResponses, EXAMPLE, ID_TOO_LONG, PAGE_ERRORS, STORE_NOT_FOUND } from '../http/openapi.js';
import { listContext, PageQuery } from '../http/pagination.js';
import { getClick, listClicksOf, presentClick, trackClick } from '../tracking/clicks.js';
import { clickBrowserIds } from '../tracking/first-party-cookies.js';
import { publishableClick } from '../tracking/publishable-click.js';
import { bearer, fillKeyStore, ORIGIN_NOT_ALLOWED, Query, type RouteDeps } from './common.js';
import { setFirstPartyCookies } from './first-party.js';
import { CLICK_NOT_FOUND, Click, ClickBody, ClickList, ClickParams, ClickResult, EXAMPLE_CLICK } from './schemas/clicks.js';

export const clickRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { database, cursors }) => {
  // POST /v1/track/click — record an ad click (also the browser tag's, with a publishable key)
  app.post(
    '/track/click',
    {
      config: { scope: 'clicks:write', publishable: true },
      schema: {
        tags: ['Tracking'],
        operationId: 'trackClick',
        summary: 'Record an ad click',
        description: [
          'Records the click of a Meta ad that brought a visitor to the store (the `fbclid` of the landing URL), so later conversions can be attributed to it.',
          '',
          '- **Idempotent by fbclid:** a click is unique per account, mode, store and `fbclid`; sending it again returns the original click (same `clickId`) with `duplicate: true` and counts it once. An `Idempotency-Key` header also replays the stored response.',
          '- **Live vs test:** a `wt_test_` key records test clicks, which can only attribute test conversions and never move a live metric.',
          '- **From the browser:** the one operation a publishable key (`wt_pk_…`) may call, from a page on the store’s domain (CORS preflight answered); `storeId` may then be left out and the IP is the connection’s. The `/tag.js` browser tag does this for you.',
          '- The store must be active (an inactive or unknown store is `store_not_found`). Clicks older than 90 days are refused (`invalid_fbclid`, reason `expired`).',
        ].join('\n'),
        security: bearer,
        body: ClickBody,
        response: describeResponses(ClickResult, {
          description: 'The click was recorded, or (`duplicate: true`) it already was: the original click',
          examples: {
            recorded: {
              summary: 'The click was recorded',
              data: {
                clickId: EXAMPLE.clickId,
                fbclid: EXAMPLE.fbclid,
                tracked: true,
                timestamp: EXAMPLE.recordedAt,
                duplicate: false,
              },
            },
            duplicate: {
              summary: 'Duplicate: the original click',
              data: {
                clickId: EXAMPLE.clickId,
                fbclid: EXAMPLE.fbclid,
                tracked: true,
                timestamp: EXAMPLE.recordedAt,
                duplicate: true,
              },
            },
          },
          write: true,
          json: true,
          invalid: {
            missingFbclid: {
              summary: 'No click id at all (in the body or the landing page)',
              code: 'missing_required_field',
              message:
                'At least one click id is required: fbclid, gclid, gbraid, wbraid, ttclid, msclkid, epik, ScCid, rdt_cid, li_fat_id',
              details: {
                field: 'fbclid',
                reason: 'required_field_missing',
                anyOf: ['fbclid', 'gclid', 'gbraid', 'wbraid', 'ttclid', 'msclkid', 'epik', 'ScCid', 'rdt_cid', 'li_fat_id'],
              },
            },
            badClickId: {
              summary: 'Another click id with a character outside [A-Za-z0-9_.-]',
              code: 'invalid_click_id',
              message: 'gclid has an invalid format',
              details: { field: 'gclid', reason: 'invalid_format' },
            },
            badFbclid: {
              summary: 'fbclid with a character outside [A-Za-z0-9_.-]',
              code: 'invalid_fbclid',
              message: 'fbclid has an invalid format',
              details: { field: 'fbclid', reason: 'invalid_format' },
            },
            expiredClick: {
              summary: 'A click older than 90 days',
              code: 'invalid_fbclid',
              message: 'The click is older than 90 days; its fbclid has expired',
              details: { field: 'timestamp', reason: 'expired' },
            },
            landingPageNotUrl: {
              summary: 'landingPage is not an absolute http(s) URL',
              code: 'invalid_request',
              message: 'landingPage must be an absolute http(s) URL',
              details: { field: 'landingPage', reason: 'invalid_url' },
            },
            ipAddressWithPublishableKey: {
              summary: 'ipAddress sent with a publishable key',
              code: 'invalid_request',
              message: 'With a publishable key the IP address is taken from the connection; leave ipAddress out',
              details: { field: 'ipAddress', reason: 'not_allowed' },
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
      const input = auth.publishable ? publishableClick(request.body, auth.publishable.storeId, request.ip) : request.body;
      const result = await trackClick(database, auth, input);
      // Through the shop's own origin, the ids it carried become lasting cookies (docs/first-party.md).
      await setFirstPartyCookies(database, request, reply, auth, {
        storeId: input.storeId,
        consent: input.consent,
        ids: clickBrowserIds(input, result),
      });
      return ok(request, result);
    },
  );

  // OPTIONS /v1/track/click — CORS preflight of the browser tag (http/cors.ts says why any origin's)
  app.options('/track/click', { config: { public: true }, schema: { hide: true } }, answerPreflight);

  // GET /v1/clicks — list clicks, newest first
  app.get(
    '/clicks',
    {
      config: { scope: 'clicks:read' },
      schema: {
        tags: ['Clicks'],
        operationId: 'listClicks',
        summary: 'List clicks',
        description:
          'The clicks of the key’s account and mode (a test key lists test clicks), newest first, one page at a time (`limit`, `cursor`); optionally of one store. Bot clicks are listed with `isBot: true`.',
        security: bearer,
        querystring: Query({
          storeId: Type.Optional(
            Type.String({ maxLength: 64, description: 'Only this store’s clicks', examples: [EXAMPLE.storeId] }),
          ),
          ...PageQuery,
        }),
        response: describeResponses(ClickList, {
          description: 'A page of clicks',
          examples: {
            page: {
              summary: 'A page with more after it',
              data: { clicks: [EXAMPLE_CLICK], hasMore: true, nextCursor: EXAMPLE.cursor },
            },
          },
          invalid: PAGE_ERRORS,
          notFound: STORE_NOT_FOUND,
        }),
      },
    },
    async (request) => {
      const auth = tenantOf(request);
      const { storeId, limit = 20, cursor } = request.query;
      const context = listContext('clicks', auth, { storeId });
      const rows = await listClicksOf(database, auth, { storeId }, { limit, after: cursors.decode(cursor, context) });
      const page = cursors.page(rows, limit, context, (r) => ({ time: r.click_time, id: r.id }), presentClick);
      return ok(request, { clicks: page.items, hasMore: page.hasMore, nextCursor: page.nextCursor });
    },
  );

  // GET /v1/clicks/:id — one click
  app.get(
    '/clicks/:id',
    {
      config: { scope: 'clicks:read' },
      schema: {
        tags: ['Clicks'],
        operationId: 'getClick',
        summary: 'Get a click',
        description:
          'One click of the key’s account and mode, with its stored fields, UTM parameters and bot flag. A click of the other mode is `not_found` (the message says it exists in the other mode).',
        security: bearer,
        params: ClickParams,
        response: describeResponses(Click, {
          description: 'The click',
          examples: { click: { summary: 'A click from a Facebook ad', data: EXAMPLE_CLICK } },
          invalid: ID_TOO_LONG,
          notFound: CLICK_NOT_FOUND,
        }),
      },
    },
    async (request) => ok(request, presentClick(await getClick(database, tenantOf(request), request.params.id))),
  );
};
