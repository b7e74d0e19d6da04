import { createHash } from 'node:crypto';
import { ApiError } from '../http/errors.js';
import { type RateLimiter, type RateLimitPolicy, rateLimitHeaders } from '../http/rate-limit.js';

/**
 * Sign-in attempts are limited twice: per client IP (one machine trying many accounts) and per
 * email (many machines trying one account). Both buckets live in the app's limiter, so with
 * REDIS_URL every instance counts the same attempts.
 */
export const SIGN_IN_PER_IP: RateLimitPolicy = { rps: 1 / 6, burst: 20 };
export const SIGN_IN_PER_EMAIL: RateLimitPolicy = { rps: 1 / 60, burst: 5 };

function refused(retryAfterSeconds: number, headers: Record<string, string>): ApiError {
  return new ApiError(
    'rate_limit_exceeded',
    `Too many sign-in attempts; try again in ${retryAfterSeconds} s`,
    { retryAfterSeconds },
    { 'Retry-After': String(retryAfterSeconds), ...headers },
  );
}

/** Counts one attempt; throws rate_limit_exceeded when either bucket is empty. */
export async function countSignInAttempt(limiter: RateLimiter, ip: string, email: string): Promise<void> {
  const byIp = await limiter.consume(`signin-ip:${ip}`, SIGN_IN_PER_IP);
  if (!byIp.allowed) throw refused(byIp.retryAfterSeconds, rateLimitHeaders(byIp));
  // The bucket is named by a hash: no email address is kept in the limiter (or Redis).
  const emailHash = createHash('sha256').update(email.trim().toLowerCase()).digest('hex');
  const byEmail = await limiter.consume(`signin-email:${emailHash}`, SIGN_IN_PER_EMAIL);
  if (!byEmail.allowed) throw refused(byEmail.retryAfterSeconds, rateLimitHeaders(byEmail));
}
