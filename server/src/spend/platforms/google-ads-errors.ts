import { describeError, failureErrors, type GoogleAdsError, isTransient } from '../../destinations/google_ads/ads-api.js';
import type { SpendFetchResult } from './types.js';

/**
 * What a Google Ads API error answer means for a spend report (api.md §11): Google's body is a
 * google.rpc.Status `{error: {code, message, status, details: [GoogleAdsFailure {errors:
 * [{errorCode: {<kind>: <ENUM>}, message}], requestId}]}}` (searchStream may wrap it in an array,
 * alone or after the batches it had sent). The enums named here are Google's
 * AuthenticationErrorEnum, AuthorizationErrorEnum, QuotaErrorEnum and InternalErrorEnum
 * (google/ads/googleads/vNN/errors/*.proto); `credential` names the spend source's field to fix.
 */
export type GoogleStatus = { code?: unknown; message?: unknown; status?: unknown; details?: unknown };

type Failure = Extract<SpendFetchResult, { error: string }>;

const OAUTH_CODES = new Set([
  'OAUTH_TOKEN_INVALID',
  'OAUTH_TOKEN_EXPIRED',
  'OAUTH_TOKEN_DISABLED',
  'OAUTH_TOKEN_REVOKED',
  'OAUTH_TOKEN_HEADER_INVALID',
  'NOT_ADS_USER',
  'GOOGLE_ACCOUNT_DELETED',
  'GOOGLE_ACCOUNT_AUTHENTICATION_FAILED',
  'GOOGLE_ACCOUNT_USER_AND_ADS_USER_MISMATCH',
  'TWO_STEP_VERIFICATION_NOT_ENROLLED',
  'ADVANCED_PROTECTION_NOT_ENROLLED',
]);
const UNKNOWN_ACCOUNT = new Set(['CUSTOMER_NOT_FOUND', 'CLIENT_CUSTOMER_ID_INVALID', 'INVALID_CUSTOMER_ID']);
const NO_ACCESS = new Set(['USER_PERMISSION_DENIED', 'CUSTOMER_NOT_ENABLED', 'ACTION_NOT_PERMITTED', 'METRIC_ACCESS_DENIED']);

function codesOf(errors: GoogleAdsError[]): string[] {
  return errors.flatMap((e) => Object.values(e.errorCode ?? {}).map((v) => String(v)));
}

/** Whether the answer says only that the access token is not (or no longer) good: exchanging the refresh token again may help. */
export function isAccessTokenRefused(httpStatus: number, status: GoogleStatus | undefined): boolean {
  const codes = codesOf(failureErrors(status as { details?: unknown } | undefined));
  if (codes.some((c) => UNKNOWN_ACCOUNT.has(c) || NO_ACCESS.has(c) || c.startsWith('DEVELOPER_TOKEN'))) return false;
  return httpStatus === 401 || codes.some((c) => c.startsWith('OAUTH_TOKEN'));
}

/** Google's error answer as the spend report's error: whose credential, and whether a later try may succeed. */
export function googleAdsFailure(
  httpStatus: number,
  status: GoogleStatus | undefined,
  customerId: string,
  loginCustomerId: string | undefined,
): Failure {
  const errors = failureErrors(status as { details?: unknown } | undefined);
  const codes = codesOf(errors);
  const grpc = typeof status?.status === 'string' ? ` ${status.status}` : '';
  const said =
    errors.length > 0
      ? errors.map(describeError).join('; ')
      : typeof status?.message === 'string'
        ? status.message
        : 'no message';
  const platform = `Google Ads error (HTTP ${httpStatus}${grpc}): ${said}`;
  const has = (set: Set<string>) => codes.some((c) => set.has(c));
  if (has(UNKNOWN_ACCOUNT)) {
    return {
      side: 'platform',
      retryable: false,
      credential: 'customerIds',
      error: `Unknown account: Google Ads has no customer ${customerId} (check the 10-digit customer id, without dashes, in the google_ads spend source's customerIds). ${platform}`,
    };
  }
  if (codes.some((c) => c.startsWith('DEVELOPER_TOKEN'))) {
    return {
      side: 'platform',
      retryable: false,
      credential: 'developerToken',
      error: `Google Ads refused the developer token (Google Ads → Tools → API Center shows its access level; it needs Basic or Standard access for accounts other than test accounts). ${platform}`,
    };
  }
  if (codes.includes('INVALID_LOGIN_CUSTOMER_ID_SERVING_CUSTOMER_ID_COMBINATION')) {
    return {
      side: 'platform',
      retryable: false,
      credential: 'loginCustomerId',
      error: `Missing permission: manager account ${loginCustomerId ?? '(none)'} does not manage customer ${customerId}; set loginCustomerId to the manager account that does, or leave it out when the Google user has direct access. ${platform}`,
    };
  }
  if (has(NO_ACCESS)) {
    return {
      side: 'platform',
      retryable: false,
      credential: 'customerIds',
      error: `Missing permission: the Google account of the OAuth refresh token cannot read customer ${customerId}${
        loginCustomerId ? ` through manager account ${loginCustomerId}` : ''
      }; give that Google user access to the account (Google Ads → Admin → Access and security), or set loginCustomerId to the manager account it has access through. ${platform}`,
    };
  }
  if (has(OAUTH_CODES) || httpStatus === 401) {
    return {
      side: 'platform',
      retryable: false,
      credential: 'oauth.refreshToken',
      error: `Google Ads refused the OAuth credentials (expired or revoked token, or a Google account without Google Ads access); authorize again with the https://www.googleapis.com/auth/adwords scope and set oauth.refreshToken. ${platform}`,
    };
  }
  const transient = errors.length > 0 && errors.every(isTransient);
  if (httpStatus === 429 || httpStatus >= 500 || status?.status === 'RESOURCE_EXHAUSTED' || transient) {
    return { side: 'platform', retryable: true, error: platform };
  }
  return { side: 'platform', retryable: false, error: platform };
}
