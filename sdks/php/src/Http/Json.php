<?php

declare(strict_types=1);

namespace Waytrack\Http;

/** JSON in and out, with PHP's array ambiguities resolved the way the API expects. */
final class Json
{
    /**
     * A request body is always a JSON object: an empty PHP array would otherwise be sent as `[]`.
     * Slashes stay unescaped so URLs read as sent; `1.0` stays a number with a fraction.
     *
     * @param array<string, mixed> $body
     */
    public static function encodeBody(array $body): string
    {
        if ($body === []) {
            return '{}';
        }
        if (array_is_list($body)) {
            throw new \InvalidArgumentException('a request body must be an associative array keyed by the API field names');
        }
        return json_encode($body, JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_PRESERVE_ZERO_FRACTION);
    }

    /** Decodes an answer into associative arrays; null when the body is not JSON. */
    public static function decode(string $body): mixed
    {
        if ($body === '') {
            return null;
        }
        try {
            return json_decode($body, true, 512, JSON_THROW_ON_ERROR | JSON_BIGINT_AS_STRING);
        } catch (\JsonException) {
            return null;
        }
    }
}
