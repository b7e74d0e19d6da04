import { OTHER_CLICK_ID_KINDS } from '../click-channel.js';
import type { ClicksTable, ConversionsTable } from '../db/schema.js';

/**
 * Consent as data (api.md §10; docs/consent.md). An event carries the visitor's consent
 * (`consent: {adStorage, adUserData, adPersonalization}`, each `granted | denied`; a field left
 * out is the store's `defaultConsent`, itself granted unless set) and optionally
 * `limitedDataUse`. The consent is resolved once, when the event is recorded, and stored with
 * it; every destination's payload builder calls `consentView` in one place, so what leaves is
 * decided by the stored consent — the same on every retry and resend.
 */
export type ConsentState = 'granted' | 'denied';

export interface Consent {
  adStorage: ConsentState;
  adUserData: ConsentState;
  adPersonalization: ConsentState;
}

export type ConsentInput = Partial<Consent>;

/** `true` (Meta geolocates the visitor), or the visitor's US state when the site knows it. */
export type LimitedDataUse = true | { country?: string; state?: string };

export const CONSENT_FIELDS = ['adStorage', 'adUserData', 'adPersonalization'] as const;

export const ALL_GRANTED: Consent = Object.freeze({
  adStorage: 'granted',
  adUserData: 'granted',
  adPersonalization: 'granted',
}) as Consent;

/** Each field: the event's, else the store's default, else granted. */
export function resolveConsent(given: ConsentInput | undefined, storeDefault: ConsentInput | undefined): Consent {
  const resolved = { ...ALL_GRANTED };
  for (const field of CONSENT_FIELDS) {
    const value = given?.[field] ?? storeDefault?.[field];
    if (value === 'denied' || value === 'granted') resolved[field] = value;
  }
  return resolved;
}

const isAllGranted = (consent: Consent) => CONSENT_FIELDS.every((field) => consent[field] === 'granted');

/**
 * The stored form: null when everything is granted (nearly every event, and every event
 * recorded before consent existed), else the JSON of the resolved consent.
 */
export function consentColumn(consent: Consent): string | null {
  return isAllGranted(consent) ? null : JSON.stringify(consent);
}

/** A stored consent (null: all granted). */
export function consentOf(column: string | null | undefined): Consent {
  if (!column) return { ...ALL_GRANTED };
  return resolveConsent(JSON.parse(column) as ConsentInput, undefined);
}

/** A store's `default_consent` column as the fields it sets (null: none, all granted). */
export function storeDefaultOf(column: string | null | undefined): ConsentInput | undefined {
  return column ? (JSON.parse(column) as ConsentInput) : undefined;
}

/** Limited data use as stored: null when not asked for; `true`, or `{country, state}` upper-cased. */
export function limitedDataUseColumn(value: LimitedDataUse | undefined): string | null {
  if (value === undefined) return null;
  if (value === true) return 'true';
  const state = value.state?.toUpperCase();
  // A state is a US state: the country is the United States even when not given.
  const country = value.country?.toUpperCase() ?? (state ? 'US' : undefined);
  return JSON.stringify({ ...(country && { country }), ...(state && { state }) });
}

export function limitedDataUseOf(column: string | null | undefined): LimitedDataUse | undefined {
  if (!column) return undefined;
  const value = JSON.parse(column) as LimitedDataUse | Record<string, never>;
  return value === true ? true : (value as { country?: string; state?: string });
}

/** The 50 states and DC: limited data use is about US state privacy laws. */
export const US_STATE_CODES =
  'AL AK AZ AR CA CO CT DE DC FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY'.split(
    ' ',
  );

/**
 * Meta's state codes for Limited Data Use (`data_processing_options_state`), as Meta documents
 * them; any other state is sent as 0: Meta then decides from the event's location.
 */
const META_STATE_CODES: Record<string, number> = { CA: 1000, CO: 1001, CT: 1002 };

export interface MetaProcessingOptions {
  data_processing_options: ['LDU'];
  data_processing_options_country: number;
  data_processing_options_state: number;
}

/** Meta's fields for limited data use: country 1 (US) or 0 (geolocate), state Meta's code or 0. */
export function metaProcessingOptions(value: LimitedDataUse | undefined): MetaProcessingOptions | undefined {
  if (value === undefined) return undefined;
  const place = value === true ? {} : value;
  return {
    data_processing_options: ['LDU'],
    data_processing_options_country: place.country === 'US' ? 1 : 0,
    data_processing_options_state: place.country === 'US' && place.state ? (META_STATE_CODES[place.state] ?? 0) : 0,
  };
}

/** Query parameters that carry an ad click id (or a cross-domain copy of one): removed from URLs sent without ad storage. */
export const CLICK_ID_PARAMETERS = [
  'fbclid',
  'gclid',
  'gbraid',
  'wbraid',
  'dclid',
  'gclsrc',
  'ttclid',
  'msclkid',
  'epik',
  'ScCid',
  'rdt_cid',
  'li_fat_id',
  '_gl',
];

/** The URL without its click-id parameters (anything else is kept as written); a URL that does not parse is dropped. */
export function withoutClickIds(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  const present = CLICK_ID_PARAMETERS.filter((name) => parsed.searchParams.has(name));
  if (present.length === 0) return url;
  for (const name of present) parsed.searchParams.delete(name);
  return parsed.toString();
}

/** What a destination may see of a conversion and its attributed click, under their stored consent (`CustomerData`: the request's raw customer data, customer-data.ts). */
export interface ConsentView<CustomerData = unknown> {
  /** The conversion with what may not be sent blanked: hashed customer data, IP, UA, fbp, ttp, fingerprint; named click ids; the URL's click ids. */
  conversion: ConversionsTable;
  /** The attributed click likewise (its click ids blanked without ad storage, its browser data without user-data consent). */
  click: ClicksTable | undefined;
  /** The request's raw customer data (while it is recorded), or undefined without user-data consent. */
  customerData: CustomerData | undefined;
  /** Google's `consent.adUserData`. */
  adUserData: 'GRANTED' | 'DENIED';
  /** Meta's limited-data-use fields, when the conversion (or else its click) asked for them. */
  meta: MetaProcessingOptions | undefined;
  /** The conversion's resolved consent. */
  consent: Consent;
  /** true when some click id (the click's or one the conversion named) was withheld for lack of ad storage. */
  clickIdsWithheld: boolean;
  /** true when consent withholds nothing: the view's conversion, click and customer data are the events' as given. */
  complete: boolean;
}

/**
 * The one place a destination decides what it may send (api.md §10):
 * - the conversion's own identifiers (hashed customer data, IP, user agent, fbp, ttp,
 *   fingerprint) only with its `adUserData` granted;
 * - the click's (IP, user agent, fbp, ttp, fingerprint) only with both the click's and the
 *   conversion's `adUserData` granted: the more restrictive of the two applies to what the click
 *   contributes;
 * - click ids (the click's, and those the conversion named: fbclid, fbc, gclid, …) only with
 *   `adStorage` granted — for the click's, both the click's and the conversion's;
 * - without ad storage on either, click-id parameters are removed from the page URLs sent.
 * Attribution is not affected: it ran on the stored event before this.
 */
export function consentView<CustomerData>(
  conversionRow: ConversionsTable,
  clickRow: ClicksTable | undefined,
  customerData?: CustomerData,
): ConsentView<CustomerData> {
  const consent = consentOf(conversionRow.consent);
  const clickConsent = clickRow ? consentOf(clickRow.consent) : ALL_GRANTED;
  const userData = consent.adUserData === 'granted';
  const clickUserData = userData && clickConsent.adUserData === 'granted';
  const refIds = consent.adStorage === 'granted';
  const clickIds = refIds && clickConsent.adStorage === 'granted';

  const conversion: ConversionsTable = { ...conversionRow };
  if (!userData) {
    Object.assign(conversion, {
      user_data: '{}',
      email_hash: null,
      phone_hash: null,
      ip_address: null,
      user_agent: null,
      fingerprint: null,
      fbp: null,
      ttp: null,
    });
  }
  let withheld = false;
  if (!refIds) {
    withheld = Boolean(conversionRow.ref_fbc || conversionRow.ref_fbclid || conversionRow.ref_ids);
    Object.assign(conversion, { ref_fbc: null, ref_fbclid: null, ref_ids: null });
  }
  const stripUrls = !refIds || !clickIds;
  if (stripUrls && conversion.event_source_url) conversion.event_source_url = withoutClickIds(conversion.event_source_url);

  let click: ClicksTable | undefined;
  if (clickRow) {
    click = { ...clickRow };
    if (!clickUserData) {
      Object.assign(click, {
        ip_address: null,
        user_agent: null,
        fbp: null,
        ttp: null,
        fingerprint: null,
        derived_fingerprint: null,
      });
    }
    if (!clickIds) {
      withheld ||= Boolean(clickRow.fbc || OTHER_CLICK_ID_KINDS.some((kind) => clickRow[kind]));
      // fbclid and fbc are NOT NULL columns: blanked, which every builder reads as none.
      Object.assign(click, { fbclid: '', fbc: '' }, Object.fromEntries(OTHER_CLICK_ID_KINDS.map((kind) => [kind, null])));
    }
    if (stripUrls) click.landing_page = withoutClickIds(click.landing_page) ?? '';
  }

  const ldu = limitedDataUseOf(conversionRow.limited_data_use) ?? limitedDataUseOf(clickRow?.limited_data_use);
  return {
    conversion,
    click,
    customerData: userData ? customerData : undefined,
    adUserData: userData ? 'GRANTED' : 'DENIED',
    meta: metaProcessingOptions(ldu),
    consent,
    clickIdsWithheld: withheld,
    complete: clickUserData && clickIds,
  };
}

/** The API view of an event's consent: always the resolved fields, and limited data use when asked for. */
export function presentConsent(row: { consent?: string | null; limited_data_use?: string | null }) {
  const ldu = limitedDataUseOf(row.limited_data_use);
  return { consent: consentOf(row.consent), ...(ldu !== undefined && { limitedDataUse: ldu }) };
}
