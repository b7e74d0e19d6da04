import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { verifyCredentials } from '../accounts/accounts.js';
import type { Database } from '../db/database.js';
import { ok } from '../http/envelope.js';
import { ApiError } from '../http/errors.js';
import type { RateLimiter } from '../http/rate-limit.js';
import { responses } from '../routes/common.js';
import { clearSessionCookie, setSessionCookie } from './cookie.js';
import { endSession, type Session, startSession } from './sessions.js';
import { countSignInAttempt } from './sign-in-limits.js';

const SignIn = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 254 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);

const SessionInfo = Type.Object({
  signedIn: Type.Boolean(),
  accountId: Type.Optional(Type.String()),
  email: Type.Optional(Type.String()),
  csrfToken: Type.Optional(Type.String({ description: 'Send it back as X-CSRF-Token with every state-changing request' })),
});

const present = (session: Session | undefined) =>
  session
    ? { signedIn: true, accountId: session.accountId, email: session.email, csrfToken: session.csrfToken }
    : { signedIn: false };

function sessionOf(request: { dashboardSession?: Session }): Session {
  if (!request.dashboardSession) throw new Error('dashboard route reached without a session');
  return request.dashboardSession;
}

/** Signing in and out of the dashboard. */
export const sessionRoutes: FastifyPluginAsyncTypebox<{ database: Database; limiter: RateLimiter }> = async (
  app,
  { database, limiter },
) => {
  // POST /dashboard/api/session — sign in with email and password
  app.post(
    '/session',
    { config: { dashboard: 'public' }, schema: { hide: true, body: SignIn, response: responses(200, SessionInfo) } },
    async (request, reply) => {
      const { email, password } = request.body;
      await countSignInAttempt(limiter, request.ip, email);
      const account = await verifyCredentials(database, email, password);
      // Never which of the two was wrong.
      if (!account) throw new ApiError('unauthorized', 'Invalid email or password');
      const { token, session } = await startSession(database, account);
      setSessionCookie(reply, token);
      return ok(request, present(session));
    },
  );

  // GET /dashboard/api/session — whether someone is signed in (who, and the session's CSRF token).
  // Nobody signed in is an answer, not an error: the page asks this before showing anything.
  app.get(
    '/session',
    { config: { dashboard: 'optional' }, schema: { hide: true, response: responses(200, SessionInfo) } },
    async (request) => ok(request, present(request.dashboardSession)),
  );

  // DELETE /dashboard/api/session — sign out: the session ends on the server, for every instance
  app.delete(
    '/session',
    {
      config: { dashboard: 'session' },
      schema: { hide: true, response: responses(200, Type.Object({ signedOut: Type.Literal(true) })) },
    },
    async (request, reply) => {
      await endSession(database, sessionOf(request));
      clearSessionCookie(reply);
      return ok(request, { signedOut: true as const });
    },
  );
};
