import { Type } from 'typebox';
import { EXAMPLE } from '../../http/openapi.js';
import { Timestamp } from '../common.js';

/** The schemas and examples of POST /v1/track/identify (routes/identify.ts; api.md §13). */

const EMAIL_HASH = '3f3b9a4c1e0d6b8f2a7c5e9d1b4a6c8e0f2d4b6a8c0e2f4a6b8d0c2e4f6a8b0c';

/** `pattern`: what the value must hold for anything to be left once normalized (else nothing could be hashed). */
const Identity = (description: string, example: string, pattern: string) =>
  Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 256,
      pattern,
      description: `${description} Or its SHA-256 hex (64 hex digits) as the browser tag sends it: taken as it is. Only the hash is stored; it never reaches any ad platform from here.`,
      examples: [example],
    }),
  );

export const IdentifyBody = Type.Object(
  {
    storeId: Type.String({
      minLength: 1,
      maxLength: 64,
      description:
        'The store the visitor is on (active, of the key’s account). With a publishable key it may be left out: the key’s store.',
      examples: [EXAMPLE.storeId],
    }),
    visitorId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        description: 'The tag’s first-party visitor id, the `_wt_vid` cookie (`window.waytrack.identifiers().visitorId`).',
        examples: ['wt.4f9c2a7d1e8b6c3f5a0d9e2b'],
      }),
    ),
    fbp: Type.Optional(
      Type.String({
        maxLength: 256,
        pattern: '^fb\\.\\d\\.\\d+\\.[A-Za-z0-9_-]+$',
        description: 'Meta’s browser id, the `_fbp` cookie: `fb.1.<ms>.<random>`.',
        examples: [EXAMPLE.fbp],
      }),
    ),
    ttp: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'TikTok’s browser id, the `_ttp` cookie.' })),
    email: Identity(
      'The visitor’s email: trimmed and lower-cased, then SHA-256 hashed (as a conversion’s `customerData.email`); at least one character that is not a space.',
      EMAIL_HASH,
      '\\S',
    ),
    phone: Identity(
      'The visitor’s phone: digits only with the country calling code (a leading `00` dropped), then SHA-256 hashed; at least one digit other than 0.',
      '+1 (650) 555-1212',
      '[1-9]',
    ),
  },
  {
    description:
      'A browser and the person using it. At least one browser id (visitorId, fbp, ttp: `x-rules: one-browser-id`) and at least one of email and phone (`x-rules: one-identity`), else `missing_required_field` with `details.anyOf`. Unknown fields are ignored; a field sent as null or "" counts as absent.',
    'x-rules': ['one-browser-id', 'one-identity'],
    'x-examples': {
      fromTag: {
        summary: 'From the browser tag: hashes only',
        value: { storeId: EXAMPLE.storeId, visitorId: 'wt.4f9c2a7d1e8b6c3f5a0d9e2b', fbp: EXAMPLE.fbp, email: EMAIL_HASH },
      },
      fromServer: {
        summary: 'From a store backend, in clear (hashed on arrival)',
        value: {
          storeId: EXAMPLE.storeId,
          visitorId: 'wt.4f9c2a7d1e8b6c3f5a0d9e2b',
          email: 'Jane.Doe@Example.com ',
          phone: '+1 650 555 1212',
        },
      },
    },
  },
);

export const IdentifyResult = Type.Object({
  storeId: Type.String({ description: 'The store the links belong to', examples: [EXAMPLE.storeId] }),
  identified: Type.Literal(true, { description: 'Always true: the links are stored' }),
  links: Type.Integer({
    minimum: 1,
    maximum: 2,
    description: 'The links this call stands for: one per hash sent (email, phone)',
  }),
  duplicate: Type.Boolean({
    description: 'true when every link was already recorded for this browser (only its last-seen time moved)',
  }),
  timestamp: Timestamp('When the links were recorded (or seen again)'),
});
