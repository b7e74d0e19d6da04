// The people of the attribution-accuracy generator (generate.js): households, phones (Safari or
// Chrome, and Meta's in-app browser when they use Facebook or Instagram) and computers, each
// browser with its user agent and the tag's fingerprint, drawn from world.js's rates.
import { createHash } from 'node:crypto';
import { ANDROID_MODELS, DESKTOP_SCREENS, IOS_VERSIONS, IPHONES, RATES } from './world.js';

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

/** Seeded pseudo-random numbers in [0, 1) (mulberry32, as bench/attribution-store.js). */
export function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const hash = (text, n = 16) => createHash('sha256').update(text).digest('hex').slice(0, n);

/** The random helpers of one run. */
export function dice(seed) {
  const random = rng(seed);
  const chance = (p) => random() < p;
  const int = (lo, hi) => lo + Math.floor(random() * (hi - lo + 1));
  const weighted = (entries) => {
    let r = random() * entries.reduce((a, [, w]) => a + w, 0);
    for (const [value, w] of entries) {
      r -= w;
      if (r < 0) return value;
    }
    return entries[entries.length - 1][0];
  };
  const poisson = (mean) => {
    let k = 0;
    for (let p = Math.exp(-mean), s = random(); s > p; s *= random()) k++;
    return k;
  };
  const token = (n) => {
    let out = '';
    while (out.length < n) out += Math.floor(random() * 36 ** 6).toString(36);
    return out.slice(0, n);
  };
  const hex4 = () => int(0, 0xffff).toString(16);
  return { random, chance, int, weighted, poisson, token, hex4 };
}

/** The user agent of a browser on a day (versions move: Chrome every 4 weeks, Meta's apps weekly). */
export function userAgent(b, absoluteDay) {
  // Versions counted from 2026-01-01 (day 20454 since 1970), so the numbers look like real ones.
  const day = absoluteDay - 20_454;
  const chrome = 140 + Math.floor((day + b.versionPhase) / RATES.browserUpdateDays);
  const app = 480 + Math.floor((day + b.versionPhase) / 7);
  const ios = b.ios;
  const iosDots = ios.replace(/_/g, '.');
  const safari = ios.split('_').slice(0, 2).join('.');
  switch (b.kind) {
    case 'ios-safari':
      return `Mozilla/5.0 (iPhone; CPU iPhone OS ${ios} like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/${safari} Mobile/15E148 Safari/604.1`;
    case 'ios-chrome':
      return `Mozilla/5.0 (iPhone; CPU iPhone OS ${ios} like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/${chrome}.0.6778.73 Mobile/15E148 Safari/604.1`;
    case 'ios-fb':
      return `Mozilla/5.0 (iPhone; CPU iPhone OS ${ios} like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/${app}.0.0.45.108;FBBV/6${app}1234;FBDV/${b.model};FBMD/iPhone;FBSN/iOS;FBSV/${iosDots};FBSS/3;FBID/phone;FBLC/${b.lang.replace('-', '_')};FBOP/5;FBRV/0]`;
    case 'ios-ig':
      return `Mozilla/5.0 (iPhone; CPU iPhone OS ${ios} like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram ${app - 120}.0.0.28.110 (${b.model}; iOS ${ios}; ${b.lang.replace('-', '_')}; en; scale=3.00; ${b.screen}; 6${app}77)`;
    case 'android-chrome':
      return `Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${chrome}.0.0.0 Mobile Safari/537.36`;
    case 'android-samsung':
      return `Mozilla/5.0 (Linux; Android 14; SAMSUNG ${b.model}) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/26.0 Chrome/122.0.0.0 Mobile Safari/537.36`;
    case 'android-fb':
      return `Mozilla/5.0 (Linux; Android 14; ${b.model} Build/UP1A.231005.007; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/${chrome}.0.6778.135 Mobile Safari/537.36 [FB_IAB/FB4A;FBAV/${app}.0.0.44.109;]`;
    case 'android-ig':
      return `Mozilla/5.0 (Linux; Android 14; ${b.model} Build/UP1A.231005.007; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/${chrome}.0.6778.135 Mobile Safari/537.36 Instagram ${app - 120}.0.0.37.89 Android (34/14; 420dpi; ${b.screen}; samsung; ${b.model}; ${b.lang.replace('-', '_')}; 6${app}88)`;
    case 'win-chrome':
      return `Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${chrome}.0.0.0 Safari/537.36`;
    case 'mac-chrome':
      return `Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${chrome}.0.0.0 Safari/537.36`;
    case 'win-edge':
      return `Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${chrome}.0.0.0 Safari/537.36 Edg/${chrome}.0.0.0`;
    case 'mac-safari':
      return 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15';
    default:
      return `Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:${chrome - 98}.0) Gecko/20100101 Firefox/${chrome - 98}.0`;
  }
}

/** The tag's fingerprint (packages/tag/src/fingerprint.ts): user agent, language, time zone, screen, cores, memory. */
export const fingerprintOf = (b, day) =>
  hash([userAgent(b, day), b.lang, b.timezone, b.screen, b.cores, b.memory].join('\u001f'));

/** Builds the people, their households, devices and browsers. */
export function population(d, count) {
  const people = [];
  const households = [];
  const offices = [];
  const campuses = Array.from({ length: RATES.regions }, (_, region) => ({
    ipv4: `198.18.${10 + region}.${d.int(1, 254)}`,
    ipv6: d.chance(RATES.sharedNetworkIpv6) ? `2001:db8:ca${region}:${d.hex4()}` : null,
    kind: 'campus',
  }));
  let officeLeft = 0;
  let office;
  while (people.length < count) {
    const region = d.int(0, RATES.regions - 1);
    const size = d.weighted(RATES.householdSizes);
    const household = {
      region,
      timezone: d.weighted(RATES.timezones),
      lang: d.chance(RATES.spanishLanguage) ? 'es-US' : 'en-US',
      ipv6: d.chance(RATES.homeIpv6) ? `2600:${d.hex4()}:${d.hex4()}:${d.hex4()}` : null,
    };
    households.push(household);
    for (let m = 0; m < size && people.length < count; m++) {
      const id = people.length;
      const carrier = d.weighted(RATES.carriers);
      let work = null;
      if (d.chance(RATES.campusShare)) work = campuses[region];
      else if (d.chance(RATES.officeShare / (1 - RATES.campusShare))) {
        if (officeLeft <= 0) {
          officeLeft = d.int(...RATES.officeCustomers);
          office = {
            ipv4: `198.19.${d.int(0, 255)}.${d.int(1, 254)}`,
            ipv6: d.chance(RATES.sharedNetworkIpv6) ? `2001:db8:${d.hex4()}:${d.hex4()}` : null,
            kind: 'office',
          };
          offices.push(office);
        }
        officeLeft--;
        work = office;
      }
      const person = {
        id,
        household,
        region,
        carrier,
        phoneIpv6: d.chance(RATES.carrierIpv6[carrier]),
        work,
        email: `person${id}.${d.token(6)}@example.com`,
        phone: d.chance(RATES.phoneAtCheckout) ? `+1555${String(d.int(0, 9_999_999)).padStart(7, '0')}` : null,
        sessionPhase: d.random() * RATES.mobileSessionHours * HOUR,
        browsers: {},
      };
      const base = { person: id, lang: household.lang, timezone: household.timezone, versionPhase: d.int(0, 27) };
      const ios = d.chance(RATES.iosShare);
      const iosVersion = d.weighted(IOS_VERSIONS);
      const model = ios ? d.weighted(IPHONES) : d.weighted(ANDROID_MODELS);
      const phone = {
        ...base,
        device: 'phone',
        model,
        ios: iosVersion,
        screen: ios ? `screen-${model}` : `screen-${Math.floor(ANDROID_MODELS.findIndex(([m]) => m === model) / 4)}`,
        cores: ios ? 6 : 8,
        memory: ios ? '' : String([4, 6, 8][d.int(0, 2)]),
      };
      const browser = (fields) => ({ ...phone, ...fields, id: `b${id}.${fields.kind}`, jar: {} });
      person.browsers.phone = browser({
        kind: ios
          ? d.chance(RATES.iosSafari)
            ? 'ios-safari'
            : 'ios-chrome'
          : d.chance(RATES.androidChrome)
            ? 'android-chrome'
            : 'android-samsung',
        itp: ios,
      });
      if (d.chance(RATES.usesMetaApps)) {
        const app = d.chance(RATES.facebookOverInstagram) ? 'fb' : 'ig';
        person.browsers.app = browser({ kind: `${ios ? 'ios' : 'android'}-${app}`, itp: ios });
      }
      if (d.chance(RATES.ownsComputer)) {
        const name = d.weighted(RATES.desktopBrowsers);
        const mac = name === 'safari' || d.chance(0.2);
        const kind =
          name === 'safari'
            ? 'mac-safari'
            : name === 'chrome'
              ? mac
                ? 'mac-chrome'
                : 'win-chrome'
              : name === 'edge'
                ? 'win-edge'
                : 'firefox';
        person.browsers.computer = {
          ...base,
          id: `b${id}.computer`,
          device: 'computer',
          kind,
          ios: '',
          model: '',
          screen: d.weighted(DESKTOP_SCREENS),
          cores: [4, 8, 12, 16][d.int(0, 3)],
          memory: '8',
          itp: kind === 'mac-safari',
          jar: {},
        };
      }
      for (const b of Object.values(person.browsers)) b.blocksPixel = d.chance(RATES.blocksMetaPixel);
      people.push(person);
    }
  }
  return { people, households, offices, campuses };
}
