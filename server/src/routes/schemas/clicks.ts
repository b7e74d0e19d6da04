import { Type } from 'typebox';
import { EXAMPLE, HTTP_URL, IP_ADDRESS } from '../../http/openapi.js';
import { ClientTime, Nullable, Timestamp } from '../common.js';
import { ConsentBody, ConsentShown, EXAMPLE_CONSENT, LimitedDataUseBody, LimitedDataUseShown } from './consent.js';

/** The schemas and examples of the click routes (routes/clicks.ts): the body, the item, the answers. */

export const FBCLID_PATTERN = '^[A-Za-z0-9_.-]+$';

export const CLICK_ID_DESCRIPTIONS = {
  gclid: 'Google Ads click id (`gclid` of the landing URL)',
  gbraid: 'Google Ads app-to-web click id on iOS (`gbraid`)',
  wbraid: 'Google Ads web-to-app click id on iOS (`wbraid`)',
  ttclid: 'TikTok click id (`ttclid`)',
  msclkid: 'Microsoft Advertising click id (`msclkid`; forwarded to the microsoft destination, api.md §12)',
  epik: 'Pinterest click id (`epik`; the tag keeps it in `_epik`)',
  ScCid: 'Snapchat click id (`ScCid`; the tag keeps it in `_scclid`)',
  rdt_cid: 'Reddit click id (`rdt_cid`; the tag keeps it in `_rdt_cid`)',
  li_fat_id: 'LinkedIn click id (`li_fat_id`; the tag keeps it in `li_fat_id`)',
} as const;

/** gclid, gbraid, wbraid, ttclid, msclkid, epik, ScCid, rdt_cid, li_fat_id: each 1–500 of [A-Za-z0-9_.-], else `invalid_click_id` (api.md §8). */
export const OTHER_CLICK_ID_FIELDS = Object.fromEntries(
  Object.entries(CLICK_ID_DESCRIPTIONS).map(([kind, description]) => [
    kind,
    Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 500,
        pattern: FBCLID_PATTERN,
        'x-error-code': 'invalid_click_id',
        description: `${description}: 1–500 characters of A–Z, a–z, 0–9, \`_\`, \`.\`, \`-\`, else \`invalid_click_id\`.`,
      }),
    ),
  ]),
) as Record<keyof typeof CLICK_ID_DESCRIPTIONS, ReturnType<typeof Type.Optional<ReturnType<typeof Type.String>>>>;

export const ClickBody = Type.Object(
  {
    fbclid: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 500,
        pattern: FBCLID_PATTERN,
        'x-error-code': 'invalid_fbclid',
        description:
          'Meta’s click id: the `fbclid` query parameter of the landing URL, verbatim (case kept): 1–500 characters of A–Z, a–z, 0–9, `_`, `.`, `-`, else `invalid_fbclid`. At least one click id (fbclid, gclid, gbraid, wbraid, ttclid, msclkid, epik, ScCid, rdt_cid, li_fat_id) is required, here or in `landingPage`’s query; with the store, each is a key of the click: sending one again returns the original click.',
        examples: [EXAMPLE.fbclid],
      }),
    ),
    ...OTHER_CLICK_ID_FIELDS,
    ttp: Type.Optional(
      Type.String({
        maxLength: 256,
        description:
          '(Extension) TikTok’s browser id, the `_ttp` cookie; forwarded to TikTok with the conversions this click wins.',
      }),
    ),
    storeId: Type.String({
      minLength: 1,
      maxLength: 64,
      description:
        'The store the ad led to (active, of the key’s account). With a publishable key it may be left out: the key’s store.',
      examples: [EXAMPLE.storeId],
    }),
    landingPage: Type.String({
      minLength: 1,
      maxLength: 2048,
      ...HTTP_URL,
      description:
        'The URL the ad opened: absolute http(s), at most 2048 characters. Its `utm_source`, `utm_medium`, `utm_campaign`, `utm_content`, `utm_term`, `campaign_id`, `adset_id` and `ad_id` parameters are stored with the click.',
      examples: [EXAMPLE.landingPage],
    }),
    referrer: Type.Optional(
      Type.String({
        maxLength: 2048,
        ...HTTP_URL,
        description: 'The page that linked to the landing page (`document.referrer`): absolute http(s) URL',
        examples: ['https://l.facebook.com/'],
      }),
    ),
    ipAddress: Type.Optional(
      Type.String({
        maxLength: 64,
        ...IP_ADDRESS,
        description:
          'The visitor’s IPv4 or IPv6 address. With `userAgent` it gives the click a derived fingerprint, sha256(ipAddress|userAgent), an attribution signal. Not accepted with a publishable key (the connection’s address is used).',
        examples: [EXAMPLE.ipAddress],
      }),
    ),
    userAgent: Type.Optional(
      Type.String({
        maxLength: 1024,
        description:
          'The visitor’s User-Agent header. Bots are recorded but flagged (`isBot`) and left out of metrics and attribution.',
        examples: [EXAMPLE.userAgent],
      }),
    ),
    timestamp: ClientTime(
      'When the visitor clicked: ISO 8601 with an offset; default now. More than 5 minutes in the future is `invalid_request`; older than 90 days is `invalid_fbclid` (reason `expired`: Meta no longer accepts the fbclid).',
      EXAMPLE.clickTime,
      'click-max-age',
    ),
    fingerprint: Type.Optional(
      Type.String({
        maxLength: 256,
        description:
          '(Extension) The visitor fingerprint the site’s tag computed. It describes a device class (identical phones share it), so as attribution evidence it counts only as much as it is rare among the store’s visitors (api.md §13).',
        examples: [EXAMPLE.fingerprint],
      }),
    ),
    fbp: Type.Optional(
      Type.String({
        maxLength: 256,
        pattern: '^fb\\.\\d\\.\\d+\\.[A-Za-z0-9_-]+$',
        description:
          '(Extension) Meta’s browser id, the `_fbp` cookie: `fb.1.<ms>.<random>`; forwarded to Meta with the conversions this click wins.',
        examples: [EXAMPLE.fbp],
      }),
    ),
    visitorId: Type.Optional(
      Type.String({
        maxLength: 128,
        description:
          '(Extension) The tag’s first-party visitor id, the `_wt_vid` cookie: a conversion from the same browser (same visitorId, fbp or ttp) has same-browser evidence for this click (api.md §13).',
        examples: ['wt.4f9c2a7d1e8b6c3f5a0d9e2b'],
      }),
    ),
    consent: ConsentBody,
    limitedDataUse: LimitedDataUseBody,
  },
  {
    description:
      'An ad click. Unknown fields are ignored. A field sent as null or "" counts as absent (a required one is `missing_required_field`). At least one click id (fbclid, gclid, gbraid, wbraid, ttclid, msclkid, epik, ScCid, rdt_cid, li_fat_id) is required, in the body or in `landingPage`’s query (`x-rules: one-click-id`).',
    'x-rules': ['one-click-id'],
    'x-examples': {
      fromServer: {
        summary: 'From a store backend, with the visitor’s details',
        value: {
          fbclid: EXAMPLE.fbclid,
          storeId: EXAMPLE.storeId,
          landingPage: EXAMPLE.landingPage,
          referrer: 'https://l.facebook.com/',
          ipAddress: EXAMPLE.ipAddress,
          userAgent: EXAMPLE.userAgent,
          timestamp: EXAMPLE.clickTime,
          fingerprint: EXAMPLE.fingerprint,
          fbp: EXAMPLE.fbp,
        },
      },
      minimal: {
        summary: 'The required fields only',
        value: { fbclid: EXAMPLE.fbclid, storeId: EXAMPLE.storeId, landingPage: EXAMPLE.landingPage },
      },
    },
  },
);

export const ClickResult = Type.Object({
  clickId: Type.String({
    description: 'The click’s id (`clk_…`); the original one for a duplicate',
    examples: [EXAMPLE.clickId],
  }),
  fbclid: Type.Optional(Type.String({ description: 'The fbclid, when the click had one', examples: [EXAMPLE.fbclid] })),
  gclid: Type.Optional(Type.String({ description: 'The gclid, when the click had one' })),
  gbraid: Type.Optional(Type.String({ description: 'The gbraid, when the click had one' })),
  wbraid: Type.Optional(Type.String({ description: 'The wbraid, when the click had one' })),
  ttclid: Type.Optional(Type.String({ description: 'The ttclid, when the click had one' })),
  msclkid: Type.Optional(Type.String({ description: 'The msclkid, when the click had one' })),
  epik: Type.Optional(Type.String({ description: 'The epik (Pinterest), when the click had one' })),
  ScCid: Type.Optional(Type.String({ description: 'The ScCid (Snapchat), when the click had one' })),
  rdt_cid: Type.Optional(Type.String({ description: 'The rdt_cid (Reddit), when the click had one' })),
  li_fat_id: Type.Optional(Type.String({ description: 'The li_fat_id (LinkedIn), when the click had one' })),
  tracked: Type.Literal(true, { description: 'Always true: the click is stored' }),
  timestamp: Timestamp('When the click was recorded (the original recording for a duplicate)'),
  duplicate: Type.Boolean({
    description:
      'true when this fbclid was already recorded for the store (in this mode); the original click is returned, counted once',
  }),
});

export const Click = Type.Object({
  clickId: Type.String({ description: 'The click’s id', examples: [EXAMPLE.clickId] }),
  storeId: Type.String({ description: 'The store it landed on', examples: [EXAMPLE.storeId] }),
  fbclid: Nullable(Type.String({ description: 'Meta’s click id; null when the click had none', examples: [EXAMPLE.fbclid] })),
  fbc: Nullable(
    Type.String({
      description: 'Meta’s click id cookie value: fb.1.<click time ms>.<fbclid>; null without an fbclid',
      examples: [EXAMPLE.fbc],
    }),
  ),
  fbp: Nullable(Type.String({ description: 'Meta’s browser id, when sent' })),
  gclid: Nullable(Type.String({ description: 'Google Ads click id, when the click had one' })),
  gbraid: Nullable(Type.String({ description: 'Google Ads gbraid, when the click had one' })),
  wbraid: Nullable(Type.String({ description: 'Google Ads wbraid, when the click had one' })),
  ttclid: Nullable(Type.String({ description: 'TikTok click id, when the click had one' })),
  msclkid: Nullable(Type.String({ description: 'Microsoft Advertising click id, when the click had one' })),
  epik: Nullable(Type.String({ description: 'Pinterest click id, when the click had one' })),
  ScCid: Nullable(Type.String({ description: 'Snapchat click id, when the click had one' })),
  rdt_cid: Nullable(Type.String({ description: 'Reddit click id, when the click had one' })),
  li_fat_id: Nullable(Type.String({ description: 'LinkedIn click id, when the click had one' })),
  ttp: Nullable(Type.String({ description: 'TikTok’s browser id, when sent' })),
  visitorId: Nullable(Type.String({ description: 'The tag’s first-party visitor id (`_wt_vid`), when sent' })),
  landingPage: Type.String({ description: 'The URL the ad opened' }),
  referrer: Nullable(Type.String({ description: 'The referring page, when sent' })),
  ipAddress: Nullable(Type.String({ description: 'The visitor’s IP address, when known' })),
  userAgent: Nullable(Type.String({ description: 'The visitor’s user agent, when sent' })),
  fingerprint: Nullable(Type.String({ description: 'The tag’s visitor fingerprint, when sent' })),
  utm: Type.Object(
    {
      source: Nullable(Type.String()),
      medium: Nullable(Type.String()),
      campaign: Nullable(Type.String()),
      content: Nullable(Type.String()),
      term: Nullable(Type.String()),
    },
    { description: 'The utm_* parameters of the landing page (null when absent)' },
  ),
  campaignId: Nullable(Type.String({ description: 'The landing page’s campaign_id parameter' })),
  adsetId: Nullable(Type.String({ description: 'The landing page’s adset_id parameter' })),
  adId: Nullable(Type.String({ description: 'The landing page’s ad_id parameter' })),
  isBot: Type.Boolean({ description: 'Bot user agents are recorded but excluded from metrics and attribution' }),
  consent: ConsentShown,
  limitedDataUse: LimitedDataUseShown,
  livemode: Type.Boolean({ description: 'true for live data (a wt_live_ key), false for test data' }),
  timestamp: Timestamp('Click time'),
  recordedAt: Timestamp('When the click was recorded'),
});

export const ClickList = Type.Object({
  clicks: Type.Array(Click, { description: 'This page, newest click first' }),
  hasMore: Type.Boolean({ description: 'true when another page follows' }),
  nextCursor: Nullable(Type.String({ description: 'Pass as `cursor` for the next page; null on the last page' })),
});

export const EXAMPLE_CLICK = {
  clickId: EXAMPLE.clickId,
  storeId: EXAMPLE.storeId,
  fbclid: EXAMPLE.fbclid,
  fbc: EXAMPLE.fbc,
  fbp: EXAMPLE.fbp,
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
  visitorId: null,
  landingPage: EXAMPLE.landingPage,
  referrer: 'https://l.facebook.com/',
  ipAddress: EXAMPLE.ipAddress,
  userAgent: EXAMPLE.userAgent,
  fingerprint: EXAMPLE.fingerprint,
  utm: { source: 'facebook', medium: 'paid_social', campaign: 'autumn_sale', content: null, term: null },
  campaignId: '120210000123456789',
  adsetId: null,
  adId: null,
  isBot: false,
  consent: EXAMPLE_CONSENT,
  livemode: true,
  timestamp: EXAMPLE.clickTime,
  recordedAt: EXAMPLE.recordedAt,
};

export const CLICK_NOT_FOUND = {
  clickNotFound: {
    summary: 'No such click in this mode and account',
    code: 'not_found' as const,
    message: `No click ${EXAMPLE.clickId}`,
  },
};

export const ClickParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, description: 'The click’s id', examples: [EXAMPLE.clickId] }),
});
