// The browser tag's pure parts (packages/tag/src): cookie formats, the keep-existing rules, the
// fingerprint hash and the memory of sent fbclids. The tag in a browser: e2e/tag.test.ts.
import { describe, expect, it } from 'vitest';
import {
  COOKIE_MAX_AGE_SECONDS,
  chooseFbc,
  chooseFbp,
  FBCLID,
  FBP,
  fbclidOfFbc,
  fbcValue,
  fbpValue,
  randomDigits,
  readCookie,
  serializeCookie,
} from '../../../packages/tag/src/cookies.js';
import { fingerprintOf } from '../../../packages/tag/src/fingerprint.js';
import { MAX_REMEMBERED, parseSent, withSent } from '../../../packages/tag/src/sent.js';
import { FBCLID_PATTERN } from '../../src/routes/schemas/clicks.js';
import { fbcOf } from '../../src/tracking/clicks.js';

describe('_fbc', () => {
  it('is fb.1.<ms>.<fbclid> with the fbclid verbatim, as the server computes it', () => {
    expect(fbcValue(1_700_000_000_123, 'IwAR2F4-dbP0_x.y')).toBe('fb.1.1700000000123.IwAR2F4-dbP0_x.y');
    expect(fbcValue(1_700_000_000_123, 'AbC')).toBe(fbcOf(1_700_000_000_123, 'AbC'));
  });

  it('reads back the fbclid it carries (dots in the fbclid included)', () => {
    expect(fbclidOfFbc('fb.1.1700000000123.IwAR.with.dots')).toBe('IwAR.with.dots');
    expect(fbclidOfFbc('fb.1.notatime.x')).toBeNull();
    expect(fbclidOfFbc('garbage')).toBeNull();
  });

  it('an existing cookie for the same fbclid is kept, with its click time', () => {
    expect(chooseFbc('fb.1.1600000000000.abc', 'abc', 1_700_000_000_000)).toBe('fb.1.1600000000000.abc');
  });

  it('is replaced for another fbclid, when missing, or when malformed', () => {
    const now = 1_700_000_000_000;
    expect(chooseFbc('fb.1.1600000000000.old', 'new', now)).toBe(`fb.1.${now}.new`);
    expect(chooseFbc(null, 'new', now)).toBe(`fb.1.${now}.new`);
    expect(chooseFbc('new', 'new', now)).toBe(`fb.1.${now}.new`);
    // Case matters: fbclids are case-sensitive.
    expect(chooseFbc('fb.1.1600000000000.ABC', 'abc', now)).toBe(`fb.1.${now}.abc`);
  });

  it('checks fbclids as the server does (1–500 of [A-Za-z0-9_.-])', () => {
    const server = new RegExp(FBCLID_PATTERN);
    for (const value of ['IwAR2F4-dbP0_x.y', 'a', 'a'.repeat(500)]) {
      expect(FBCLID.test(value)).toBe(true);
      expect(server.test(value)).toBe(true);
    }
    for (const value of ['', 'a'.repeat(501), 'has space', 'semi;colon', 'équipe']) expect(FBCLID.test(value)).toBe(false);
  });
});

describe('_fbp', () => {
  it('is fb.1.<ms>.<10 random digits>, the first never 0', () => {
    const zeros = randomDigits(10, () => 0);
    expect(zeros).toBe('1000000000');
    const nines = randomDigits(10, (n) => n - 1);
    expect(nines).toBe('9999999999');
    const value = fbpValue(
      1_700_000_000_000,
      randomDigits(10, (n) => Math.floor(Math.random() * n)),
    );
    expect(value).toMatch(/^fb\.1\.1700000000000\.[1-9]\d{9}$/);
    expect(FBP.test(value)).toBe(true);
  });

  it('a well-formed existing one is kept; a missing or malformed one is replaced', () => {
    const fresh = () => '1234567890';
    expect(chooseFbp('fb.1.1600000000000.987654321', 1_700_000_000_000, fresh)).toBe('fb.1.1600000000000.987654321');
    expect(chooseFbp(null, 1_700_000_000_000, fresh)).toBe('fb.1.1700000000000.1234567890');
    expect(chooseFbp('fb.1.x.y', 1_700_000_000_000, fresh)).toBe('fb.1.1700000000000.1234567890');
    expect(chooseFbp('fb.1.1600000000000.has space', 1_700_000_000_000, fresh)).toBe('fb.1.1700000000000.1234567890');
  });
});

describe('cookies', () => {
  it('are first-party for the whole site: 90 days, Path=/, SameSite=Lax, Secure on https', () => {
    expect(COOKIE_MAX_AGE_SECONDS).toBe(7_776_000);
    expect(serializeCookie('_fbc', 'fb.1.1.abc', true)).toBe('_fbc=fb.1.1.abc; Max-Age=7776000; Path=/; SameSite=Lax; Secure');
    expect(serializeCookie('_fbp', 'fb.1.1.123', false)).toBe('_fbp=fb.1.1.123; Max-Age=7776000; Path=/; SameSite=Lax');
  });

  it('are read from document.cookie by exact name', () => {
    const jar = 'x_fbc=wrong; _fbc=fb.1.2.abc;_fbp = fb.1.3.456 ; enc=a%20b; bad=%E0%A4%A';
    expect(readCookie(jar, '_fbc')).toBe('fb.1.2.abc');
    expect(readCookie(jar, '_fbp')).toBe('fb.1.3.456');
    expect(readCookie(jar, 'enc')).toBe('a b');
    expect(readCookie(jar, 'bad')).toBe('%E0%A4%A');
    expect(readCookie(jar, 'fbc')).toBeNull();
    expect(readCookie('', '_fbc')).toBeNull();
  });
});

describe('fingerprint', () => {
  const traits = ['Mozilla/5.0 Chrome/130', 'en-US', 'en-US,en', 'Linux x86_64', 'Europe/Paris', '1920x1080x24', 1, 8, 8, 0];

  it('is 16 hex characters, the same for the same traits', () => {
    expect(fingerprintOf(traits)).toMatch(/^[0-9a-f]{16}$/);
    expect(fingerprintOf([...traits])).toBe(fingerprintOf(traits));
  });

  it('changes with any one trait, and tells a missing trait from a moved one', () => {
    const seen = new Set([fingerprintOf(traits)]);
    for (let i = 0; i < traits.length; i++) {
      const changed = [...traits];
      changed[i] = `${changed[i]}x`;
      seen.add(fingerprintOf(changed));
    }
    seen.add(fingerprintOf([...traits.slice(0, 9), undefined]));
    seen.add(fingerprintOf(['', ...traits.slice(0, 9)]));
    expect(seen.size).toBe(traits.length + 3);
  });
});

describe('sent fbclids', () => {
  it('survive bad storage contents as an empty list', () => {
    expect(parseSent(null)).toEqual([]);
    expect(parseSent('not json')).toEqual([]);
    expect(parseSent('{"a":1}')).toEqual([]);
    expect(parseSent('["a",2,"b"]')).toEqual(['a', 'b']);
  });

  it('remember each fbclid once, newest last, and forget the oldest beyond the limit', () => {
    expect(withSent(['a', 'b'], 'a')).toEqual(['b', 'a']);
    const full = Array.from({ length: MAX_REMEMBERED }, (_, i) => `f${i}`);
    const next = withSent(full, 'new');
    expect(next).toHaveLength(MAX_REMEMBERED);
    expect(next[0]).toBe('f1');
    expect(next.at(-1)).toBe('new');
  });
});
