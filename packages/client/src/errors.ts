/** `details` of an error envelope: the field at fault and why, plus whatever the code adds. */
export interface ErrorDetails {
  field?: string;
  reason?: string;
  [key: string]: unknown;
}

/**
 * The API answered with an error (any status, or a response that is not a Waytrack envelope).
 * `code`, `message`, `details` and `requestId` come from the envelope; `status` is the HTTP status.
 */
export class WaytrackError extends Error {
  override readonly name = 'WaytrackError';
  /** Snake_case code from the API's closed list (`invalid_request`, `unauthorized`, …). */
  readonly code: string;
  /** HTTP status of the response. */
  readonly status: number;
  /** The response's request id (`req_…`): quote it when reporting a problem. */
  readonly requestId: string | null;
  /** Present when one field is at fault: `details.field` is its JSON path, `details.reason` why. */
  readonly details: ErrorDetails | undefined;

  constructor(init: { code: string; status: number; message: string; requestId: string | null; details?: ErrorDetails }) {
    super(init.message);
    this.code = init.code;
    this.status = init.status;
    this.requestId = init.requestId;
    this.details = init.details;
  }
}

/**
 * No answer from the API: the connection was refused or dropped, TLS failed (an untrusted
 * certificate: see the `ca` option), or every attempt timed out. The request may or may not
 * have been processed; POSTs are safe to send again with the same `idempotencyKey`.
 */
export class WaytrackConnectionError extends Error {
  override readonly name = 'WaytrackConnectionError';
  /** True when the last attempt ran out of time (`timeoutMs`) rather than failing outright. */
  readonly timedOut: boolean;

  constructor(message: string, options: { cause?: unknown; timedOut?: boolean } = {}) {
    super(message, { cause: options.cause });
    this.timedOut = options.timedOut ?? false;
  }
}
