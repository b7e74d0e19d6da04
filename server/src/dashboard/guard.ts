import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Database } from '../db/database.js';
import { ApiError, invalid } from '../http/errors.js';
import { clearSessionCookie, SESSION_COOKIE, sessionToken, setSessionCookie } from './cookie.js';
import { csrfTokenMatches, resumeSession, type Session } from './sessions.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * How a route is served under /dashboard/api: `session` needs a signed-in owner, `optional`
     * takes one if there is one (asking whether one is signed in), `public` is sign-in itself.
     * A route without it is not served there (404).
     */
    dashboard?: 'session' | 'optional' | 'public';
  }
  interface FastifyRequest {
    /** The signed-in owner of a dashboard request. */
    dashboardSession?: Session;
  }
}

/** Which mode's data a dashboard request reads and writes: `live` (default) or `test`. */
export const MODE_HEADER = 'Waytrack-Mode';
/** The session's synchronizer token, required on every state-changing request. */
export const CSRF_HEADER = 'X-CSRF-Token';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * A state-changing request must come from the dashboard's own pages. Browsers say where a
 * request comes from (Origin; Sec-Fetch-Site in current ones): anything else is refused before
 * the session is even looked at. Clients that send neither still need the CSRF token.
 */
function checkSameOrigin(request: FastifyRequest): void {
  const site = request.headers['sec-fetch-site'];
  const origin = request.headers.origin;
  let originHost: string | undefined;
  if (origin !== undefined) {
    try {
      originHost = new URL(origin).host;
    } catch {
      originHost = undefined;
    }
  }
  const crossSite =
    (site !== undefined && site !== 'same-origin' && site !== 'none') || (origin !== undefined && originHost !== request.host);
  if (crossSite) {
    throw new ApiError('forbidden', 'The dashboard API accepts state-changing requests only from the dashboard itself', {
      field: 'Origin',
      reason: 'unknown_value',
    });
  }
}

function checkCsrf(request: FastifyRequest, session: Session): void {
  const given = request.headers[CSRF_HEADER.toLowerCase()];
  const token = Array.isArray(given) ? given[0] : given;
  if (!token) {
    throw new ApiError('forbidden', `Missing ${CSRF_HEADER} header: send the token GET /dashboard/api/session returned`, {
      field: CSRF_HEADER,
      reason: 'required_field_missing',
    });
  }
  if (!csrfTokenMatches(session, token)) {
    throw new ApiError('forbidden', `The ${CSRF_HEADER} header does not match this session`, {
      field: CSRF_HEADER,
      reason: 'unknown_value',
    });
  }
}

function modeOf(request: FastifyRequest): boolean {
  const header = request.headers[MODE_HEADER.toLowerCase()];
  const mode = Array.isArray(header) ? header[0] : header;
  if (mode === undefined || mode === 'live') return true;
  if (mode === 'test') return false;
  throw invalid(MODE_HEADER, 'unknown_value', `${MODE_HEADER} must be live or test`);
}

/**
 * The one hook in front of every /dashboard/api route, in api.md's order: the route is served
 * there → authentication (the session cookie, never an API key) → same origin and CSRF token
 * for changes → the mode. It then sets `request.auth` as an API key would, so the /v1 route
 * modules and domain functions the dashboard reuses see the owner's account and chosen mode.
 */
export function dashboardGuard(database: Database) {
  return async function guard(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const access = request.routeOptions.config.dashboard;
    if (access === undefined) throw new ApiError('not_found', `No route ${request.method} ${request.url.split('?')[0]}`);
    if (request.headers.authorization !== undefined) {
      throw new ApiError(
        'unauthorized',
        'The dashboard API takes the session cookie of a signed-in owner, not an API key; API keys are for /v1',
      );
    }
    const changes = !SAFE_METHODS.has(request.method);
    if (changes) checkSameOrigin(request);
    if (access === 'public') return;

    const token = sessionToken(request);
    const session = token === undefined ? undefined : await resumeSession(database, token);
    if (!session) {
      const hadCookie = request.cookies[SESSION_COOKIE] !== undefined;
      if (hadCookie) clearSessionCookie(reply);
      if (access === 'optional') return;
      throw new ApiError('unauthorized', hadCookie ? 'Your session has ended; sign in again' : 'Sign in to use the dashboard');
    }
    if (changes) checkCsrf(request, session);
    if (session.renewed && token !== undefined) setSessionCookie(reply, token);
    request.dashboardSession = session;
    // The owner may do anything with their own account; the mode is the page's Test mode switch.
    request.auth = { accountId: session.accountId, livemode: modeOf(request), keyId: '', scopes: ['*'] };
  };
}
