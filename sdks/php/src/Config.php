<?php

declare(strict_types=1);

namespace Waytrack;

/**
 * The client's options, checked once at construction so a typo fails loudly instead of being
 * silently ignored (`'api_key'` for `'apiKey'` is an error, not an unauthenticated client).
 */
final class Config
{
    public const DEFAULT_BASE_URL = 'https://localhost:8443/v1';

    private const KNOWN = ['apiKey', 'baseUrl', 'caFile', 'ca', 'timeout', 'maxRetries', 'retryBaseDelay', 'retryMaxDelay', 'maxRetryAfter'];

    public readonly string $apiKey;
    public readonly string $baseUrl;
    /** Path of a PEM file with the CA (or self-signed) certificate to trust, instead of the system's. */
    public readonly ?string $caFile;
    /** The same as PEM text. */
    public readonly ?string $ca;
    /** Seconds one attempt may take, connection included. */
    public readonly float $timeout;
    /** Attempts after the first one, for network errors, timeouts, 429 and 5xx. */
    public readonly int $maxRetries;
    /** Backoff before the first retry, in seconds; it doubles on each retry. */
    public readonly float $retryBaseDelay;
    /** Longest backoff, in seconds. */
    public readonly float $retryMaxDelay;
    /** Longest `Retry-After` waited for, in seconds; a longer one is returned to the caller as the error. */
    public readonly float $maxRetryAfter;

    /**
     * @param array<string, mixed> $options
     */
    public function __construct(array $options)
    {
        $unknown = array_diff(array_keys($options), self::KNOWN);
        if ($unknown !== []) {
            throw new \InvalidArgumentException('unknown Waytrack option(s): ' . implode(', ', $unknown) . '; known: ' . implode(', ', self::KNOWN));
        }
        $apiKey = $options['apiKey'] ?? null;
        if (!is_string($apiKey) || trim($apiKey) === '') {
            throw new \InvalidArgumentException("the 'apiKey' option is required (a wt_live_… or wt_test_… key)");
        }
        $this->apiKey = $apiKey;
        $this->baseUrl = self::baseUrl($options['baseUrl'] ?? self::DEFAULT_BASE_URL);
        $this->caFile = self::caFile($options['caFile'] ?? null);
        $this->ca = self::optionalString($options, 'ca');
        $this->timeout = self::number($options, 'timeout', 10.0, 0.001);
        $this->maxRetries = self::integer($options, 'maxRetries', 2);
        $this->retryBaseDelay = self::number($options, 'retryBaseDelay', 0.5, 0.0);
        $this->retryMaxDelay = self::number($options, 'retryMaxDelay', 8.0, 0.0);
        $this->maxRetryAfter = self::number($options, 'maxRetryAfter', 60.0, 0.0);
    }

    private static function baseUrl(mixed $url): string
    {
        if (!is_string($url) || !preg_match('#^https?://[^/]+#i', $url)) {
            throw new \InvalidArgumentException("the 'baseUrl' option must be an absolute http(s) URL such as " . self::DEFAULT_BASE_URL);
        }
        return rtrim($url, '/');
    }

    private static function caFile(mixed $path): ?string
    {
        if ($path === null) {
            return null;
        }
        if (!is_string($path) || !is_readable($path)) {
            throw new \InvalidArgumentException("the 'caFile' option must be the path of a readable PEM file");
        }
        return $path;
    }

    /** @param array<string, mixed> $options */
    private static function optionalString(array $options, string $name): ?string
    {
        $value = $options[$name] ?? null;
        if ($value !== null && (!is_string($value) || $value === '')) {
            throw new \InvalidArgumentException("the '{$name}' option must be a non-empty string");
        }
        return $value;
    }

    /** @param array<string, mixed> $options */
    private static function number(array $options, string $name, float $default, float $minimum): float
    {
        $value = $options[$name] ?? $default;
        if ((!is_int($value) && !is_float($value)) || $value < $minimum || !is_finite((float) $value)) {
            throw new \InvalidArgumentException("the '{$name}' option must be a number of seconds ≥ {$minimum}");
        }
        return (float) $value;
    }

    /** @param array<string, mixed> $options */
    private static function integer(array $options, string $name, int $default): int
    {
        $value = $options[$name] ?? $default;
        if (!is_int($value) || $value < 0) {
            throw new \InvalidArgumentException("the '{$name}' option must be an integer ≥ 0");
        }
        return $value;
    }
}
