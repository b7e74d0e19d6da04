/** The one closed list of error codes and their HTTP status (api.md §1). */
export const ERROR_STATUS = {
  invalid_request: 400,
  missing_required_field: 400,
  invalid_fbclid: 400,
  invalid_click_id: 400,
  invalid_currency: 400,
  unauthorized: 401,
  forbidden: 403,
  https_required: 403,
  store_not_found: 404,
  conversion_not_found: 404,
  not_found: 404,
  payload_too_large: 413,
  unprocessable_payload: 422,
  rate_limit_exceeded: 429,
  internal_error: 500,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export type ErrorReason =
  | 'required_field_missing'
  | 'invalid_type'
  | 'invalid_format'
  | 'out_of_range'
  | 'invalid_url'
  | 'expired'
  | 'unknown_value'
  | 'unknown_field'
  | 'malformed_json'
  | 'unsupported_media_type'
  | 'idempotency_key_reused'
  | 'idempotency_key_in_use'
  | 'currency_mismatch'
  | 'already_sent'
  | 'not_configured'
  | 'too_deep'
  | 'invalid_unicode'
  | 'malformed_request'
  | 'incomplete_body'
  | 'request_timeout'
  // Requests (docs/api.md "Requests"): a method the path does not answer (405), a key JSON must not use.
  | 'method_not_allowed'
  | 'reserved_key'
  // Publishable keys (api.md §6): a page on another origin, a route other than the tag's, a field the key may not set.
  | 'origin_not_allowed'
  | 'publishable_key_not_allowed'
  | 'not_allowed'
  // Errors that teach (docs/api.md "Errors that teach and other decisions").
  | 'duplicate_entry'
  | 'legacy_alias'
  | 'exists_in_other_mode'
  // The database's disk is full (503 service_unavailable): details.path says where.
  | 'disk_full'
  // Refunds (api.md §9): an orderId naming several non-Purchase conversions.
  | 'ambiguous_order'
  // Shop webhooks in (api.md §9): the signature header is absent or does not verify.
  | 'missing_signature'
  | 'invalid_signature'
  // Webhooks out (api.md §9): the account already has WEBHOOK_MAX_ENDPOINTS endpoints in the mode.
  | 'limit_reached';

export interface ErrorDetails {
  field?: string;
  reason?: ErrorReason;
  [key: string]: unknown;
}

/** The only error type the service throws on purpose; the global handler renders it. */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetails,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.status = ERROR_STATUS[code];
  }
}

/** Shorthand for the common "this field is wrong" error. */
export function fieldError(
  code: ErrorCode,
  field: string,
  reason: ErrorReason,
  message: string,
  extra?: Record<string, unknown>,
): ApiError {
  return new ApiError(code, message, { field, reason, ...extra });
}

export function invalid(field: string, reason: ErrorReason, message: string): ApiError {
  return fieldError('invalid_request', field, reason, message);
}
