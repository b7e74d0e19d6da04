import { CLICK_ID, ID_COOKIES } from './click-ids.js';
import { FBP, fbclidOfFbc } from './cookies.js';
import { VISITOR_COOKIE, VISITOR_ID } from './identity.js';

/**
 * The Waytrack checkout pixel for Shopify (api.md §13 "Shopify checkout"; docs/integrations.md
 * "Shopify checkout pixel"): pasted as a custom pixel in Settings → Customer events. Shopify runs
 * it in a sandboxed frame where the page is out of reach: `analytics.subscribe` gives the customer
 * events, `browser.cookie.get` (asynchronous) reads the shop's first-party cookies, `init` the
 * state at load (the visitor's consent). On `checkout_completed` it sends the order to
 * POST /v1/track/checkout with the store's publishable key: the order id, total and currency, and
 * what only this browser knows — `_wt_vid`, `_fbp`, `_fbc`, `_ttp` and the click ids the tag kept
 * in cookies. The order webhook brings the shop's own figures; the server merges the two.
 * Nothing here may break the checkout: every step is guarded, failures are silent.
 */

/** Filled in above the bundle by the build (scripts/build.mjs) and by GET /shopify-pixel.js. */
declare const WAYTRACK_ENDPOINT: string;
declare const WAYTRACK_KEY: string;

interface Money {
  amount?: unknown;
  currencyCode?: unknown;
}

/** The part of Shopify's `checkout_completed` event the pixel reads (Web Pixels API, PixelEventsCheckoutCompleted). */
export interface CheckoutCompleted {
  timestamp?: unknown;
  context?: { document?: { location?: { href?: unknown } }; navigator?: { userAgent?: unknown } };
  data?: { checkout?: { order?: { id?: unknown }; totalPrice?: Money; currencyCode?: unknown } };
}

/** Shopify's `customerPrivacy` (in `init` and in `visitorConsentCollected`). */
export interface CustomerPrivacy {
  marketingAllowed?: unknown;
}

export interface PixelApi {
  analytics: { subscribe(name: string, callback: (event: never) => void): unknown };
  browser: { cookie: { get(name: string): Promise<string> } };
  init?: { customerPrivacy?: CustomerPrivacy };
}

/** The cookies the pixel reads: Waytrack's visitor id, Meta's and TikTok's browser ids, the click ids' (click-ids.ts). */
export const PIXEL_COOKIES = [VISITOR_COOKIE, '_fbc', '_fbp', '_ttp', ...Object.values(ID_COOKIES).map((c) => c.name)] as const;

const ORDER_GID = /^gid:\/\/shopify\/(?:Order|OrderIdentity)\/(\d{1,40})$/;

/** The order id as the order webhook has it: the digits of Shopify's id, given as text, a number or a GID. */
export function orderIdOf(id: unknown): string | null {
  const text = typeof id === 'number' && Number.isSafeInteger(id) ? String(id) : typeof id === 'string' ? id.trim() : '';
  if (/^\d{1,40}$/.test(text)) return text;
  return ORDER_GID.exec(text)?.[1] ?? null;
}

const text = (value: unknown, max: number) => (typeof value === 'string' && value !== '' ? value.slice(0, max) : undefined);

/**
 * The body of POST /v1/track/checkout for an event, from the cookies read (name → value, empty
 * when absent) and whether marketing (ad storage) is allowed; null when the event has no order
 * or no usable total. Without marketing consent no cookie is sent, only the order and the
 * consent (the server then attributes without forwarding any id).
 */
export function checkoutBody(
  event: CheckoutCompleted,
  cookies: Record<string, string>,
  marketing: boolean | undefined,
): Record<string, unknown> | null {
  const checkout = event.data?.checkout;
  const orderId = orderIdOf(checkout?.order?.id);
  const amount = Number(checkout?.totalPrice?.amount);
  const currency = text(checkout?.totalPrice?.currencyCode, 16) ?? text(checkout?.currencyCode, 16);
  if (!orderId || !Number.isFinite(amount) || amount < 0 || !currency) return null;
  const body: Record<string, unknown> = { orderId, eventValue: amount, currency, eventId: orderId };
  const page = text(event.context?.document?.location?.href, 2048);
  if (page) body.eventSourceUrl = page;
  const userAgent = text(event.context?.navigator?.userAgent, 1024);
  if (userAgent) body.userAgent = userAgent;
  const time = text(event.timestamp, 64);
  if (time) body.timestamp = time;
  if (marketing !== undefined) {
    const state = marketing ? 'granted' : 'denied';
    body.consent = { adStorage: state, adUserData: state, adPersonalization: state };
  }
  if (marketing === false) return body;
  const cookie = (name: string) => cookies[name] ?? '';
  const visitorId = cookie(VISITOR_COOKIE);
  if (VISITOR_ID.test(visitorId)) body.visitorId = visitorId;
  const fbc = cookie('_fbc');
  const fbclid = fbclidOfFbc(fbc);
  if (fbc.length <= 600 && fbclid && CLICK_ID.test(fbclid)) body.fbc = fbc;
  const fbp = cookie('_fbp');
  if (FBP.test(fbp) && fbp.length <= 256) body.fbp = fbp;
  const ttp = cookie('_ttp');
  if (ttp && ttp.length <= 256) body.ttp = ttp;
  for (const [kind, idCookie] of Object.entries(ID_COOKIES)) {
    const raw = cookie(idCookie.name);
    const value = raw ? idCookie.read(raw) : null;
    if (value) body[kind] = value;
  }
  return body;
}

/** Every cookie the pixel reads, through the sandbox's asynchronous API (a failed read is an absent cookie). */
export async function readCookies(browser: PixelApi['browser']): Promise<Record<string, string>> {
  const values = await Promise.all(
    PIXEL_COOKIES.map((name) =>
      Promise.resolve()
        .then(() => browser.cookie.get(name))
        .then(
          (value) => (typeof value === 'string' ? value : ''),
          () => '',
        ),
    ),
  );
  const cookies: Record<string, string> = {};
  PIXEL_COOKIES.forEach((name, i) => {
    cookies[name] = values[i] ?? '';
  });
  return cookies;
}

const marketingOf = (privacy: CustomerPrivacy | undefined) =>
  typeof privacy?.marketingAllowed === 'boolean' ? privacy.marketingAllowed : undefined;

/** Subscribes to the events; the sends are `send(body)` (fetch in the sandbox, a recorder in tests). */
export function startPixel(api: PixelApi, send: (body: Record<string, unknown>) => void): void {
  let marketing = marketingOf(api.init?.customerPrivacy);
  api.analytics.subscribe('visitorConsentCollected', ((event: { customerPrivacy?: CustomerPrivacy }) => {
    marketing = marketingOf(event?.customerPrivacy) ?? marketing;
  }) as (event: never) => void);
  api.analytics.subscribe('checkout_completed', ((event: CheckoutCompleted) => {
    const allowed = marketing;
    (allowed === false ? Promise.resolve({}) : readCookies(api.browser))
      .then((cookies) => {
        const body = checkoutBody(event, cookies, allowed);
        if (body) send(body);
      })
      .catch(() => {});
  }) as (event: never) => void);
}

declare const analytics: PixelApi['analytics'] | undefined;
declare const browser: PixelApi['browser'] | undefined;
declare const init: PixelApi['init'] | undefined;

function run(): void {
  // The sandbox's API: free variables of the custom pixel's code.
  if (typeof analytics === 'undefined' || typeof browser === 'undefined' || typeof fetch !== 'function') return;
  const api: PixelApi = { analytics, browser, ...(typeof init !== 'undefined' && init && { init }) };
  startPixel(api, (body) => {
    fetch(WAYTRACK_ENDPOINT, {
      method: 'POST',
      // The thank-you page may be left at once.
      keepalive: true,
      mode: 'cors',
      credentials: 'omit',
      headers: { authorization: `Bearer ${WAYTRACK_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).catch(() => {});
  });
}

try {
  run();
} catch {
  // Never into the checkout.
}
