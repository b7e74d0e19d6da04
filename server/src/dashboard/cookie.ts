import type { CookieSerializeOptions } from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { IDLE_TIMEOUT_MS } from './sessions.js';

/**
 * The session cookie. `__Host-` makes the browser refuse it unless it is Secure, for the whole
 * host and set by the host itself (no subdomain can plant one); HttpOnly keeps it from page
 * scripts; SameSite=Strict keeps it off every request another site starts. Its value is the
 * session token signed with a secret kept in the database (every instance verifies it).
 */
export const SESSION_COOKIE = '__Host-waytrack_session';

const options = (maxAgeSeconds: number): CookieSerializeOptions => ({
  httpOnly: true,
  secure: true,
  sameSite: 'strict',
  path: '/',
  maxAge: maxAgeSeconds,
  signed: true,
});

/** Sets (or renews: the browser keeps it as long as the server does) the session cookie. */
export function setSessionCookie(reply: FastifyReply, token: string): void {
  reply.setCookie(SESSION_COOKIE, token, options(IDLE_TIMEOUT_MS / 1000));
}

export function clearSessionCookie(reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, { ...options(0), signed: false });
}

/** The token of a request's cookie when its signature holds; undefined otherwise. */
export function sessionToken(request: FastifyRequest): string | undefined {
  const raw = request.cookies[SESSION_COOKIE];
  if (!raw) return undefined;
  const unsigned = request.unsignCookie(raw);
  return unsigned.valid && unsigned.value ? unsigned.value : undefined;
}
