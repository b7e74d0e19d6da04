<?php

declare(strict_types=1);

namespace Waytrack\Exception;

/**
 * No answer came from the API: the connection was refused or dropped, the TLS handshake failed
 * (e.g. an untrusted certificate), or the request timed out. The request may or may not have
 * reached the server; a POST is safe to send again with the same Idempotency-Key.
 */
final class ConnectionException extends WaytrackException
{
    public function __construct(
        string $message,
        private readonly int $curlErrno = 0,
        ?\Throwable $previous = null,
    ) {
        parent::__construct($message, $curlErrno, $previous);
    }

    /** curl's error number (CURLE_*), e.g. 7 connection refused, 28 timeout, 60 untrusted certificate. */
    public function getCurlErrno(): int
    {
        return $this->curlErrno;
    }

    public function isTimeout(): bool
    {
        return $this->curlErrno === CURLE_OPERATION_TIMEDOUT;
    }
}
