<?php

declare(strict_types=1);

namespace Waytrack\Tests\Unit;

use PHPUnit\Framework\TestCase;
use Waytrack\Exception\ApiException;
use Waytrack\Exception\WaytrackException;

final class ApiExceptionTest extends TestCase
{
    public function testCarriesEverythingTheEnvelopeSays(): void
    {
        $envelope = [
            'success' => false,
            'error' => ['code' => 'invalid_fbclid', 'message' => 'fbclid is too old', 'details' => ['field' => 'timestamp', 'reason' => 'expired']],
            'meta' => ['timestamp' => '2026-11-22T10:00:00.000Z', 'requestId' => 'req_from_meta'],
        ];
        $error = ApiException::fromEnvelope(400, $envelope, 'req_from_header');

        self::assertInstanceOf(WaytrackException::class, $error);
        self::assertSame('invalid_fbclid', $error->getErrorCode());
        self::assertSame(400, $error->getHttpStatus());
        self::assertSame('fbclid is too old', $error->getMessage());
        self::assertSame('req_from_meta', $error->getRequestId());
        self::assertSame(['field' => 'timestamp', 'reason' => 'expired'], $error->getDetails());
        self::assertNull($error->getRetryAfter());
    }

    public function testWithoutDetailsTheyAreNull(): void
    {
        $error = ApiException::fromEnvelope(401, ['success' => false, 'error' => ['code' => 'unauthorized', 'message' => 'bad key']], 'req_h');
        self::assertNull($error->getDetails());
        self::assertSame('req_h', $error->getRequestId(), 'the Request-Id header stands in for a missing meta');
    }

    public function testSomethingElseIsAnInvalidResponse(): void
    {
        $error = ApiException::fromEnvelope(502, null, null, 2.0);
        self::assertSame('invalid_response', $error->getErrorCode());
        self::assertSame(502, $error->getHttpStatus());
        self::assertStringContainsString('502', $error->getMessage());
        self::assertSame(2.0, $error->getRetryAfter());
    }
}
