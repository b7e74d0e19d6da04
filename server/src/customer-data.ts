import { hash } from 'node:crypto';
import { type CountryCode, parsePhoneNumberFromString } from 'libphonenumber-js';

/**
 * Customer data normalized and SHA-256 hashed per Meta's customer-information parameters,
 * on arrival. Only the hashes are kept; the raw values never leave this module. Shared by every
 * destination (each platform's mapping starts from `CustomerData`), attribution and match quality.
 */
export interface CustomerData {
  email?: string;
  firstName?: string;
  lastName?: string;
  phone?: string;
  city?: string;
  state?: string;
  country?: string;
  zipCode?: string;
}

/** Meta's `user_data` keys → SHA-256 hex of the normalized value. */
export interface HashedUserData {
  em?: string;
  ph?: string;
  fn?: string;
  ln?: string;
  ct?: string;
  st?: string;
  zp?: string;
  country?: string;
}

export function sha256Hex(value: string): string {
  return hash('sha256', value, 'hex'); // one-shot (no Hash object): about half the time of createHash
}

const SHA256_HEX = /^[a-f0-9]{64}$/i;

const US_STATES: Record<string, string> = {
  alabama: 'al',
  alaska: 'ak',
  arizona: 'az',
  arkansas: 'ar',
  california: 'ca',
  colorado: 'co',
  connecticut: 'ct',
  delaware: 'de',
  districtofcolumbia: 'dc',
  florida: 'fl',
  georgia: 'ga',
  hawaii: 'hi',
  idaho: 'id',
  illinois: 'il',
  indiana: 'in',
  iowa: 'ia',
  kansas: 'ks',
  kentucky: 'ky',
  louisiana: 'la',
  maine: 'me',
  maryland: 'md',
  massachusetts: 'ma',
  michigan: 'mi',
  minnesota: 'mn',
  mississippi: 'ms',
  missouri: 'mo',
  montana: 'mt',
  nebraska: 'ne',
  nevada: 'nv',
  newhampshire: 'nh',
  newjersey: 'nj',
  newmexico: 'nm',
  newyork: 'ny',
  northcarolina: 'nc',
  northdakota: 'nd',
  ohio: 'oh',
  oklahoma: 'ok',
  oregon: 'or',
  pennsylvania: 'pa',
  rhodeisland: 'ri',
  southcarolina: 'sc',
  southdakota: 'sd',
  tennessee: 'tn',
  texas: 'tx',
  utah: 'ut',
  vermont: 'vt',
  virginia: 'va',
  washington: 'wa',
  westvirginia: 'wv',
  wisconsin: 'wi',
  wyoming: 'wy',
  puertorico: 'pr',
};

/** English country names (letters only, lower-case) → ISO 3166 alpha-2, built from the platform's own data. */
let countryNames: Map<string, string> | undefined;
function countryCodeFromName(name: string): string | undefined {
  if (!countryNames) {
    countryNames = new Map();
    const display = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
    for (let a = 65; a <= 90; a++) {
      for (let b = 65; b <= 90; b++) {
        const code = String.fromCharCode(a, b);
        const label = display.of(code);
        // Deprecated aliases (UK, FX, SU, …) share their successor's name; keep only current codes.
        if (label && canonicalRegion(code) === code.toLowerCase()) countryNames.set(lettersOnly(label), code.toLowerCase());
      }
    }
    countryNames.set('usa', 'us');
    countryNames.set('unitedstatesofamerica', 'us');
    countryNames.set('uk', 'gb');
  }
  return countryNames.get(name);
}

/** The current ISO 3166 alpha-2 code (lower-case) for a 2-letter region code, resolving aliases such as UK → gb. */
function canonicalRegion(code: string): string {
  if (!/^[a-z]{2}$/i.test(code)) return code.toLowerCase();
  return (new Intl.Locale('und', { region: code }).region ?? code).toLowerCase();
}

function lettersOnly(value: string): string {
  return value
    .normalize('NFC')
    .toLowerCase()
    .replace(/[^\p{L}]/gu, '');
}

export function normalizeEmail(value: string): string {
  return value.trim().toLowerCase();
}

export function normalizeName(value: string): string {
  return value
    .normalize('NFC')
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}]/gu, '');
}

export function normalizeCity(value: string): string {
  return lettersOnly(value);
}

export function normalizeCountry(value: string): string {
  const letters = lettersOnly(value);
  if (letters.length === 2) return canonicalRegion(letters);
  return countryCodeFromName(letters) ?? letters;
}

export function normalizeState(value: string, country?: string): string {
  const letters = lettersOnly(value);
  if (letters.length > 2 && (country === undefined || country === 'us')) return US_STATES[letters] ?? letters;
  return letters;
}

export function normalizeZip(value: string, country?: string): string {
  const compact = value.trim().toLowerCase().replace(/[\s-]/g, '');
  const usShaped = /^\d{5}(\d{4})?$/.test(compact);
  if (country === 'us' || (country === undefined && usShaped)) return compact.slice(0, 5);
  return compact;
}

/** Digits only, with the country calling code: added from `country` when the number has none. */
export function normalizePhone(value: string, country?: string): string {
  const trimmed = value.trim();
  const region = country && country.length === 2 ? (country.toUpperCase() as CountryCode) : undefined;
  if (!trimmed.startsWith('+') && !trimmed.startsWith('00') && region) {
    const parsed = parsePhoneNumberFromString(trimmed, region);
    if (parsed) return parsed.number.replace(/\D/g, '');
  }
  return trimmed.replace(/\D/g, '').replace(/^00/, '');
}

/** A value that already is a SHA-256 hex digest is passed through (lower-cased), as Meta accepts. */
function hashed(normalized: string, raw: string): string | undefined {
  if (SHA256_HEX.test(raw.trim())) return raw.trim().toLowerCase();
  return normalized === '' ? undefined : sha256Hex(normalized);
}

export function hashCustomerData(data: CustomerData | undefined): HashedUserData {
  if (!data) return {};
  const country = data.country && !SHA256_HEX.test(data.country.trim()) ? normalizeCountry(data.country) : undefined;
  const out: HashedUserData = {};
  const put = (key: keyof HashedUserData, raw: string | undefined, normalize: (v: string) => string) => {
    if (raw === undefined) return;
    const value = hashed(SHA256_HEX.test(raw.trim()) ? '' : normalize(raw), raw);
    if (value) out[key] = value;
  };
  put('em', data.email, normalizeEmail);
  put('ph', data.phone, (v) => normalizePhone(v, country));
  put('fn', data.firstName, normalizeName);
  put('ln', data.lastName, normalizeName);
  put('ct', data.city, normalizeCity);
  put('st', data.state, (v) => normalizeState(v, country));
  put('zp', data.zipCode, (v) => normalizeZip(v, country));
  put('country', data.country, normalizeCountry);
  return out;
}
