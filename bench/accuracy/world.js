// The assumptions of the attribution-accuracy generator (bench/accuracy/generate.js): every rate
// the synthetic store's traffic is drawn from, each beside its source. They were written down
// from published figures before the model was calibrated, and were not changed to suit it
// (docs/attribution.md, "Guarding against fitting"). The figures were recalled, not re-checked
// online while writing (this machine has no web access): "recalled" says so; "assumption" marks a
// rate with no published figure behind it, chosen as a plausible middle.

/** The share of each value; each entry [value, weight]. */

export const RATES = {
  // — Who and what devices —
  /** StatCounter GlobalStats, mobile OS market share, United States, 2024 (recalled): iOS ~57 %, Android ~43 %. */
  iosShare: 0.57,
  /** Pew Research Center, "Mobile Fact Sheet" (2024, recalled): ~77 % of US adults own a desktop or laptop computer. */
  ownsComputer: 0.77,
  /** Pew Research Center, "Americans' Social Media Use" (Jan 2024): 68 % use Facebook, 47 % Instagram; the union assumed ~75 %. */
  usesMetaApps: 0.75,
  /** Of Meta app users, the app they mostly use (same Pew figures: Facebook larger). */
  facebookOverInstagram: 0.6,
  /** StatCounter, mobile browser share US 2024 (recalled): on iOS Safari ~90 % of browsing (Chrome ~10 %). */
  iosSafari: 0.9,
  /** On Android: Chrome ~85 %, Samsung Internet ~15 % (StatCounter, US, recalled). */
  androidChrome: 0.85,
  /** StatCounter desktop browser share US 2024 (recalled): Chrome 65, Edge 13, Safari 12, Firefox 7 (rest folded in). */
  desktopBrowsers: [
    ['chrome', 65],
    ['edge', 13],
    ['safari', 12],
    ['firefox', 7],
  ],
  /** US Census Bureau, "America's Families and Living Arrangements: 2023": households of 1, 2, 3, 4, 5+ people. */
  householdSizes: [
    [1, 28],
    [2, 35],
    [3, 15],
    [4, 13],
    [5, 9],
  ],
  /** Time zones of the US population (Census 2020, recalled): Eastern 47, Central 29, Mountain 7, Pacific 17. */
  timezones: [
    ['America/New_York', 47],
    ['America/Chicago', 29],
    ['America/Denver', 7],
    ['America/Los_Angeles', 17],
  ],
  /** Browser language: en-US, or es-US for Spanish-first households (Census ACS: ~13 % speak Spanish at home; assumption: 7 % set it). */
  spanishLanguage: 0.07,
  /** Metro areas the store's customers live in (assumption): CGNAT pools and campuses are regional. */
  regions: 8,

  // — Networks —
  /** US mobile subscriptions by carrier 2024 (company reports, recalled): Verizon ~35, T-Mobile ~32, AT&T ~33. */
  carriers: [
    ['verizon', 35],
    ['tmobile', 32],
    ['att', 33],
  ],
  /**
   * Share of a carrier's phone traffic over IPv6 (World IPv6 Launch measurements, 2024, recalled:
   * T-Mobile USA ~95 %, Verizon Wireless ~85 %, AT&T ~70 %). A phone on IPv6 gets a /64 of its own
   * per data session (3GPP TS 23.401: one /64 per PDN connection); on IPv4 it is behind CGNAT.
   */
  carrierIpv6: { verizon: 0.85, tmobile: 0.95, att: 0.7 },
  /**
   * Public IPv4 addresses of one carrier's CGNAT pool in one metro area (assumption: a /23; RFC 6888
   * sets no ratio; Cloudflare's 2025 CGNAT study says a CGNAT address commonly carries 100+ devices).
   * Each data session takes a random address of the pool.
   */
  cgnatPoolSize: 512,
  /** Hours a mobile data session (and its address) lasts (assumption: idle timers and handovers; a few hours). */
  mobileSessionHours: 4,
  /** Google's IPv6 adoption statistics, United States 2024 (recalled): ~50 % of users reach Google over IPv6. */
  homeIpv6: 0.5,
  /** Chance a home's IPv4 address changes on a given day (assumption: residential leases are sticky, ~monthly). */
  homeIpChangePerDay: 1 / 30,
  /**
   * Workers whose weekday daytime is on an office network (BLS American Time Use Survey 2023 and
   * Pew 2023 telework figures, recalled: ~60 % of employed adults (~60 % of adults) work on site at
   * least part time): 0.35 of people. An office's store customers share its NAT address.
   */
  officeShare: 0.35,
  /** Store customers per office (assumption: offices of 20–2,000 people, a few of them the store's customers). */
  officeCustomers: [2, 30],
  /** Students on a campus network (NCES: ~19 M college students, ~6 % of the population). Campuses per region: 1. */
  campusShare: 0.06,
  /** Campus and office networks that give IPv6, one /64 shared by a whole network segment (assumption). */
  sharedNetworkIpv6: 0.2,
  /** Where a phone is when it is used: home Wi-Fi, cellular, office/campus Wi-Fi (assumption from ATUS time use). */
  phoneAt: { home: 0.55, cellular: 0.3, work: 0.15 },
  /** Where a computer is when it is used (assumption). */
  computerAt: { home: 0.7, work: 0.3 },

  // — Ad clicks —
  /** Share of people who click one of the store's Meta ads in the month (assumption for a mid-size store). */
  clickers: 0.35,
  /** Clicks per clicker: 1 + Poisson(mean) (assumption: retargeting shows the ad again). */
  extraClicksMean: 1,
  /** Share of Meta ad clicks on mobile (Meta 10-K: ~95 % of ad revenue from mobile; clicks assumed 0.9). */
  mobileClicks: 0.9,
  /**
   * Mobile Meta ad clicks that open in Meta's in-app browser (Meta Help Center: links open in the
   * in-app browser unless the user chooses otherwise; assumption 0.9). Its cookie jar is the app's
   * own, not Safari's or Chrome's.
   */
  inAppBrowser: 0.9,
  /**
   * Safari Private Browsing share of Safari ad-click visits (assumption: 0.05). Link Tracking
   * Protection (Apple, iOS 17 / WWDC 2023) strips fbclid there: the click is never recorded, and
   * the private session's cookies are gone when it ends.
   */
  privateBrowsing: 0.05,
  /** Ad blockers that block Meta's pixel (GWI / DataReportal "Digital 2024": ~30 % of users block ads; assumption: so _fbp never appears). Our tag is first-party. */
  blocksMetaPixel: 0.3,

  /**
   * Visits on which the shop learns the visitor's email before any purchase — a newsletter sign-up
   * form — and the tag calls `waytrack('identify', …)` (api.md §13): Sumo's analysis of ~2 billion
   * pop-up views (2016, recalled): 3.09 % of views signed up on average. Applied to ad landings.
   * Logins are not modelled (assumption: a store's first purchase needs no account, and a logged-in
   * returning buyer's browser is already linked by its earlier checkout). At checkout the shop
   * always knows the email: the tag identifies the buying browser (every purchase).
   */
  newsletterSignup: 0.0309,

  // — Purchases —
  /** Clicks that lead to a purchase (WordStream 2024 Facebook ads benchmarks, recalled: ~8–9 % conversion rate; 0.08). */
  purchasePerClick: 0.08,
  /** When a click's purchase happens: same session (minutes), same day (hours), later (1–10 days) (assumption). */
  purchaseDelay: { session: 0.45, sameDay: 0.25, later: 0.3 },
  /**
   * Criteo, "State of Cross-Device Commerce" (US, H2 2016): 31 % of online transactions involve two or
   * more devices. Here: a later purchase (not in the click's session) by someone with a computer
   * happens on the other device with this chance.
   */
  crossDevice: 0.31,
  /** A later purchase after an in-app click, on the phone: in the phone's own browser (not the app's), assumption 0.75. */
  inAppToDefaultBrowser: 0.75,
  /** Orders with no ad click before them (the store: ~45 %); organic orders are added at 45/55 of click orders. */
  organicShare: 0.45,
  /** Organic orders on the phone's browser vs a computer (Salesforce Shopping Index 2024, recalled: ~65 % of orders on mobile). */
  organicOnPhone: 0.65,
  /** Another order by the same buyer 2–20 days later (assumption; Shopify: ~27 % repeat within a year). */
  repeatOrder: 0.1,
  /** Checkouts that collect a phone number (assumption). Email: every order. */
  phoneAtCheckout: 0.4,

  // — Cookies —
  /**
   * WebKit ITP 2.1 (Feb 2019): cookies written by script (document.cookie) expire at most 7 days
   * after being written; ITP 2.2 (Apr 2019): 1 day when the page was reached from a tracker-
   * classified site with link decoration (an fbclid from Facebook). WebKit 2020 ("Full Third-Party
   * Cookie Blocking and More"): ITP is on in every app's WKWebView, so in Meta's iOS in-app browser
   * too. The tag writes _fbc, _fbp and _wt_vid by script.
   */
  itpCapDays: 7,
  itpDecoratedCapDays: 1,
  /** Chromium and Firefox keep script cookies as written: _fbc/_fbp 90 days, _wt_vid 400 days. */
  fbCookieDays: 90,
  visitorCookieDays: 400,
  /** Browsers updating to a new version (new user agent) during the month (Chrome ships every 4 weeks). */
  browserUpdateDays: 28,
};

/** iPhone models in use (the screen and user agent class) with shares (assumption after StatCounter/Counterpoint 2024). */
export const IPHONES = [
  ['iPhone15,2', 14],
  ['iPhone15,3', 10],
  ['iPhone14,5', 14],
  ['iPhone14,7', 12],
  ['iPhone16,1', 10],
  ['iPhone16,2', 10],
  ['iPhone13,2', 12],
  ['iPhone12,1', 10],
  ['iPhone17,1', 8],
];
/** iOS versions in use (Apple's App Store figures, recalled: most on the latest two). The Safari UA carries it. */
export const IOS_VERSIONS = [
  ['18_1', 30],
  ['18_0', 15],
  ['17_6_1', 25],
  ['17_5_1', 10],
  ['18_2', 20],
];
/** Android models (their screens and deviceMemory differ; Chrome's reduced UA hides the model). */
export const ANDROID_MODELS = Array.from({ length: 40 }, (_, i) => [`SM-A${100 + i * 7}`, 40 - i]);
/** Screens of desktops (StatCounter desktop screen resolution US, recalled: 1920×1080 ~ a quarter). */
export const DESKTOP_SCREENS = [
  ['1920x1080', 24],
  ['1536x864', 10],
  ['1440x900', 9],
  ['2560x1440', 9],
  ['1366x768', 8],
  ['1280x720', 5],
  ['1680x1050', 5],
  ['3840x2160', 4],
  ['1600x900', 4],
  ['other', 22],
];
