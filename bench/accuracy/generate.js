// A store's month of traffic with known truth, drawn from the documented rates of world.js: the
// people of population.js click the store's Meta ads and buy, on home, cellular (CGNAT, or a /64
// per data session), office and campus networks; each browser keeps a cookie jar under ITP's caps.
// Every request body is what the tag and the store's checkout would send. Each order carries its
// truth — the buyer's most recent recorded ad click in the 7-day window, or none — and the
// mechanisms behind it, for the error breakdown. Deterministic for a seed and an end time (the
// calendar days move user agent versions and home addresses). Nothing here reads
// the attribution model (docs/attribution.md, "Guarding against fitting").
import { DAY, dice, fingerprintOf, HOUR, hash, population, userAgent } from './population.js';
import { RATES } from './world.js';

const MINUTE = 60_000;
export const WINDOW = 7 * DAY;

/** A number in [0, 1) from a text: network addresses are functions of (person, session), whatever the event order. */
const unit = (text) => Number.parseInt(hash(text, 8), 16) / 0x100000000;
const hex = (text, n) => hash(text, n).replace(/^0+(?=.)/, '');

/** The network a device is on for an event: home, cellular or work (office/campus), by the world's shares. */
function placeOf(d, person, device) {
  const at = device === 'phone' ? RATES.phoneAt : RATES.computerAt;
  const work = person.work ? (at.work ?? 0) : 0;
  const r = d.random() * ((at.home ?? 0) + (at.cellular ?? 0) + work);
  if (r < (at.home ?? 0)) return 'home';
  if (r < (at.home ?? 0) + (at.cellular ?? 0)) return 'cellular';
  return person.work ? person.work.kind : 'home';
}

/** The address a browser shows on a network at a time, and the network's kind for the breakdown. */
function addressOf(d, person, browser, place, t) {
  const day = Math.floor(t / DAY);
  const iid = (salt) =>
    `${hex(`${browser.id}|${salt}|1`, 4)}:${hex(`${browser.id}|${salt}|2`, 4)}:${hex(`${browser.id}|${salt}|3`, 4)}:${hex(`${browser.id}|${salt}|4`, 4)}`;
  if (place === 'home') {
    const home = person.household;
    // RFC 8981 temporary addresses: a new interface id every day, the home's /64 kept.
    if (home.ipv6) return { ip: `${home.ipv6}:${iid(day)}`, network: 'home' };
    // Leases are sticky: each day the address may change (events reach a home in time order).
    const fresh = () => `${d.int(24, 99)}.${d.int(0, 255)}.${d.int(0, 255)}.${d.int(1, 254)}`;
    if (home.ipv4 === undefined) home.ipv4 = fresh();
    for (let next = (home.ipv4Day ?? day) + 1; next <= day; next++) if (d.chance(RATES.homeIpChangePerDay)) home.ipv4 = fresh();
    home.ipv4Day = Math.max(home.ipv4Day ?? day, day);
    return { ip: home.ipv4, network: 'home' };
  }
  if (place === 'cellular') {
    const session = Math.floor((t + person.sessionPhase) / (RATES.mobileSessionHours * HOUR));
    if (person.phoneIpv6) {
      const key = `${person.id}|${session}`;
      return {
        ip: `2607:${hex(`${key}|a`, 4)}:${hex(`${key}|b`, 4)}:${hex(`${key}|c`, 4)}:${iid(session)}`,
        network: 'mobile_ipv6',
      };
    }
    const slot = Math.floor(unit(`${person.id}|${session}|cgnat`) * RATES.cgnatPoolSize);
    const carrier = RATES.carriers.findIndex(([name]) => name === person.carrier);
    return { ip: `${172 + carrier}.${64 + person.region}.${slot >> 8}.${slot & 255}`, network: 'cgnat' };
  }
  const net = person.work;
  if (net.ipv6) return { ip: `${net.ipv6}:${iid(day)}`, network: net.kind };
  return { ip: net.ipv4, network: net.kind };
}

/**
 * The tag running in a browser at `t` (api.md §6, §13): expired cookies are gone, `_wt_vid` and
 * (unless the pixel is blocked) `_fbp` are created when missing, `_fbc` is written from an fbclid,
 * and every cookie it holds is written again, so its expiry restarts. Under ITP a script-written
 * cookie lives at most 7 days, 1 day when written on a page reached with link decoration from a
 * tracker-classified site (WebKit ITP 2.1, 2.2).
 */
function runTag(d, browser, jar, t, fbclid) {
  for (const key of ['vid', 'fbp', 'fbc']) if (jar[key] && jar[key].expires <= t) delete jar[key];
  jar.vid ??= { value: `wt.${d.token(22)}` };
  if (!browser.blocksPixel) jar.fbp ??= { value: `fb.1.${t}.${d.int(1_000_000_000, 2_147_483_647)}` };
  if (fbclid) jar.fbc = { value: `fb.1.${t}.${fbclid}` };
  const cap = browser.itp ? (fbclid ? RATES.itpDecoratedCapDays : RATES.itpCapDays) * DAY : null;
  if (jar.vid) jar.vid.expires = t + (cap ?? RATES.visitorCookieDays * DAY);
  if (jar.fbp) jar.fbp.expires = t + (cap ?? RATES.fbCookieDays * DAY);
  if (jar.fbc) jar.fbc.expires = t + (cap ?? RATES.fbCookieDays * DAY);
  return { visitorId: jar.vid.value, fbp: jar.fbp?.value, fbc: jar.fbc?.value };
}

/** What the tag's `waytrack('identify', {email, phone})` sends (POST /v1/track/identify): the browser's ids and the person. */
function identifyEvent(t, person, ids) {
  return {
    kind: 'identify',
    at: t,
    person: person.id,
    body: {
      visitorId: ids.visitorId,
      ...(ids.fbp && { fbp: ids.fbp }),
      email: person.email,
      ...(person.phone && { phone: person.phone }),
      timestamp: new Date(t).toISOString(),
    },
  };
}

/** The browser of a later (not same-session) order after a click in `clicked`. */
function laterBrowser(d, person, clicked) {
  const { phone, app, computer } = person.browsers;
  const crossDevice = computer && d.chance(RATES.crossDevice);
  if (clicked === computer) return crossDevice ? phone : computer;
  if (crossDevice) return computer;
  if (clicked === app) return d.chance(RATES.inAppToDefaultBrowser) ? phone : app;
  return phone;
}

/** Schedules the month's clicks and orders (times, people, browsers), before any is played. */
function schedule(d, people, start, end) {
  const events = [];
  let clickOrders = 0;
  const order = (person, t, browser, fields = {}) => {
    if (t < end) events.push({ kind: 'order', t, person, browser, ...fields });
  };
  for (const person of people) {
    const { phone, app, computer } = person.browsers;
    if (!app || !d.chance(RATES.clickers / RATES.usesMetaApps)) continue;
    let t = Math.floor(start + d.random() * (end - start));
    const count = 1 + d.poisson(RATES.extraClicksMean);
    for (let i = 0; i < count; i++) {
      if (i > 0) t = Math.floor(d.chance(0.5) ? t + d.random() * 3 * DAY : start + d.random() * (end - start));
      if (t >= end) break;
      const onPhone = !computer || d.chance(RATES.mobileClicks);
      const browser = onPhone ? (d.chance(RATES.inAppBrowser) ? app : phone) : computer;
      const click = { kind: 'click', t, person, browser, n: events.length };
      // Link Tracking Protection: in Safari Private Browsing the fbclid is stripped (never recorded).
      click.private = (browser.kind === 'ios-safari' || browser.kind === 'mac-safari') && d.chance(RATES.privateBrowsing);
      events.push(click);
      if (!d.chance(RATES.purchasePerClick)) continue;
      clickOrders++;
      const delay = d.weighted(Object.entries(RATES.purchaseDelay));
      if (delay === 'session') order(person, t + d.int(2, 50) * MINUTE, browser, { session: click });
      else if (delay === 'sameDay') order(person, t + d.int(60, 20 * 60) * MINUTE, laterBrowser(d, person, browser));
      else order(person, t + d.int(24 * 60, 10 * 24 * 60) * MINUTE, laterBrowser(d, person, browser));
    }
  }
  const organic = Math.round((clickOrders * RATES.organicShare) / (1 - RATES.organicShare));
  for (let i = 0; i < organic; i++) {
    const person = people[d.int(0, people.length - 1)];
    const { phone, computer } = person.browsers;
    order(person, Math.floor(start + d.random() * (end - start)), computer && !d.chance(RATES.organicOnPhone) ? computer : phone);
  }
  // Repeat orders: the same buyer again, 2–20 days later, on a device of theirs.
  for (const e of [...events]) {
    if (e.kind !== 'order' || !d.chance(RATES.repeatOrder)) continue;
    const { phone, computer } = e.person.browsers;
    order(e.person, e.t + d.int(2, 20) * DAY, computer && !d.chance(RATES.organicOnPhone) ? computer : phone, { repeat: true });
  }
  return events.sort((a, b) => a.t - b.t);
}

/**
 * A month of one store's traffic ending at `end`: `events` in time order, each `{ kind: 'click' |
 * 'identify' | 'order', at, person, body }` (the request body, without storeId); a click carries `ref` (its index
 * among recorded clicks); an order carries `truth` (the ref of the buyer's most recent recorded ad click
 * in the window, or null) and `mechanism`, `network`, `repeat`, `ltp`.
 */
export function generateTraffic({ seed, people: count, days = 30, end = Date.now() - HOUR }) {
  const d = dice(seed);
  const { people } = population(d, count);
  const start = end - days * DAY;
  const planned = schedule(d, people, start, end);
  const events = [];
  const recorded = new Map(); // person id → [{ ref, t, browser, visitorId }]
  const stripped = new Map(); // person id → times of clicks LTP hid
  const orders = new Map(); // person id → count
  let refs = 0;
  let orderNo = 0;
  for (const e of planned) {
    const { person, browser, t } = e;
    const day = Math.floor(t / DAY);
    const place = e.session ? e.session.place : placeOf(d, person, browser.device);
    const { ip, network } = e.session ? e.session.address : addressOf(d, person, browser, place, t);
    const isPrivate = e.kind === 'click' ? e.private : Boolean(e.session?.private);
    // A private session's jar is its own and is gone when the session ends.
    const jar = isPrivate ? (e.session?.privateJar ?? {}) : browser.jar;
    if (e.kind === 'click') {
      Object.assign(e, { place, address: { ip, network }, privateJar: isPrivate ? jar : undefined });
      const fbclid = `IwAR${hash(`${seed}|${e.n}`, 24)}`;
      const ids = runTag(d, browser, jar, t, isPrivate ? undefined : fbclid);
      if (isPrivate) {
        stripped.set(person.id, [...(stripped.get(person.id) ?? []), t]);
        continue;
      }
      // A newsletter sign-up on the landing: the tag links this browser to the person's email.
      if (unit(`${seed}|${e.n}|signup`) < RATES.newsletterSignup) events.push(identifyEvent(t, person, ids));
      const ref = refs++;
      const list = recorded.get(person.id) ?? [];
      list.push({ ref, t, browser, visitorId: ids.visitorId });
      recorded.set(person.id, list);
      events.push({
        kind: 'click',
        at: t,
        ref,
        person: person.id,
        body: {
          fbclid,
          landingPage: `https://shop.example/products/p${e.n % 40}?utm_source=facebook&utm_medium=paid_social&fbclid=${fbclid}`,
          referrer: 'https://l.facebook.com/',
          ipAddress: ip,
          userAgent: userAgent(browser, day),
          fingerprint: fingerprintOf(browser, day),
          visitorId: ids.visitorId,
          ...(ids.fbp && { fbp: ids.fbp }),
          timestamp: new Date(t).toISOString(),
        },
      });
      continue;
    }
    const ids = runTag(d, browser, jar, t, undefined);
    // At checkout the shop knows the email: the tag identifies the buying browser, then the order is sent.
    events.push(identifyEvent(t, person, ids));
    const mine = (recorded.get(person.id) ?? []).filter((c) => c.t <= t && t - c.t <= WINDOW);
    const truth = mine[mine.length - 1] ?? null;
    const earlier = orders.get(person.id) ?? 0;
    orders.set(person.id, earlier + 1);
    const hidden = (stripped.get(person.id) ?? []).some((s) => s <= t && t - s <= WINDOW && (!truth || s > truth.t));
    let mechanism = 'organic';
    if (truth) {
      if (truth.browser === browser) mechanism = truth.visitorId === ids.visitorId ? 'same_browser' : 'cookies_lost';
      else if (truth.browser.device === browser.device) mechanism = 'in_app_to_browser';
      else mechanism = 'cross_device';
    }
    events.push({
      kind: 'order',
      at: t,
      person: person.id,
      truth: truth ? truth.ref : null,
      mechanism,
      network,
      repeat: earlier > 0,
      ltp: hidden,
      body: {
        eventType: 'Purchase',
        orderId: `order-${seed}-${orderNo++}`,
        eventValue: d.int(1500, 25_000) / 100,
        currency: 'USD',
        customerData: { email: person.email, ...(person.phone && { phone: person.phone }) },
        ipAddress: ip,
        userAgent: userAgent(browser, day),
        fingerprint: fingerprintOf(browser, day),
        visitorId: ids.visitorId,
        ...(ids.fbp && { fbp: ids.fbp }),
        ...(ids.fbc && { fbc: ids.fbc }),
        eventSourceUrl: 'https://shop.example/checkout/thank-you',
        timestamp: new Date(t).toISOString(),
      },
    });
  }
  return { seed, people: count, start, end, events };
}
