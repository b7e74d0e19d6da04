import type { FastifyInstance } from 'fastify';
import { setPassword } from '../../src/accounts/accounts.js';
import { SESSION_COOKIE } from '../../src/dashboard/cookie.js';
import type { Database } from '../../src/db/database.js';
import { type ApiResponse, call } from '../helpers.js';

/** What a signed-in browser holds: the session cookie and the CSRF token the page keeps. */
export interface DashboardSession {
  cookie: string;
  csrfToken: string;
}

export const PASSWORD = 'correct horse battery staple';

/** Gives an account of the test context a dashboard password. */
export async function withPassword(database: Database, email: string, password = PASSWORD): Promise<void> {
  await setPassword(database, email, password);
}

export function signInRequest(app: FastifyInstance, email: string, password: string): Promise<ApiResponse> {
  return call(app, 'POST', '/dashboard/api/session', { body: { email, password } });
}

export async function signIn(app: FastifyInstance, email: string, password = PASSWORD): Promise<DashboardSession> {
  const res = await signInRequest(app, email, password);
  if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${JSON.stringify(res.body)}`);
  const cookie = res.raw.cookies.find((c) => c.name === SESSION_COOKIE);
  if (!cookie) throw new Error('sign-in set no session cookie');
  return { cookie: `${SESSION_COOKIE}=${cookie.value}`, csrfToken: res.body.data.csrfToken };
}

/** A dashboard API call as the page makes it: cookie, CSRF token on changes, and the mode. */
export function dashboardCall(
  app: FastifyInstance,
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
  url: string,
  options: {
    session?: DashboardSession;
    body?: unknown;
    mode?: 'live' | 'test';
    headers?: Record<string, string>;
    csrf?: boolean;
  } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = {};
  if (options.session) headers.cookie = options.session.cookie;
  if (options.session && method !== 'GET' && options.csrf !== false) headers['x-csrf-token'] = options.session.csrfToken;
  if (options.mode) headers['waytrack-mode'] = options.mode;
  return call(app, method, url, { body: options.body, headers: { ...headers, ...options.headers } });
}
