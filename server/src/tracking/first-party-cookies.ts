import type { Consent } from '../consent/consent.js';
import { fbcOf } from './clicks.js';

/**
 * Lasting first-party cookies (api.md §13 "Cookies that last"; docs/first-party.md). Browsers
 * cap cookies a script writes at 7 days (Safari's ITP), but keep a cookie an HTTP answer sets
 * for as long as it says (Chromium caps every cookie at 400 days). When the tag's request
 * reached Waytrack through a path the shop's own web server proxies, the answer is the shop's,
 * so Waytrack sets the browser ids the request carried, for 400 days.
 *
 * The cookies are host-only (no `Domain`): the tag writes its `_fbc`/`_fbp`/`_wt_vid` host-only,
 * and a Set-Cookie with the same name, host and path replaces that cookie instead of adding a
 * twin under another domain that `document.cookie` would list beside it. The browser binds a
 * host-only cookie to the host it asked, so no request can make Waytrack set one for another
 * site; the store check below is there so that Waytrack never even answers as if it were one.
 */

/** 400 days, the longest any browser keeps a cookie (Chromium's cap; RFC 6265bis). */
export const FIRST_PARTY_COOKIE_MAX_AGE_S = 400 * 24 * 60 * 60;

/** The browser ids a request carried, as the API took them. */
export interface BrowserIds {
  visitorId?: string | undefined;
  fbc?: string | undefined;
  fbp?: string | undefined;
  ttp?: string | undefined;
}

/**
 * Each cookie and the values it may take: only ids of their documented shape, in characters
 * that need no quoting in a cookie (RFC 6265 cookie-octet), so nothing from the request is
 * reflected into a header beyond an id Waytrack would itself have written.
 */
const COOKIES = [
  { name: '_wt_vid', field: 'visitorId', format: /^[A-Za-z0-9._-]{1,128}$/ },
  { name: '_fbc', field: 'fbc', format: /^fb\.\d\.\d{1,16}\.[A-Za-z0-9_.-]{1,500}$/ },
  { name: '_fbp', field: 'fbp', format: /^fb\.\d\.\d{1,16}\.[A-Za-z0-9_-]{1,64}$/ },
  { name: '_ttp', field: 'ttp', format: /^[A-Za-z0-9._+/=-]{1,256}$/ },
] as const;

/** A host name as a Host header gives it (an optional port dropped), lower-case; undefined if not one. */
export function hostnameOf(host: string | undefined): string | undefined {
  if (host === undefined) return undefined;
  const match =
    /^([A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*)(?::\d{1,5})?$/.exec(
      host,
    );
  const name = match?.[1]?.toLowerCase();
  return name && name.length <= 253 ? name : undefined;
}

/** Whether `hostname` is the store's domain or one of its subdomains (the publishable key's origin rule). */
export function onStoreDomain(hostname: string, storeDomain: string): boolean {
  const domain = storeDomain.toLowerCase();
  return domain !== '' && (hostname === domain || hostname.endsWith(`.${domain}`));
}

export interface FirstPartyRequest {
  /** The host the visitor's browser asked, as the shop's proxy reports it (`Forwarded: host=`). */
  proxiedHost: string | undefined;
  /** The page's origin (`Origin`), which a browser sends with every POST. */
  origin: string | undefined;
  /** The domain of the store the request is for (its publishable key's store). */
  storeDomain: string;
  /** The request's consent resolved against the store's default. */
  consent: Consent;
  ids: BrowserIds;
}

/**
 * The Set-Cookie values for a tag request, or none: only when the request came through the
 * store's own origin (the proxy's host is the store's domain or a subdomain, and the page that
 * sent it is on that same host, i.e. the request was same-origin for the browser), only with
 * ad storage allowed (these are the ids of ad measurement: the tag writes none without it),
 * and only for the ids the request carried that have their documented shape.
 */
export function firstPartyCookies(request: FirstPartyRequest): string[] {
  const host = hostnameOf(request.proxiedHost);
  if (!host || !onStoreDomain(host, request.storeDomain)) return [];
  if (originHost(request.origin) !== host) return [];
  if (request.consent.adStorage === 'denied') return [];
  const cookies: string[] = [];
  for (const { name, field, format } of COOKIES) {
    const value = request.ids[field];
    if (value !== undefined && format.test(value)) {
      cookies.push(`${name}=${value}; Max-Age=${FIRST_PARTY_COOKIE_MAX_AGE_S}; Path=/; Secure; SameSite=Lax`);
    }
  }
  return cookies;
}

function originHost(origin: string | undefined): string | undefined {
  if (origin === undefined) return undefined;
  try {
    const url = new URL(origin);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.hostname.toLowerCase() : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The browser ids of a recorded click: those it was sent with, and its `_fbc` as Waytrack
 * recorded it (`fb.1.<ms>.<fbclid>`, api.md §8) — the same fbclid the tag's own `_fbc` holds,
 * so the tag keeps it on later pages, and the value a conversion's `fbc` then names the click by.
 */
export function clickBrowserIds(
  input: { visitorId?: string | undefined; fbp?: string | undefined; ttp?: string | undefined },
  result: { fbclid?: string | undefined; timestamp: string },
): BrowserIds {
  const recordedAt = Date.parse(result.timestamp);
  return {
    visitorId: input.visitorId,
    fbp: input.fbp,
    ttp: input.ttp,
    fbc: result.fbclid && Number.isFinite(recordedAt) ? fbcOf(recordedAt, result.fbclid) : undefined,
  };
}
