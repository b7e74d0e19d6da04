/**
 * Meta's first-party cookies, as pure functions of their inputs (the tag reads and writes
 * `document.cookie` with them; tests run them without a browser).
 * - `_fbc` = `fb.1.<ms>.<fbclid>`: the ad click this browser arrived from.
 * - `_fbp` = `fb.1.<ms>.<random>`: this browser, as Meta's pixel names it.
 */

/** Both cookies live 90 days, as Meta's pixel sets them (and as long as a click can be attributed). */
export const COOKIE_MAX_AGE_SECONDS = 90 * 24 * 60 * 60;

/** What the server accepts as an fbclid (api.md §2): 1–500 of `[A-Za-z0-9_.-]`. */
export const FBCLID = /^[A-Za-z0-9_.-]{1,500}$/;

/** What the server accepts as an fbp (POST /v1/track/click). */
export const FBP = /^fb\.\d\.\d+\.[A-Za-z0-9_-]+$/;

const FBC = /^fb\.\d\.\d+\.(.+)$/;

/** The value of cookie `name` in a `document.cookie` string; null when absent. */
export function readCookie(cookies: string, name: string): string | null {
  for (const part of cookies.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    const raw = part.slice(eq + 1).trim();
    try {
      return decodeURIComponent(raw);
    } catch {
      return raw;
    }
  }
  return null;
}

export function fbcValue(clickMs: number, fbclid: string): string {
  return `fb.1.${clickMs}.${fbclid}`;
}

/** The fbclid an `_fbc` value carries; null when it is not one. */
export function fbclidOfFbc(fbc: string): string | null {
  const match = FBC.exec(fbc);
  return match ? (match[1] as string) : null;
}

/**
 * The `_fbc` to hold after landing with `fbclid`: the existing cookie when it is for the same
 * fbclid (its time is the click's, which a reload or Meta's own pixel must not move), else a
 * new one stamped `now`.
 */
export function chooseFbc(existing: string | null, fbclid: string, now: number): string {
  return existing !== null && fbclidOfFbc(existing) === fbclid ? existing : fbcValue(now, fbclid);
}

/** `count` decimal digits, the first never 0, from `nextInt(n)` ∈ [0, n). */
export function randomDigits(count: number, nextInt: (n: number) => number): string {
  let digits = String(1 + nextInt(9));
  while (digits.length < count) digits += String(nextInt(10));
  return digits;
}

/** A new `_fbp`: creation time and 10 random digits. */
export function fbpValue(now: number, random: string): string {
  return `fb.1.${now}.${random}`;
}

/** The `_fbp` to hold: a well-formed existing one is kept, anything else is replaced. */
export function chooseFbp(existing: string | null, now: number, random: () => string): string {
  return existing !== null && FBP.test(existing) ? existing : fbpValue(now, random());
}

/** A first-party cookie for the whole site: 90 days unless told, `SameSite=Lax`, `Secure` on https pages. */
export function serializeCookie(name: string, value: string, secure: boolean, maxAge = COOKIE_MAX_AGE_SECONDS): string {
  return `${name}=${encodeURIComponent(value)}; Max-Age=${maxAge}; Path=/; SameSite=Lax${secure ? '; Secure' : ''}`;
}
