// The dashboard's one door to the server: /dashboard/api, the session cookie (sent by the
// browser), the CSRF token on every change, and the Test mode switch's mode on every request.

export type Mode = 'live' | 'test';

/** An error answer of the API, with the envelope's code, message and details. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

const BASE = '/dashboard/api';

let csrfToken = '';
let mode: Mode = 'live';
let onSignedOut: (() => void) | undefined;

export function setCsrfToken(token: string): void {
  csrfToken = token;
}

export function setApiMode(next: Mode): void {
  mode = next;
}

/** Called when the server says the session is over (idle 12 h, signed out elsewhere). */
export function whenSignedOut(handler: () => void): void {
  onSignedOut = handler;
}

async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { 'Waytrack-Mode': mode };
  if (method !== 'GET') headers['X-CSRF-Token'] = csrfToken;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(`${BASE}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
    });
  } catch {
    throw new ApiError(0, 'network_error', 'The server could not be reached. Check your connection and try again.');
  }
  const envelope = (await response.json().catch(() => undefined)) as
    | { success: true; data: T }
    | { success: false; error: { code: string; message: string; details?: Record<string, unknown> } }
    | undefined;
  if (envelope?.success) return envelope.data;
  const error = envelope?.error ?? { code: 'internal_error', message: `The server answered ${response.status}.` };
  if (response.status === 401 && path !== '/session') onSignedOut?.();
  throw new ApiError(response.status, error.code, error.message, error.details);
}

/** Query string from the defined values only. */
export function query(params: Record<string, string | number | undefined>): string {
  const defined = Object.entries(params).filter(
    (entry): entry is [string, string | number] => entry[1] !== undefined && entry[1] !== '',
  );
  return defined.length === 0 ? '' : `?${new URLSearchParams(defined.map(([k, v]) => [k, String(v)])).toString()}`;
}

export const api = {
  get: <T>(path: string) => request<T>('GET', path),
  post: <T>(path: string, body?: unknown) => request<T>('POST', path, body),
  patch: <T>(path: string, body: unknown) => request<T>('PATCH', path, body),
  put: <T>(path: string, body: unknown) => request<T>('PUT', path, body),
  delete: <T>(path: string) => request<T>('DELETE', path),
};
