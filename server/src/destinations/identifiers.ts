import { createHash } from 'node:crypto';
import { type CountryCode, parsePhoneNumberFromString } from 'libphonenumber-js';

// Customer identifiers as Google's enhanced conversions (and TikTok) take them: normalized, then SHA-256 hex.

const SHA256_HEX = /^[a-f0-9]{64}$/i;

export const sha256 = (value: string) => createHash('sha256').update(value, 'utf8').digest('hex');

/** Google's enhanced-conversions email rule: trim, lower-case; for gmail.com/googlemail.com no dots in the local part. */
export function googleEmail(raw: string): string {
  const email = raw.trim().toLowerCase();
  const at = email.lastIndexOf('@');
  if (at < 0) return email;
  const domain = email.slice(at + 1);
  if (domain !== 'gmail.com' && domain !== 'googlemail.com') return email;
  return `${email.slice(0, at).replace(/\./g, '')}@${domain}`;
}

/** E.164 (`+16505551212`), the country from the customer data when the number has no code; undefined when it cannot be told. */
export function e164(raw: string, country?: string): string | undefined {
  const trimmed = raw.trim();
  const international = trimmed.startsWith('+') || trimmed.startsWith('00');
  const region = country && /^[a-z]{2}$/i.test(country.trim()) ? (country.trim().toUpperCase() as CountryCode) : undefined;
  const parsed = parsePhoneNumberFromString(trimmed.replace(/^00/, '+'), international ? undefined : region);
  if (parsed?.number) return parsed.number;
  const digits = trimmed.replace(/\D/g, '').replace(/^00/, '');
  return international && digits.length >= 8 ? `+${digits}` : undefined;
}

/** SHA-256 hex of the normalized value; a value already hashed passes through (lower-cased). */
export function hashedEmail(raw: string): string | undefined {
  if (SHA256_HEX.test(raw.trim())) return raw.trim().toLowerCase();
  const email = googleEmail(raw);
  return email ? sha256(email) : undefined;
}

export function hashedPhone(raw: string, country?: string): string | undefined {
  if (SHA256_HEX.test(raw.trim())) return raw.trim().toLowerCase();
  const phone = e164(raw, country);
  return phone ? sha256(phone) : undefined;
}
