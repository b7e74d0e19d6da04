import { CLICK_ID_KINDS, type ClickIds, clickIdsOf, ID_COOKIES, sentKey } from './click-ids.js';
import { consentOf, gtagConsent, hasConsent, mergeConsent, type PageConsent } from './consent.js';
import { chooseFbc, chooseFbp, FBP, randomDigits, readCookie, serializeCookie } from './cookies.js';
import { fingerprintOf } from './fingerprint.js';
import { hexOf, normalizedIdentity, VISITOR_COOKIE, VISITOR_ID, VISITOR_MAX_AGE_SECONDS, visitorIdOf } from './identity.js';
import { parseSent, withSent } from './sent.js';

/**
 * The Waytrack browser tag (api.md §6), included by a shop's pages as
 *   <script async src="https://WAYTRACK_HOST/tag.js" data-key="wt_pk_live_…"></script>
 * On a page whose URL has a click id (`fbclid`, `gclid`, `gbraid`, `wbraid`, `ttclid`, `msclkid`, `epik`, `ScCid`, `rdt_cid`, `li_fat_id`)
 * it sets the matching first-party cookies (`_fbc`/`_fbp`, `_gcl_aw`, … click-ids.ts) and sends
 * the click to the server the script came from, once per click per browser. `window.waytrack.identifiers()`
 * gives a checkout what its backend needs for POST /v1/track/conversion. Nothing here may
 * break the page: every step is guarded, and failures are silent.
 *
 * Consent (api.md §10, docs/consent.md): `waytrack('consent', {...})` (queued by the snippet's
 * stub before the tag loads, or called later) and Google's Consent Mode state in `dataLayer`.
 * With ad storage denied no ad cookie is written or read; the click is still sent with its
 * consent (the server attributes with its ids and never forwards them). With
 * `data-consent="wait"` on the script, the click waits for the first `waytrack('consent', …)`.
 *
 * Identity (api.md §13, identity.ts): the tag keeps a first-party visitor id (`_wt_vid`), made on
 * the first page view that allows ad storage (as `_fbp`), sent with clicks and returned by
 * `identifiers()`. `waytrack('identify', {email, phone})` hashes them here and sends only the
 * hashes to POST /v1/track/identify with this browser's ids, when ad storage and ad user data
 * are both allowed (with `data-consent="wait"`, once consent is given).
 *
 * `waytrack('eventId')` returns a fresh event id (api.md §12) for a purchase's browser pixel call
 * and its conversion call to share (docs/integrations.md "One event id for pixel and server").
 */

interface Identifiers {
  fbc: string | null;
  fbp: string | null;
  gclid: string | null;
  gbraid: string | null;
  wbraid: string | null;
  ttclid: string | null;
  msclkid: string | null;
  epik: string | null;
  ScCid: string | null;
  rdt_cid: string | null;
  li_fat_id: string | null;
  ttp: string | null;
  /** Snapchat's and Reddit's browser ids (their pixels' `_scid`, `_rdt_uuid`), when set. */
  scid: string | null;
  rdtUuid: string | null;
  /** This browser's `_wt_vid`: pass it with the conversion (same-browser evidence). */
  visitorId: string | null;
  fingerprint: string | null;
  /** The consent the page gave (fields it did not give are left out): pass it on with the conversion. */
  consent: PageConsent;
}

interface WaytrackGlobal {
  /** `waytrack('eventId')` returns a fresh event id; the other commands return nothing. */
  (command: string, value?: unknown): string | undefined;
  identifiers(): Identifiers;
  /** Commands queued by the snippet's stub before the tag loaded. */
  q?: ArrayLike<unknown>[];
}

const SENT_STORAGE_KEY = 'waytrack:sent-fbclids';
const NO_IDENTIFIERS: Identifiers = {
  fbc: null,
  fbp: null,
  gclid: null,
  gbraid: null,
  wbraid: null,
  ttclid: null,
  msclkid: null,
  epik: null,
  ScCid: null,
  rdt_cid: null,
  li_fat_id: null,
  ttp: null,
  scid: null,
  rdtUuid: null,
  visitorId: null,
  fingerprint: null,
  consent: {},
};

type CookieIds = Record<keyof typeof ID_COOKIES, string | null>;

/** The click ids this browser holds in first-party cookies (the last ad click of each platform); all null when storage is denied. */
function cookieIds(allowed: boolean): CookieIds {
  const cookies = document.cookie;
  const ids = {} as CookieIds;
  for (const kind of Object.keys(ID_COOKIES) as (keyof typeof ID_COOKIES)[]) {
    const raw = allowed ? readCookie(cookies, ID_COOKIES[kind].name) : null;
    ids[kind] = raw === null ? null : ID_COOKIES[kind].read(raw);
  }
  return ids;
}

function attempt<T>(work: () => T, fallback: T): T {
  try {
    return work();
  } catch {
    return fallback;
  }
}

/** This script's element: `currentScript` while it runs (async included), else found by its key. */
function ownScript(): HTMLScriptElement | null {
  const current = document.currentScript as HTMLScriptElement | null;
  if (current?.src) return current;
  return document.querySelector<HTMLScriptElement>('script[data-key][src*="tag.js"]');
}

function browserFingerprint(): string {
  const nav = navigator as Navigator & { deviceMemory?: number };
  const zone = attempt(() => Intl.DateTimeFormat().resolvedOptions().timeZone, '');
  return fingerprintOf([
    nav.userAgent,
    nav.language,
    attempt(() => nav.languages.join(','), ''),
    nav.platform,
    zone,
    `${screen.width}x${screen.height}x${screen.colorDepth}`,
    window.devicePixelRatio,
    nav.hardwareConcurrency,
    nav.deviceMemory,
    nav.maxTouchPoints,
  ]);
}

/** A uniform integer in [0, n) from the CSPRNG when there is one. */
function randomInt(n: number): number {
  const cryptoApi = window.crypto;
  if (cryptoApi?.getRandomValues) return (cryptoApi.getRandomValues(new Uint32Array(1))[0] ?? 0) % n;
  return Math.floor(Math.random() * n);
}

/**
 * `waytrack('eventId')` (api.md §12 "Pixel and server, counted once"): a fresh id per call, 16
 * random bytes as base64url, for the shop to give the platform's browser pixel (Meta's eventID,
 * TikTok's event_id, …) and its conversion call (`eventId`), so each platform counts the purchase once.
 */
const newEventId = () => visitorIdOf(Array.from({ length: 16 }, () => randomInt(256)));

function setCookie(name: string, value: string, maxAge?: number): void {
  // biome-ignore lint/suspicious/noDocumentCookie: the Cookie Store API is missing from browsers still in use
  document.cookie = serializeCookie(name, value, location.protocol === 'https:', maxAge);
}

/** This browser's `_wt_vid`, made when missing (the caller checked that ad storage is allowed); null when cookies are blocked. */
function ensureVisitorId(): string | null {
  const existing = readCookie(document.cookie, VISITOR_COOKIE);
  if (existing && VISITOR_ID.test(existing)) return existing;
  setCookie(VISITOR_COOKIE, visitorIdOf(window.crypto.getRandomValues(new Uint8Array(16))), VISITOR_MAX_AGE_SECONDS);
  return readCookie(document.cookie, VISITOR_COOKIE);
}

/** SHA-256 hex of each identity given (never the value itself); none without WebCrypto (an insecure page). */
async function hashedIdentity(value: unknown): Promise<Record<string, string>> {
  const hashes: Record<string, string> = {};
  const given = (value ?? {}) as Record<string, unknown>;
  const subtle = window.crypto?.subtle;
  for (const kind of ['email', 'phone'] as const) {
    const identity = normalizedIdentity(kind, given[kind]);
    if (!identity || !subtle) continue;
    hashes[kind] = identity.hashed
      ? identity.text
      : hexOf(await subtle.digest('SHA-256', new TextEncoder().encode(identity.text)));
  }
  return hashes;
}

/** The browser ids a request may carry: ad cookies, and user data: only with both allowed. */
function browserIds(consent: PageConsent, fbp: string | null): Record<string, string> {
  const ids: Record<string, string> = {};
  if (consent.adStorage === 'denied' || consent.adUserData === 'denied') return ids;
  const cookies = document.cookie;
  if (fbp && FBP.test(fbp)) ids.fbp = fbp;
  const ttp = readCookie(cookies, '_ttp');
  if (ttp && ttp.length <= 256) ids.ttp = ttp;
  const visitorId = readCookie(cookies, VISITOR_COOKIE);
  if (visitorId && VISITOR_ID.test(visitorId)) ids.visitorId = visitorId;
  return ids;
}

/** POSTs to Waytrack beside the script: `/tag.js` on Waytrack's host, or a path the shop proxies (`/wt/tag.js`). */
function post(script: HTMLScriptElement, path: string, key: string, body: Record<string, unknown>): Promise<Response> {
  return fetch(new URL(path, script.src).href, {
    method: 'POST',
    // Survives the visitor leaving the page at once.
    keepalive: true,
    mode: 'cors',
    // Through the shop's own origin (docs/first-party.md) the request is same-origin: its answer's
    // Set-Cookie (lasting first-party cookies) must be kept. Straight to Waytrack it carries none.
    credentials: 'same-origin',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

function sentFbclids(): string[] {
  return attempt(() => parseSent(localStorage.getItem(SENT_STORAGE_KEY)), []);
}

function rememberSent(fbclid: string): void {
  attempt(() => localStorage.setItem(SENT_STORAGE_KEY, JSON.stringify(withSent(sentFbclids(), fbclid))), undefined);
}

function sendClick(
  script: HTMLScriptElement,
  key: string,
  ids: ClickIds,
  fingerprint: string | null,
  fbp: string | null,
  consent: PageConsent,
): void {
  const sent = sentKey(ids) as string;
  const body: Record<string, unknown> = {
    ...(ids as Record<string, string>),
    landingPage: location.href.slice(0, 2048),
    userAgent: navigator.userAgent.slice(0, 1024),
  };
  if (fingerprint) body.fingerprint = fingerprint;
  if (document.referrer) body.referrer = document.referrer.slice(0, 2048);
  if (hasConsent(consent)) body.consent = consent;
  Object.assign(body, browserIds(consent, fbp));
  post(script, 'v1/track/click', key, body).then(
    // Any definite answer ends it (a refusal would be refused again); a 429 or 5xx is worth another page view.
    (response) => {
      if (response.status < 500 && response.status !== 429) rememberSent(sent);
    },
    () => {},
  );
}

function start(): void {
  const global = window as Window & { waytrack?: WaytrackGlobal; dataLayer?: unknown };
  const stub = global.waytrack;
  // Included twice: the first copy does the work.
  if (stub && typeof stub.identifiers === 'function') return;
  let given: PageConsent = {};
  let consentGiven = false;
  let pending: (() => void) | undefined;
  const consent = () => mergeConsent(gtagConsent(global.dataLayer), given);
  const storage = () => consent().adStorage !== 'denied';
  let fingerprint: string | null = null;
  const fingerprintNow = () => {
    fingerprint ??= attempt(browserFingerprint, null);
    return fingerprint;
  };
  const cookie = (name: string) => (storage() ? readCookie(document.cookie, name) : null);
  const script = ownScript();
  const key = script?.getAttribute('data-key');
  const waiting = () => script?.getAttribute('data-consent') === 'wait' && !consentGiven;
  // The visitor id is made as `_fbp` is: with ad storage allowed (once consent is given when the page waits for it).
  const visitor = () => {
    if (storage() && !waiting()) attempt(ensureVisitorId, null);
  };
  const identifyQueue: unknown[] = [];
  const identify = (value: unknown) => {
    if (waiting()) return void identifyQueue.push(value);
    const ids = browserIds(consent(), cookie('_fbp'));
    if (!script || !key || typeof fetch !== 'function' || !Object.keys(ids).length) return;
    hashedIdentity(value).then(
      (hashes) => {
        if (Object.keys(hashes).length) post(script, 'v1/track/identify', key, { ...ids, ...hashes }).catch(() => {});
      },
      () => {},
    );
  };
  const api = ((command: string, value?: unknown) =>
    attempt(() => {
      if (command === 'eventId') return newEventId();
      if (command === 'identify') return void identify(value);
      if (command !== 'consent') return;
      given = mergeConsent(given, consentOf(value));
      consentGiven = true;
      visitor();
      for (const queued of identifyQueue.splice(0)) identify(queued);
      const send = pending;
      pending = undefined;
      send?.();
    }, undefined)) as WaytrackGlobal;
  api.identifiers = () =>
    attempt(
      () => ({
        fbc: cookie('_fbc'),
        fbp: cookie('_fbp'),
        ...cookieIds(storage()),
        ttp: cookie('_ttp'),
        scid: cookie('_scid'),
        rdtUuid: cookie('_rdt_uuid'),
        visitorId: cookie(VISITOR_COOKIE),
        fingerprint: fingerprintNow(),
        consent: consent(),
      }),
      NO_IDENTIFIERS,
    );
  global.waytrack = api;
  // The snippet's stub may have queued calls (waytrack('consent', …)) before the tag loaded: their consent first.
  for (const args of Array.from(stub?.q ?? [])) attempt(() => api(args[0] as string, args[1]), undefined);
  visitor();

  const ids = clickIdsOf(location.search);
  const sent = sentKey(ids);
  if (!sent) return;
  const record = () => {
    const allowed = storage();
    const now = Date.now();
    let fbp: string | null = null;
    // Ad storage denied: no ad cookie is written (the ids still reach the server, for attribution only).
    if (allowed && ids.fbclid) {
      const existingFbc = readCookie(document.cookie, '_fbc');
      const fbc = chooseFbc(existingFbc, ids.fbclid, now);
      if (fbc !== existingFbc) setCookie('_fbc', fbc);
      const existingFbp = readCookie(document.cookie, '_fbp');
      fbp = chooseFbp(existingFbp, now, () => randomDigits(10, randomInt));
      if (fbp !== existingFbp) setCookie('_fbp', fbp);
    } else {
      fbp = cookie('_fbp');
    }
    for (const kind of CLICK_ID_KINDS) {
      const value = ids[kind];
      if (!allowed || !value || kind === 'fbclid') continue;
      const idCookie = ID_COOKIES[kind];
      const existing = readCookie(document.cookie, idCookie.name);
      // The same id again keeps its cookie (and its click time).
      if (existing === null || idCookie.read(existing) !== value) setCookie(idCookie.name, idCookie.write(value, now));
    }
    if (!script || !key || typeof fetch !== 'function' || sentFbclids().includes(sent)) return;
    sendClick(script, key, ids, fingerprintNow(), fbp, consent());
  };
  if (waiting()) pending = () => attempt(record, undefined);
  else record();
}

attempt(start, undefined);
