<?php

declare(strict_types=1);

namespace Waytrack\Http;

/** Builds query strings the way the API reads them. */
final class Query
{
    /**
     * `null` parameters are left out (so optional filters can be passed through unconditionally),
     * and booleans are written `true`/`false` (PHP's own http_build_query would write 1 and 0,
     * which the API refuses for `attributed`).
     *
     * @param array<string, mixed> $params
     */
    public static function build(array $params): string
    {
        $pairs = [];
        foreach ($params as $name => $value) {
            if ($value === null) {
                continue;
            }
            if (is_bool($value)) {
                $value = $value ? 'true' : 'false';
            }
            if (!is_scalar($value)) {
                throw new \InvalidArgumentException("query parameter '{$name}' must be a string, number or boolean");
            }
            $pairs[] = rawurlencode((string) $name) . '=' . rawurlencode((string) $value);
        }
        return $pairs === [] ? '' : '?' . implode('&', $pairs);
    }
}
