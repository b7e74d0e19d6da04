// The shape of a year's bench store (bench/year-store.js): the tables and columns it loads, the
// channels and campaigns, and the deterministic ids and values derived from a click's index, so
// that a store of 20M clicks keeps only typed arrays in memory.
import { TABLES } from './bulk-load.js';

export const DAY_MS = 86_400_000;

/** Deterministic pseudo-random numbers (mulberry32), so every run writes the same data. */
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

/** Index of a weighted choice (`cumulative`: running sums of the weights, the last one the total). */
export function pickIndex(random, cumulative) {
  const r = random() * cumulative[cumulative.length - 1];
  let lo = 0;
  let hi = cumulative.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cumulative[mid] > r) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

export const cumulate = (weights) => {
  let sum = 0;
  return weights.map((w) => {
    sum += w;
    return sum;
  });
};

/**
 * The channels of the clicks: the click id kinds each platform's ads add, its UTM tags, and its
 * campaigns. Meta, Google Ads and TikTok have the 200 campaigns with spend (the last five of each
 * get no click: spend without tracked clicks, for tracking health); Microsoft's clicks name
 * campaigns no spend is recorded for.
 */
export const CHANNELS = [
  {
    channel: 'meta',
    weight: 50,
    kinds: [['fbclid', 1]],
    source: 'facebook',
    medium: 'paid_social',
    campaigns: 100,
    base: 23851000000,
  },
  {
    channel: 'google_ads',
    weight: 30,
    kinds: [
      ['gclid', 8],
      ['gbraid', 1],
      ['wbraid', 1],
    ],
    source: 'google',
    medium: 'cpc',
    campaigns: 60,
    base: 19870000000,
  },
  {
    channel: 'tiktok',
    weight: 15,
    kinds: [['ttclid', 1]],
    source: 'tiktok',
    medium: 'paid_social',
    campaigns: 40,
    base: 17400000000000,
  },
  { channel: 'microsoft', weight: 5, kinds: [['msclkid', 1]], source: 'bing', medium: 'cpc', campaigns: 5, base: 51000000 },
].map((c, index) => ({
  ...c,
  index,
  kindWeights: cumulate(c.kinds.map(([, w]) => w)),
  // Campaign popularity falls off as 1/(rank+1); the last five of a channel with spend never get a click.
  campaignWeights: cumulate(
    Array.from({ length: c.campaigns }, (_, i) => (c.channel !== 'microsoft' && i >= c.campaigns - 5 ? 0 : 1 / (i + 1))),
  ),
  spends: c.channel !== 'microsoft',
}));
export const CHANNEL_WEIGHTS = cumulate(CHANNELS.map((c) => c.weight));
export const KINDS = ['fbclid', 'gclid', 'gbraid', 'wbraid', 'ttclid', 'msclkid'];
export const campaignId = (channel, i) => String(CHANNELS[channel].base + i * 7919);

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
/** Base-32 digits of `n`, `width` wide. */
function base32(n, width) {
  let out = '';
  for (let rest = n, i = 0; i < width; i++, rest = Math.floor(rest / 32)) out = ALPHABET[rest % 32] + out;
  return out;
}
/** Time-sortable ids like the service's (prefix, 10 base32 time digits, 16 more), unique per (prefix, n). */
export const idOf = (prefix, ms, n) => `${prefix}_${base32(ms, 10)}${base32(n, 8)}${base32((n * 2654435761) >>> 0, 8)}`;
/** A click id value of `kind` for click `i`, in each platform's style. */
export function clickIdValue(kind, i) {
  const tail = ((i * 2246822519) >>> 0).toString(16).padStart(8, '0');
  switch (kind) {
    case 'fbclid':
      return `IwAR${i.toString(36)}_${tail}`;
    case 'gclid':
      return `Cj0KCQiA${i.toString(36)}${tail}_BwE`;
    case 'gbraid':
      return `0AAAAAD${i.toString(36)}${tail}`;
    case 'wbraid':
      return `CjkKCQ${i.toString(36)}${tail}`;
    case 'ttclid':
      return `E.C.P.${i.toString(36)}${tail}`;
    default:
      return `${tail}${i.toString(16).padStart(24, '0')}`;
  }
}

/** The column an id is kept in on a click; `fbclid` holds `kind:value` for a click without one (migration 0010). */
export const clickKey = (kind, value) => (kind === 'fbclid' ? value : `${kind}:${value}`);

export const CLICK_COLUMNS = [...TABLES.clicks, ...KINDS.filter((k) => k !== 'fbclid'), 'consent'];
export const CONVERSION_COLUMNS = [
  ...TABLES.conversions,
  'ref_ids',
  'forwarding',
  'refunded_minor',
  'consent',
  'fx_currency',
  'fx_rate_date',
  'fx_rate',
  'fx_value_minor',
  'match_quality',
  'attributed_click_ids',
  'customer_key',
];
export const YEAR_TABLES = {
  clicks: CLICK_COLUMNS,
  conversions: CONVERSION_COLUMNS,
  touchpoints: TABLES.touchpoints,
  ad_spend: [...TABLES.ad_spend, 'source'],
  click_ids: ['store_id', 'livemode', 'kind', 'value', 'click_id', 'click_time'],
  attribution_keys: ['day', 'k', 'browser'],
  refunds: [
    'id',
    'store_id',
    'livemode',
    'refund_id',
    'account_id',
    'conversion_id',
    'conversion_time',
    'order_id',
    'amount_minor',
    'currency',
    'refunded_after_minor',
    'refund_time',
    'created_at',
    'reason',
  ],
  destination_jobs: [
    'conversion_id',
    'destination',
    'job_key',
    'kind',
    'account_id',
    'store_id',
    'livemode',
    'route',
    'payload',
    'status',
    'attempts',
    'next_attempt_at',
    'expires_at',
    'claimed_by',
    'last_error',
    'trace_id',
    'created_at',
    'updated_at',
    'sent_at',
  ],
  customers: ['store_id', 'livemode', 'customer_key', 'account_id', 'first_conversion_id', 'first_event_time', 'channel'],
};

/** Consent mixes: most events carry none (all granted); some deny ad storage or user data. */
export const CONSENTS = [
  [null, 85],
  [JSON.stringify({ adStorage: 'denied', adUserData: 'granted', adPersonalization: 'denied' }), 10],
  [JSON.stringify({ adStorage: 'granted', adUserData: 'denied', adPersonalization: 'denied' }), 5],
];
export const CONSENT_WEIGHTS = cumulate(CONSENTS.map(([, w]) => w));

/** The match quality the service records per destination (quality/match-quality.ts), for the keys a conversion carries. */
export function matchQuality(destinations, { email, phone }) {
  const weights = {
    meta: { clickId: 3, email: 3, phone: 1.5, ipUserAgent: 1.5, fbp: 0.5, address: 0.5 },
    google_ads: { clickId: 6, email: 2.5, phone: 1.5 },
    tiktok: { clickId: 3, email: 2.5, phone: 1.5, ipUserAgent: 1.5, ttp: 1.5 },
  };
  const out = {};
  for (const [destination, clickId] of destinations) {
    const have = { clickId, email, phone, ipUserAgent: true };
    const all = Object.keys(weights[destination]);
    const keys = all.filter((k) => have[k]);
    const score = keys.reduce((sum, k) => sum + weights[destination][k], 0);
    out[destination] = { score, keys, missing: all.filter((k) => !have[k]), warnings: [] };
  }
  return JSON.stringify(out);
}
