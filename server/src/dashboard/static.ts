import { existsSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { ApiError } from '../http/errors.js';
import { DASHBOARD_DIST } from '../paths.js';

/** Vite names every asset after a hash of its content: a changed file is a new URL, so a year is safe. */
const ONE_YEAR_MS = 365 * 24 * 60 * 60 * 1000;

/**
 * The page may load and talk to this origin only: no inline script, no other site's code, no
 * framing (clickjacking). uPlot styles its elements from script (CSSOM), which style-src allows.
 */
const HTML_HEADERS = {
  'Cache-Control': 'no-cache',
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'same-origin',
};

/**
 * Serves the built dashboard at /dashboard: hashed assets with a year-long cache, and the page
 * itself (never cached, so a new release is seen at once) for /dashboard and every path under
 * it that is not a file, so deep links and reloads land in the app, which routes them itself.
 * Assets are sent pre-compressed (.br/.gz written by the build) when the browser accepts it.
 */
export const dashboardStatic: FastifyPluginAsync<{ dir?: string }> = async (app, options) => {
  const root = options.dir ?? DASHBOARD_DIST;
  await app.register(fastifyStatic, { root, serve: false, preCompressed: true, suppressWarning: true, index: false });

  const page = (reply: FastifyReply) => {
    if (!existsSync(path.join(root, 'index.html'))) {
      throw new ApiError('not_found', 'The dashboard is not built: run `npm run build` (`npm start` does it before serving)');
    }
    return reply.headers(HTML_HEADERS).sendFile('index.html', { cacheControl: false });
  };

  // GET /dashboard — the app (it shows the sign-in form when nobody is signed in)
  app.get('/dashboard', { schema: { hide: true } }, (_request, reply) => page(reply));

  // GET /dashboard/assets/* — the built scripts and styles
  app.get('/dashboard/assets/*', { schema: { hide: true } }, (request, reply) => {
    const file = (request.params as { '*': string })['*'];
    if (file === '') return reply.callNotFound();
    // A missing asset is a 404, never the page: a script URL must not answer with HTML.
    return reply.header('X-Content-Type-Options', 'nosniff').sendFile(`assets/${file}`, { maxAge: ONE_YEAR_MS, immutable: true });
  });

  /** Under /dashboard, the paths that are no page of the app: JSON and built files. */
  const NOT_PAGES = /^\/dashboard\/(api|assets)(\/|$)/;
  // GET /dashboard/* — any page of the app (deep links and reloads); never for /dashboard/api (JSON) or /dashboard/assets
  app.get('/dashboard/*', { schema: { hide: true }, config: { notServing: NOT_PAGES } }, (request, reply) => {
    const { pathname } = new URL(request.url, 'https://localhost');
    if (NOT_PAGES.test(pathname)) return reply.callNotFound();
    return page(reply);
  });
};
