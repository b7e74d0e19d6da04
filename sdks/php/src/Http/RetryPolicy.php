<?php

declare(strict_types=1);

namespace Waytrack\Http;

/**
 * When to try a request again and how long to wait first.
 *
 * Retried: network failures and timeouts, 429 and 5xx — the answers that say "not now" rather
 * than "not this". Any other 4xx describes the request itself, so sending it again cannot help.
 */
final class RetryPolicy
{
    /**
     * curl errors that will not go away by trying again: a bad URL, or a certificate that is not
     * trusted (retrying an untrusted server would only delay the error the caller must see).
     */
    private const PERMANENT_CURL_ERRORS = [
        1, // CURLE_UNSUPPORTED_PROTOCOL
        3, // CURLE_URL_MALFORMAT
        58, // CURLE_SSL_CERTPROBLEM
        59, // CURLE_SSL_CIPHER
        60, // CURLE_PEER_FAILED_VERIFICATION (PHP names it CURLE_SSL_CACERT)
        77, // CURLE_SSL_CACERT_BADFILE
        83, // CURLE_SSL_ISSUER_ERROR
        90, // CURLE_SSL_PINNEDPUBKEYNOTMATCH
        91, // CURLE_SSL_INVALIDCERTSTATUS
    ];

    public function __construct(
        private readonly int $maxRetries,
        private readonly float $baseDelay,
        private readonly float $maxDelay,
        private readonly float $maxRetryAfter,
    ) {
    }

    public function maxRetries(): int
    {
        return $this->maxRetries;
    }

    public static function isRetryableStatus(int $status): bool
    {
        return $status === 429 || $status >= 500;
    }

    public static function isRetryableCurlError(int $errno): bool
    {
        return !in_array($errno, self::PERMANENT_CURL_ERRORS, true);
    }

    /**
     * Seconds to wait before retry number `$retry` (1 for the first retry), or null when the
     * server asked for a longer pause than we are willing to wait (the caller then gets the error).
     *
     * Exponential backoff with "equal jitter": half of the step is fixed, half random, so
     * clients that failed together do not come back together, yet each still waits. A
     * `Retry-After` is a floor: never come back earlier than the server asked.
     */
    public function delay(int $retry, ?float $retryAfter): ?float
    {
        if ($retryAfter !== null && $retryAfter > $this->maxRetryAfter) {
            return null;
        }
        $step = min($this->maxDelay, $this->baseDelay * (2 ** ($retry - 1)));
        $backoff = $step / 2 + $step / 2 * (mt_rand() / mt_getrandmax());
        return max($backoff, $retryAfter ?? 0.0);
    }

    /**
     * Reads `Retry-After`: whole (or decimal) seconds, or an HTTP date. Null when absent or unreadable.
     */
    public static function parseRetryAfter(?string $value, ?int $now = null): ?float
    {
        if ($value === null || trim($value) === '') {
            return null;
        }
        $value = trim($value);
        if (is_numeric($value)) {
            return max(0.0, (float) $value);
        }
        $date = strtotime($value);
        if ($date === false) {
            return null;
        }
        return (float) max(0, $date - ($now ?? time()));
    }
}
