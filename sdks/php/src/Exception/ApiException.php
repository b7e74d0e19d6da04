<?php

declare(strict_types=1);

namespace Waytrack\Exception;

/**
 * The API answered with an error envelope (or with something that is not a Waytrack answer).
 *
 * The fields come from the envelope: `error.code`, `error.message`, `error.details` and
 * `meta.requestId` (the handle to quote when asking about a 5xx).
 */
final class ApiException extends WaytrackException
{
    /**
     * @param array<string, mixed>|null $details
     */
    public function __construct(
        string $message,
        private readonly string $errorCode,
        private readonly int $httpStatus,
        private readonly ?string $requestId = null,
        private readonly ?array $details = null,
        private readonly ?float $retryAfter = null,
    ) {
        parent::__construct($message, $httpStatus);
    }

    /**
     * Builds the exception from a decoded error envelope; anything that is not one (a proxy's HTML
     * page, an empty body) becomes `invalid_response` so callers still get the status.
     *
     * @param mixed $envelope the decoded JSON body, or null when it was not JSON
     */
    public static function fromEnvelope(int $httpStatus, mixed $envelope, ?string $requestId, ?float $retryAfter = null): self
    {
        $error = is_array($envelope) && is_array($envelope['error'] ?? null) ? $envelope['error'] : null;
        $metaId = is_array($envelope) && is_array($envelope['meta'] ?? null) ? ($envelope['meta']['requestId'] ?? null) : null;
        $requestId = is_string($metaId) ? $metaId : $requestId;
        if ($error === null || !is_string($error['code'] ?? null)) {
            return new self("HTTP {$httpStatus}: the answer is not a Waytrack envelope", 'invalid_response', $httpStatus, $requestId, null, $retryAfter);
        }
        $message = is_string($error['message'] ?? null) ? $error['message'] : $error['code'];
        $details = is_array($error['details'] ?? null) ? $error['details'] : null;
        return new self($message, $error['code'], $httpStatus, $requestId, $details, $retryAfter);
    }

    /** The API's error code, e.g. `missing_required_field`, `unauthorized`, `store_not_found`. */
    public function getErrorCode(): string
    {
        return $this->errorCode;
    }

    /** The HTTP status of the answer (400, 401, 404, 429, 503, …). */
    public function getHttpStatus(): int
    {
        return $this->httpStatus;
    }

    /** `meta.requestId` (or the `Request-Id` header): quote it when reporting a problem. */
    public function getRequestId(): ?string
    {
        return $this->requestId;
    }

    /**
     * `error.details` when one field is at fault, e.g. `['field' => 'fbclid', 'reason' => 'required_field_missing']`.
     *
     * @return array<string, mixed>|null
     */
    public function getDetails(): ?array
    {
        return $this->details;
    }

    /** The `Retry-After` the server sent with this answer, in seconds, if any. */
    public function getRetryAfter(): ?float
    {
        return $this->retryAfter;
    }
}
