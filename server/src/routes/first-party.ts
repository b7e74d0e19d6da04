import type { FastifyReply, FastifyRequest } from 'fastify';
import { type ConsentInput, resolveConsent, storeDefaultOf } from '../consent/consent.js';
import type { Database } from '../db/database.js';
import type { AuthContext } from '../http/auth.js';
import { requireActiveStoreCached } from '../stores/lookup.js';
import { type BrowserIds, firstPartyCookies } from '../tracking/first-party-cookies.js';

/**
 * The tag's requests through the shop's own origin (docs/first-party.md): the shop's proxy
 * says which host the browser asked in `Forwarded: host=…` (RFC 7239), a header the recipes
 * set (replacing any the client sent). X-Forwarded-Host is not used: a load balancer in front
 * of Waytrack (deploy/Caddyfile) rewrites it to Waytrack's own name, while it passes
 * `Forwarded` through.
 */

/** The `host` of the first (the client-side) element of the `Forwarded` header, if any. */
export function forwardedHost(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.length > 1024) return undefined;
  for (const pair of firstElement(value).split(';')) {
    const eq = pair.indexOf('=');
    if (eq < 0 || pair.slice(0, eq).trim().toLowerCase() !== 'host') continue;
    const raw = pair.slice(eq + 1).trim();
    return raw.startsWith('"') && raw.endsWith('"') && raw.length >= 2 ? raw.slice(1, -1) : raw;
  }
  return undefined;
}

/** The text before the first comma outside a quoted string. */
function firstElement(value: string): string {
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const char = value[i];
    if (char === '"') quoted = !quoted;
    else if (char === '\\' && quoted) i++;
    else if (char === ',' && !quoted) return value.slice(0, i);
  }
  return value;
}

/**
 * Adds the lasting first-party cookies to the answer of a publishable key's tag request that
 * came through its store's own origin (tracking/first-party-cookies.ts decides). A request
 * without `Forwarded: host=` (the tag calling Waytrack's host directly, or a shop backend)
 * costs nothing here.
 */
export async function setFirstPartyCookies(
  database: Database,
  request: FastifyRequest,
  reply: FastifyReply,
  auth: AuthContext,
  event: { storeId: string; consent?: ConsentInput | undefined; ids: BrowserIds },
): Promise<void> {
  if (!auth.publishable) return;
  const proxiedHost = forwardedHost(request.headers.forwarded);
  if (proxiedHost === undefined) return;
  const store = await requireActiveStoreCached(database.read, auth, event.storeId);
  const cookies = firstPartyCookies({
    proxiedHost,
    origin: request.headers.origin,
    storeDomain: store.domain,
    consent: resolveConsent(event.consent, storeDefaultOf(store.default_consent)),
    ids: event.ids,
  });
  if (cookies.length > 0) {
    reply.header('Set-Cookie', cookies);
    // An answer that sets a visitor's cookies is that visitor's alone.
    reply.header('Cache-Control', 'private, no-store');
  }
}
