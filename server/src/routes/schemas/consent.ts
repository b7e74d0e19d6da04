import { Type } from 'typebox';
import { US_STATE_CODES } from '../../consent/consent.js';

// The consent fields of clicks, conversions (and batch events) and stores (api.md §10; docs/consent.md).

const State = (description: string) =>
  Type.Enum(['granted', 'denied'], { description: `${description}: \`granted\` or \`denied\``, examples: ['denied'] });

const fields = {
  adStorage: State(
    'Ad storage (Consent Mode `ad_storage`): denied → the click ids of this event are used for attribution but never sent to an ad platform, nor inside a page URL sent',
  ),
  adUserData: State(
    'Ad user data (Consent Mode `ad_user_data`): denied → no hashed customer data, IP, user agent, fbp, ttp or fingerprint of this event is sent to any ad platform; Google gets `consent.adUserData: DENIED`',
  ),
  adPersonalization: State(
    'Ad personalization (Consent Mode `ad_personalization`): stored and shown; no destination of this version has a field for it',
  ),
};

/** An event's consent: each field left out is the store's `defaultConsent` (granted unless set). */
export const ConsentBody = Type.Optional(
  Type.Object(
    {
      adStorage: Type.Optional(fields.adStorage),
      adUserData: Type.Optional(fields.adUserData),
      adPersonalization: Type.Optional(fields.adPersonalization),
    },
    {
      additionalProperties: false,
      description:
        '(Consent as data, api.md §10) The visitor’s consent when the event happened. A field left out is the store’s `defaultConsent` (granted unless the store sets it). Applied by every destination at send time, on every retry; attribution and metrics are not affected. Unknown fields are refused (`unknown_field`).',
      examples: [{ adStorage: 'denied', adUserData: 'denied', adPersonalization: 'denied' }],
    },
  ),
);

/** `XY` in either case, as a pattern (JSON Schema patterns have no flags). */
const anyCase = (code: string) => [...code].map((c) => `[${c}${c.toLowerCase()}]`).join('');
const US = `^${anyCase('US')}$`;
const US_STATE = `^(?:${US_STATE_CODES.map(anyCase).join('|')})$`;

/** Limited data use (US state privacy laws): `true`, or where the visitor is. */
export const LimitedDataUseBody = Type.Optional(
  Type.Union(
    [
      Type.Object(
        {
          country: Type.Optional(
            Type.String({
              pattern: US,
              'x-error-message': 'must be US: limited data use applies to US states only',
              'x-error-reason': 'unknown_value',
              description: 'ISO 3166 alpha-2 country: `US` (the only one with LDU; either case)',
              examples: ['US'],
            }),
          ),
          state: Type.Optional(
            Type.String({
              pattern: US_STATE,
              'x-error-message': "must be a US state's 2-letter code like CA",
              'x-error-reason': 'unknown_value',
              description: 'The visitor’s US state or DC, its 2-letter code (`CA`; either case)',
              examples: ['CA'],
            }),
          ),
        },
        { additionalProperties: false },
      ),
      // After the object: a bad field of an object is reported on that field (the first alternative's error is the one shown).
      Type.Literal(true, { description: 'Limited data use, the visitor’s place decided by Meta (geolocation)' }),
    ],
    {
      description:
        '(Consent as data, api.md §10) Limited Data Use for US state privacy laws: `true` (Meta geolocates the visitor) or `{country: "US", state?: "CA"}`. Meta gets `data_processing_options: ["LDU"]` with the country and state as Meta’s codes (0 = geolocate). Leave out when it does not apply.',
      examples: [{ country: 'US', state: 'CA' }],
    },
  ),
);

/** The consent of an event as the API shows it (resolved: every field). */
export const ConsentShown = Type.Object(
  { adStorage: fields.adStorage, adUserData: fields.adUserData, adPersonalization: fields.adPersonalization },
  { description: 'The consent stored with the event (the store’s default filled in when it was recorded)' },
);

export const LimitedDataUseShown = Type.Optional(
  Type.Union([Type.Literal(true), Type.Object({ country: Type.Optional(Type.String()), state: Type.Optional(Type.String()) })], {
    description: 'Only when limited data use was asked for: `true` or `{country, state}` (upper-case)',
  }),
);

/** A store's default consent, for events that leave a field out (PATCH with null: all granted again). */
export const DefaultConsentBody = Type.Object(
  {
    adStorage: Type.Optional(fields.adStorage),
    adUserData: Type.Optional(fields.adUserData),
    adPersonalization: Type.Optional(fields.adPersonalization),
  },
  {
    additionalProperties: false,
    description:
      'The consent of events that do not carry it (each field left out: granted). E.g. a store whose visitors are in the EEA and whose banner reports consent with every event may set all three to `denied`, so an event sent without consent is never shared.',
    examples: [{ adStorage: 'denied', adUserData: 'denied', adPersonalization: 'denied' }],
  },
);

export const DefaultConsentShown = Type.Object(
  { adStorage: fields.adStorage, adUserData: fields.adUserData, adPersonalization: fields.adPersonalization },
  { description: 'The consent events of this store get for the fields they leave out (granted unless set)' },
);

export const EXAMPLE_CONSENT = { adStorage: 'granted', adUserData: 'granted', adPersonalization: 'granted' } as const;
