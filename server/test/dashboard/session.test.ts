// Dashboard sign-in, sessions and sign-out (api.md §5 "Sign-in").
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setPassword } from '../../src/accounts/accounts.js';
import { SESSION_COOKIE } from '../../src/dashboard/cookie.js';
import { IDLE_TIMEOUT_MS, resumeSession, startSession, TOUCH_INTERVAL_MS } from '../../src/dashboard/sessions.js';
import { SIGN_IN_PER_EMAIL, SIGN_IN_PER_IP } from '../../src/dashboard/sign-in-limits.js';
import { call, createTestContext, expectError, FrozenLimiter, type TestContext } from '../helpers.js';
import { dashboardCall, PASSWORD, signIn, signInRequest, withPassword } from './session.js';

const EMAIL = 'owner-a@example.com';

let ctx: TestContext;
beforeEach(async () => {
  // Sign-in buckets refill in seconds (one attempt per 6 s per IP): with the clock stopped, none
  // refills while a slow machine hashes a burst of passwords.
  ctx = await createTestContext({ limiter: new FrozenLimiter() });
  await withPassword(ctx.database, EMAIL);
});
afterEach(() => ctx.close());

const sessionRows = () => ctx.database.read.selectFrom('dashboard_sessions').selectAll().execute();

describe('sign-in', () => {
  it('sets an HttpOnly, Secure, SameSite=Strict session cookie and answers who signed in', async () => {
    const res = await signInRequest(ctx.app, 'Owner-A@Example.com ', PASSWORD);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ signedIn: true, accountId: ctx.a.accountId, email: EMAIL });
    expect(res.body.data.csrfToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const cookie = res.raw.cookies.find((c) => c.name === SESSION_COOKIE);
    expect(cookie).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Strict', path: '/', maxAge: IDLE_TIMEOUT_MS / 1000 });
    expect(cookie?.domain).toBeUndefined();

    const me = await dashboardCall(ctx.app, 'GET', '/dashboard/api/session', {
      session: { cookie: `${SESSION_COOKIE}=${cookie?.value}`, csrfToken: '' },
    });
    expect(me.status).toBe(200);
    expect(me.body.data).toEqual(res.body.data);
  });

  it('stores only a hash of the session token', async () => {
    const session = await signIn(ctx.app, EMAIL);
    const [row] = await sessionRows();
    expect(row?.id).toMatch(/^[0-9a-f]{64}$/);
    expect(session.cookie).not.toContain(row?.id);
    expect(row?.csrf_token).toBe(session.csrfToken);
  });

  it('answers a wrong password, an unknown email and an account without a password alike', async () => {
    await ctx.database.write((trx) =>
      trx.updateTable('accounts').set({ password_hash: null }).where('email', '=', 'owner-b@example.com').execute(),
    );
    const answers = [
      await signInRequest(ctx.app, EMAIL, 'not the password'),
      await signInRequest(ctx.app, 'nobody@example.com', PASSWORD),
      await signInRequest(ctx.app, 'owner-b@example.com', PASSWORD),
    ];
    for (const res of answers) {
      const error = expectError(res, 401, 'unauthorized');
      expect(error.message).toBe('Invalid email or password');
      expect(res.headers['set-cookie']).toBeUndefined();
    }
    expect(await sessionRows()).toHaveLength(0);
  });

  it('refuses a missing field, an unknown field and a body that is not JSON', async () => {
    expectError(await call(ctx.app, 'POST', '/dashboard/api/session', { body: { email: EMAIL } }), 400, 'missing_required_field');
    expectError(
      await call(ctx.app, 'POST', '/dashboard/api/session', { body: { email: EMAIL, password: PASSWORD, remember: true } }),
      400,
      'invalid_request',
    );
    // What a cross-site HTML form could send.
    const form = await call(ctx.app, 'POST', '/dashboard/api/session', {
      rawBody: `email=${EMAIL}&password=${PASSWORD}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expectError(form, 400, 'invalid_request');
  });

  it('refuses a sign-in another site starts', async () => {
    const attempts: Record<string, string>[] = [
      { origin: 'https://evil.example' },
      { 'sec-fetch-site': 'cross-site' },
      { origin: 'null' },
    ];
    for (const headers of attempts) {
      const res = await call(ctx.app, 'POST', '/dashboard/api/session', { body: { email: EMAIL, password: PASSWORD }, headers });
      expectError(res, 403, 'forbidden');
    }
    const sameOrigin = await call(ctx.app, 'POST', '/dashboard/api/session', {
      body: { email: EMAIL, password: PASSWORD },
      headers: { origin: 'https://localhost:80', host: 'localhost:80', 'sec-fetch-site': 'same-origin' },
    });
    expect(sameOrigin.status).toBe(200);
  });
});

describe('sign-in rate limits', () => {
  it('limits attempts per email, then refuses even the right password', async () => {
    for (let i = 0; i < SIGN_IN_PER_EMAIL.burst; i++) {
      expectError(await signInRequest(ctx.app, EMAIL, `wrong ${i}`), 401, 'unauthorized');
    }
    const res = await signInRequest(ctx.app, EMAIL, PASSWORD);
    const error = expectError(res, 429, 'rate_limit_exceeded');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(error.details?.retryAfterSeconds).toBe(Number(res.headers['retry-after']));
    // Another account is not locked out by it.
    await withPassword(ctx.database, 'owner-b@example.com');
    expect((await signInRequest(ctx.app, 'owner-b@example.com', PASSWORD)).status).toBe(200);
  });

  it('limits attempts per client IP across emails', async () => {
    for (let i = 0; i < SIGN_IN_PER_IP.burst; i++) {
      expectError(await signInRequest(ctx.app, `guess${i}@example.com`, 'whatever1'), 401, 'unauthorized');
    }
    expectError(await signInRequest(ctx.app, EMAIL, PASSWORD), 429, 'rate_limit_exceeded');
  });
});

describe('sessions', () => {
  it('refuses a cookie whose signature does not hold, and one for no session', async () => {
    const session = await signIn(ctx.app, EMAIL);
    const [name, value] = session.cookie.split('=') as [string, string];
    const token = value.slice(0, value.lastIndexOf('.'));
    for (const cookie of [`${name}=${token}`, `${name}=${token}.AAAA`, `${name}=${value.slice(0, -2)}xx`]) {
      const forged = { cookie, csrfToken: session.csrfToken };
      expectError(await dashboardCall(ctx.app, 'GET', '/dashboard/api/keys', { session: forged }), 401, 'unauthorized');
      const asked = await dashboardCall(ctx.app, 'GET', '/dashboard/api/session', { session: forged });
      expect(asked.body.data).toEqual({ signedIn: false });
    }
  });

  it('ends after 12 hours idle, and each request moves the deadline', async () => {
    const start = Date.now();
    const { token } = await startSession(ctx.database, { accountId: ctx.a.accountId, email: EMAIL }, start);
    // Within a minute of the last request nothing is written.
    expect((await resumeSession(ctx.database, token, start + TOUCH_INTERVAL_MS - 1))?.renewed).toBe(false);
    const later = start + IDLE_TIMEOUT_MS - 1000;
    expect((await resumeSession(ctx.database, token, later))?.renewed).toBe(true);
    // Idle 12 h counted from the last request, not from sign-in.
    expect(await resumeSession(ctx.database, token, later + IDLE_TIMEOUT_MS - 1)).toBeDefined();
    const last = later + IDLE_TIMEOUT_MS - 1;
    expect(await resumeSession(ctx.database, token, last + IDLE_TIMEOUT_MS)).toBeUndefined();
    // An ended session is deleted, and stays ended.
    expect(await sessionRows()).toHaveLength(0);
    expect(await resumeSession(ctx.database, token, last + 1)).toBeUndefined();
  });

  it('answers 401 and clears the cookie of a session idle for 12 hours', async () => {
    const session = await signIn(ctx.app, EMAIL);
    await ctx.database.write((trx) =>
      trx
        .updateTable('dashboard_sessions')
        .set({ last_seen_at: Date.now() - IDLE_TIMEOUT_MS - 1 })
        .execute(),
    );
    const res = await dashboardCall(ctx.app, 'GET', '/dashboard/api/keys', { session });
    expect(expectError(res, 401, 'unauthorized').message).toMatch(/session has ended/);
    const cleared = res.raw.cookies.find((c) => c.name === SESSION_COOKIE);
    expect(cleared?.value).toBe('');
    // Asking whether one is signed in is not an error: the answer is no, and the cookie goes too.
    await signIn(ctx.app, EMAIL).then(async (other) => {
      await ctx.database.write((trx) => trx.updateTable('dashboard_sessions').set({ last_seen_at: 0 }).execute());
      const asked = await dashboardCall(ctx.app, 'GET', '/dashboard/api/session', { session: other });
      expect(asked.body.data).toEqual({ signedIn: false });
      expect(asked.raw.cookies.find((c) => c.name === SESSION_COOKIE)?.value).toBe('');
    });
  });

  it('renews the cookie when the idle deadline moves', async () => {
    const session = await signIn(ctx.app, EMAIL);
    const fresh = await dashboardCall(ctx.app, 'GET', '/dashboard/api/session', { session });
    expect(fresh.headers['set-cookie']).toBeUndefined();
    const seen = Date.now() - 2 * TOUCH_INTERVAL_MS;
    await ctx.database.write((trx) => trx.updateTable('dashboard_sessions').set({ last_seen_at: seen }).execute());
    const res = await dashboardCall(ctx.app, 'GET', '/dashboard/api/session', { session });
    expect(res.status).toBe(200);
    expect(res.raw.cookies.find((c) => c.name === SESSION_COOKIE)?.maxAge).toBe(IDLE_TIMEOUT_MS / 1000);
    const [row] = await sessionRows();
    expect(Number(row?.last_seen_at)).toBeGreaterThan(seen);
  });

  it('sign-out ends the session on the server: the old cookie no longer works', async () => {
    const session = await signIn(ctx.app, EMAIL);
    const other = await signIn(ctx.app, EMAIL);
    const res = await dashboardCall(ctx.app, 'DELETE', '/dashboard/api/session', { session });
    expect(res.status).toBe(200);
    expect(res.raw.cookies.find((c) => c.name === SESSION_COOKIE)?.value).toBe('');
    expectError(await dashboardCall(ctx.app, 'GET', '/dashboard/api/keys', { session }), 401, 'unauthorized');
    expect((await dashboardCall(ctx.app, 'GET', '/dashboard/api/session', { session })).body.data).toEqual({ signedIn: false });
    // Only that session: the owner's other browser stays signed in.
    expect((await dashboardCall(ctx.app, 'GET', '/dashboard/api/session', { session: other })).body.data.signedIn).toBe(true);
    expect(await sessionRows()).toHaveLength(1);
  });

  it('sign-out needs the CSRF token', async () => {
    const session = await signIn(ctx.app, EMAIL);
    expectError(await dashboardCall(ctx.app, 'DELETE', '/dashboard/api/session', { session, csrf: false }), 403, 'forbidden');
    expect((await dashboardCall(ctx.app, 'GET', '/dashboard/api/session', { session })).body.data.signedIn).toBe(true);
  });

  it('a new password ends every session of the account', async () => {
    const session = await signIn(ctx.app, EMAIL);
    await setPassword(ctx.database, EMAIL, 'another password');
    expectError(await dashboardCall(ctx.app, 'GET', '/dashboard/api/keys', { session }), 401, 'unauthorized');
    expectError(await signInRequest(ctx.app, EMAIL, PASSWORD), 401, 'unauthorized');
    expect((await signInRequest(ctx.app, EMAIL, 'another password')).status).toBe(200);
  });
});
