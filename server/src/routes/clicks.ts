import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { fillClickStore, publishableClick } from '../accounts/publishable.js';
import { tenantOf } from '../http/auth.js';
import { answerPreflight } from '../http/cors.js';
import { ok } from '../http/envelope.js';
import { listContext, PageQuery } from '../http/pagination.js';
import { getClick, listClicksOf, presentClick, trackClick } from '../tracking/clicks.js';
import { bearer, ClientTime, Nullable, Query, type RouteDeps, responses, Timestamp } from './common.js';

export const FBCLID_PATTERN = '^[A-Za-z0-9_.-]+$';

const ClickBody = Type.Object({
  fbclid: Type.String({
    minLength: 1,
    maxLength: 500,
    pattern: FBCLID_PATTERN,
    'x-error-code': 'invalid_fbclid',
    description: 'The fbclid query parameter of the landing URL, verbatim',
    examples: ['IwAR2F4-dbP0l7Mn1IawQQGCINEz7PYXQvwjNwB_qa2ofrHyiLjcbCRxTDMgk'],
  }),
  storeId: Type.String({ minLength: 1, maxLength: 64, examples: ['st_01jf3k5x2m7q9r8s4t6v0w1y2z'] }),
  landingPage: Type.String({
    maxLength: 2048,
    description: 'Absolute http(s) URL',
    examples: ['https://shop.example.com/p/1?utm_source=facebook&fbclid=IwAR2F4'],
  }),
  referrer: Type.Optional(Type.String({ maxLength: 2048 })),
  ipAddress: Type.Optional(Type.String({ maxLength: 64, description: 'IPv4 or IPv6' })),
  userAgent: Type.Optional(Type.String({ maxLength: 1024 })),
  timestamp: ClientTime,
  fingerprint: Type.Optional(Type.String({ maxLength: 256 })),
  fbp: Type.Optional(
    Type.String({ maxLength: 256, pattern: '^fb\\.\\d\\.\\d+\\.[A-Za-z0-9_-]+$', examples: ['fb.1.1596403881668.1116446470'] }),
  ),
});

const ClickResult = Type.Object({
  clickId: Type.String(),
  fbclid: Type.String(),
  tracked: Type.Literal(true),
  timestamp: Timestamp('When the click was recorded'),
  duplicate: Type.Boolean({
    description: 'true when this fbclid was already recorded for the store; the original click is returned',
  }),
});

const Click = Type.Object({
  clickId: Type.String(),
  storeId: Type.String(),
  fbclid: Type.String(),
  fbc: Type.String({ description: 'fb.1.<click time ms>.<fbclid>' }),
  fbp: Nullable(Type.String()),
  landingPage: Type.String(),
  referrer: Nullable(Type.String()),
  ipAddress: Nullable(Type.String()),
  userAgent: Nullable(Type.String()),
  fingerprint: Nullable(Type.String()),
  utm: Type.Object({
    source: Nullable(Type.String()),
    medium: Nullable(Type.String()),
    campaign: Nullable(Type.String()),
    content: Nullable(Type.String()),
    term: Nullable(Type.String()),
  }),
  campaignId: Nullable(Type.String()),
  adsetId: Nullable(Type.String()),
  adId: Nullable(Type.String()),
  isBot: Type.Boolean({ description: 'Bot user agents are recorded but excluded from metrics and attribution' }),
  livemode: Type.Boolean(),
  timestamp: Timestamp('Click time'),
  recordedAt: Timestamp('When the click was recorded'),
});

const ClickList = Type.Object({ clicks: Type.Array(Click), hasMore: Type.Boolean(), nextCursor: Nullable(Type.String()) });

export const clickRoutes: FastifyPluginAsyncTypebox<RouteDeps> = async (app, { database, cursors }) => {
  // POST /v1/track/click — record an ad click (also the browser tag's, with a publishable key)
  app.post(
    '/track/click',
    {
      config: { scope: 'clicks:write', publishable: true },
      schema: {
        tags: ['Tracking'],
        summary: 'Record an ad click',
        security: bearer,
        body: ClickBody,
        response: responses(200, ClickResult),
      },
      preValidation: async (request) => {
        const store = request.auth?.publishable?.storeId;
        if (store) fillClickStore(request.body, store);
      },
    },
    async (request) => {
      const auth = tenantOf(request);
      const input = auth.publishable ? publishableClick(request.body, auth.publishable.storeId, request.ip) : request.body;
      return ok(request, await trackClick(database, auth, input));
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
        summary: 'List clicks',
        security: bearer,
        querystring: Query({ storeId: Type.Optional(Type.String({ maxLength: 64 })), ...PageQuery }),
        response: responses(200, ClickList),
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
        summary: 'Get a click',
        security: bearer,
        params: Type.Object({ id: Type.String({ maxLength: 64 }) }),
        response: responses(200, Click),
      },
    },
    async (request) => ok(request, presentClick(await getClick(database, tenantOf(request), request.params.id))),
  );
};
