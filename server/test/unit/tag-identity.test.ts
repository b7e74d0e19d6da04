import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hexOf, normalizedIdentity, VISITOR_ID, visitorIdOf } from '../../../packages/tag/src/identity.js';

// The tag's visitor id and identify's normalization (packages/tag/src/identity.ts), without a browser.

describe('the tag’s visitor id', () => {
  it('is 16 bytes in base64url: 22 characters the server and the tag accept', () => {
    const bytes = Uint8Array.from({ length: 16 }, (_, i) => (i * 37 + 250) & 255);
    const id = visitorIdOf(bytes);
    expect(id).toBe(Buffer.from(bytes).toString('base64url'));
    expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(VISITOR_ID.test(id)).toBe(true);
    expect(visitorIdOf(new Uint8Array(16).fill(255))).toBe('_____________________w');
  });

  it('accepts an id set by the shop’s server, refuses a malformed one', () => {
    expect(VISITOR_ID.test('wt.4f9c2a7d1e8b6c3f5a0d9e2b')).toBe(true);
    for (const bad of ['short', 'has space in it here', 'x'.repeat(129), 'semi;colon-1234567890'])
      expect(VISITOR_ID.test(bad)).toBe(false);
  });
});

describe('identify’s normalization (as the server’s, api.md §2)', () => {
  it('email: trimmed and lower-cased; phone: digits only, a leading 00 dropped', () => {
    expect(normalizedIdentity('email', '  Jane.Doe@Example.COM ')).toEqual({ text: 'jane.doe@example.com', hashed: false });
    expect(normalizedIdentity('phone', '+1 (650) 555-1212')).toEqual({ text: '16505551212', hashed: false });
    expect(normalizedIdentity('phone', '0044 20 7946 0958')).toEqual({ text: '442079460958', hashed: false });
  });

  it('keeps a SHA-256 hex as it is (lower-cased); nothing for empty or non-string values', () => {
    const hash = createHash('sha256').update('x').digest('hex');
    expect(normalizedIdentity('email', ` ${hash.toUpperCase()} `)).toEqual({ text: hash, hashed: true });
    for (const value of ['   ', '', undefined, null, 42, {}]) expect(normalizedIdentity('email', value)).toBeNull();
    expect(normalizedIdentity('phone', '---')).toBeNull();
  });

  it('hexOf gives the digest as lower-case hex', () => {
    const digest = createHash('sha256').update('jane.doe@example.com').digest();
    expect(hexOf(digest.buffer.slice(digest.byteOffset, digest.byteOffset + digest.length))).toBe(digest.toString('hex'));
  });
});
