import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  hashCustomerData,
  normalizeCity,
  normalizeCountry,
  normalizeEmail,
  normalizeName,
  normalizePhone,
  normalizeState,
  normalizeZip,
  sha256Hex,
} from '../../src/customer-data.js';

const sha = (value: string) => createHash('sha256').update(value, 'utf8').digest('hex');

// Published examples from Meta's customer-information parameter documentation.
const META_EMAIL_HASH = '62a14e44f765419d10fea99367361a727c12365e2520f32218d505ed9aa0f62f';
const META_PHONE_HASH = 'e323ec626319ca94ee8bff2e4c87cf613be6ea19919ed1364124e16807ab3176';

describe('Meta published vectors', () => {
  it('hashes John_Smith@gmail.com to the documented em', () => {
    expect(hashCustomerData({ email: 'John_Smith@gmail.com' }).em).toBe(META_EMAIL_HASH);
    expect(hashCustomerData({ email: '  John_Smith@gmail.com \n' }).em).toBe(META_EMAIL_HASH);
  });

  it('normalizes (650)555-1212 in the US to 16505551212 and hashes it to the documented ph', () => {
    expect(normalizePhone('(650)555-1212', 'us')).toBe('16505551212');
    expect(hashCustomerData({ phone: '(650)555-1212', country: 'US' }).ph).toBe(META_PHONE_HASH);
  });

  it('sha256Hex is lower-case hex SHA-256', () => {
    expect(sha256Hex('john_smith@gmail.com')).toBe(META_EMAIL_HASH);
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });
});

describe('email', () => {
  it('is trimmed and lower-cased', () => {
    expect(normalizeEmail('  Jane.Doe+Promo@Example.COM ')).toBe('jane.doe+promo@example.com');
    expect(hashCustomerData({ email: 'Jane.Doe@Example.com' }).em).toBe(sha('jane.doe@example.com'));
  });
});

describe('phone', () => {
  it('keeps digits only with the country code', () => {
    expect(normalizePhone('+1 (650) 555-1212')).toBe('16505551212');
    expect(normalizePhone('001 650 555 1212')).toBe('16505551212');
    expect(normalizePhone('+44 20 7946 0958')).toBe('442079460958');
  });

  it('adds the calling code from the country, dropping the national trunk prefix', () => {
    expect(normalizePhone('020 7946 0958', 'gb')).toBe('442079460958');
    expect(normalizePhone('650.555.1212', 'us')).toBe('16505551212');
  });

  it('does not add the calling code twice', () => {
    expect(normalizePhone('1 650 555 1212', 'us')).toBe('16505551212');
    expect(normalizePhone('+1 650 555 1212', 'us')).toBe('16505551212');
  });

  it('takes the country from a country name as well', () => {
    expect(hashCustomerData({ phone: '(650)555-1212', country: 'United States' }).ph).toBe(META_PHONE_HASH);
  });
});

describe('names', () => {
  it('are lower-case without punctuation or spaces', () => {
    expect(normalizeName('John')).toBe('john');
    expect(normalizeName("Mary-Jane O'Neil")).toBe('maryjaneoneil');
    expect(normalizeName('  Smith, Jr. ')).toBe('smithjr');
    expect(normalizeName('Zoë')).toBe('zoë');
    expect(hashCustomerData({ firstName: 'Mary-Jane', lastName: "O'Neil" })).toEqual({
      fn: sha('maryjane'),
      ln: sha('oneil'),
    });
  });
});

describe('city', () => {
  it('is lower-case letters only', () => {
    expect(normalizeCity('San Francisco')).toBe('sanfrancisco');
    expect(normalizeCity('St. Louis 2')).toBe('stlouis');
    expect(normalizeCity('Winston-Salem')).toBe('winstonsalem');
    expect(normalizeCity('São Paulo')).toBe('sãopaulo');
    expect(hashCustomerData({ city: 'Menlo Park' }).ct).toBe(sha('menlopark'));
  });
});

describe('state', () => {
  it('maps a full US state name to its 2-letter code, lower-case', () => {
    expect(normalizeState('California')).toBe('ca');
    expect(normalizeState('New York', 'us')).toBe('ny');
    expect(normalizeState('district of columbia', 'us')).toBe('dc');
    expect(hashCustomerData({ state: 'California', country: 'US' }).st).toBe(sha('ca'));
  });

  it('lower-cases a 2-letter code and strips punctuation', () => {
    expect(normalizeState(' CA ')).toBe('ca');
    expect(normalizeState('N.Y.')).toBe('ny');
  });

  it('lower-cases states outside the US without mapping them', () => {
    expect(normalizeState('Bayern', 'de')).toBe('bayern');
  });
});

describe('zip', () => {
  it('keeps the first 5 digits of a US zip', () => {
    expect(normalizeZip('94025-1234', 'us')).toBe('94025');
    expect(normalizeZip('940251234', 'us')).toBe('94025');
    expect(normalizeZip(' 94025 ', 'us')).toBe('94025');
    expect(hashCustomerData({ zipCode: '94025-1234', country: 'US' }).zp).toBe(sha('94025'));
  });

  it('lower-cases a non-US zip and removes spaces', () => {
    expect(normalizeZip('SW1A 1AA', 'gb')).toBe('sw1a1aa');
    expect(normalizeZip('10115', 'de')).toBe('10115');
    expect(hashCustomerData({ zipCode: 'SW1A 1AA', country: 'GB' }).zp).toBe(sha('sw1a1aa'));
  });
});

describe('country', () => {
  it('maps country names to ISO 3166 alpha-2, lower-case', () => {
    expect(normalizeCountry('United States')).toBe('us');
    expect(normalizeCountry('USA')).toBe('us');
    expect(normalizeCountry('Germany')).toBe('de');
    expect(normalizeCountry('DE')).toBe('de');
    expect(normalizeCountry('us')).toBe('us');
    expect(normalizeCountry('U.S.')).toBe('us');
  });

  it('maps names to the current code, never a retired alias (gb not uk, fr not fx, ru not su)', () => {
    expect(normalizeCountry('United Kingdom')).toBe('gb');
    expect(normalizeCountry('France')).toBe('fr');
    expect(normalizeCountry('Russia')).toBe('ru');
    expect(normalizeCountry('Benin')).toBe('bj');
    expect(normalizeCountry('Serbia')).toBe('rs');
    expect(normalizeCountry('UK')).toBe('gb');
    expect(hashCustomerData({ country: 'United Kingdom' }).country).toBe(sha('gb'));
  });
});

describe('hashCustomerData', () => {
  it('hashes every field under its Meta key', () => {
    const hashed = hashCustomerData({
      email: 'John_Smith@gmail.com',
      firstName: 'John',
      lastName: 'Smith',
      phone: '(650)555-1212',
      city: 'Menlo Park',
      state: 'California',
      country: 'United States',
      zipCode: '94025-1234',
    });
    expect(hashed).toEqual({
      em: META_EMAIL_HASH,
      ph: META_PHONE_HASH,
      fn: sha('john'),
      ln: sha('smith'),
      ct: sha('menlopark'),
      st: sha('ca'),
      zp: sha('94025'),
      country: sha('us'),
    });
  });

  it('passes an already-hashed 64-hex value through (lower-cased)', () => {
    expect(hashCustomerData({ email: META_EMAIL_HASH }).em).toBe(META_EMAIL_HASH);
    expect(hashCustomerData({ email: META_EMAIL_HASH.toUpperCase() }).em).toBe(META_EMAIL_HASH);
    expect(hashCustomerData({ phone: META_PHONE_HASH, country: 'US' }).ph).toBe(META_PHONE_HASH);
    const stateHash = sha('ca');
    expect(hashCustomerData({ state: stateHash }).st).toBe(stateHash);
  });

  it('omits fields whose normalized value is empty', () => {
    expect(hashCustomerData({ email: '   ', firstName: "'-.", city: '12345', phone: '()-' })).toEqual({});
    expect(hashCustomerData({ email: '', lastName: 'Smith' })).toEqual({ ln: sha('smith') });
  });

  it('returns an empty object without customer data', () => {
    expect(hashCustomerData(undefined)).toEqual({});
    expect(hashCustomerData({})).toEqual({});
  });

  it('never returns a raw value', () => {
    const hashed = hashCustomerData({ email: 'raw@example.com', phone: '+1 650 555 1212', firstName: 'Raw' });
    for (const value of Object.values(hashed)) expect(value).toMatch(/^[a-f0-9]{64}$/);
  });
});
