import { readFileSync } from 'node:fs';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../http/errors.js';
import { PIXEL_FILE } from '../paths.js';

/** The placeholders of the built pixel's two settings (packages/tag/scripts/build.mjs). */
const ENDPOINT_PLACEHOLDER = 'https://WAYTRACK_HOST/v1/track/checkout';
const KEY_PLACEHOLDER = 'wt_pk_live_REPLACE_ME';
/** A publishable key as `?key=` may give it; anything else leaves the placeholder for the merchant. */
const PUBLISHABLE_KEY = /^wt_pk_(?:live|test)_[A-Za-z0-9_-]{8,200}$/;

function load(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * GET /shopify-pixel.js — the Shopify checkout pixel (packages/tag/src/shopify-pixel.ts) to paste
 * into Settings → Customer events (docs/integrations.md "Shopify checkout pixel"), its endpoint
 * filled in with the address this request reached Waytrack at and, given `?key=wt_pk_…`, its key.
 * Text to copy, not a script for pages: never cached by a shared cache (the key is in it).
 */
export const shopifyPixelRoutes: FastifyPluginAsync<{ file?: string }> = async (app, options) => {
  const file = options.file ?? PIXEL_FILE;
  let built = load(file);

  app.get('/shopify-pixel.js', { schema: { hide: true } }, async (request: FastifyRequest, reply: FastifyReply) => {
    built ??= load(file);
    if (!built) {
      throw new ApiError('not_found', 'The Shopify pixel is not built: run `npm run build` (`npm start` does it before serving)');
    }
    const { key } = request.query as { key?: unknown };
    const endpoint = `${request.protocol}://${request.host}/v1/track/checkout`;
    let text = built.replace(ENDPOINT_PLACEHOLDER, endpoint);
    if (typeof key === 'string' && PUBLISHABLE_KEY.test(key)) text = text.replace(KEY_PLACEHOLDER, key);
    reply.headers({
      'Content-Type': 'text/javascript; charset=utf-8',
      'Cache-Control': 'private, no-store',
      'X-Content-Type-Options': 'nosniff',
    });
    return reply.send(text);
  });
};
