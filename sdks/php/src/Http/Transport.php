<?php

declare(strict_types=1);

namespace Waytrack\Http;

use Waytrack\Exception\ConnectionException;

/** Sends one HTTP request and returns the answer as received. CurlTransport is the real one. */
interface Transport
{
    /**
     * @param array<string, string> $headers
     * @throws ConnectionException when no HTTP answer was received
     */
    public function send(string $method, string $url, array $headers, ?string $body): Response;
}
