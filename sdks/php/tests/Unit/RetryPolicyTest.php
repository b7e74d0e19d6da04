<?php

declare(strict_types=1);

namespace Waytrack\Tests\Unit;

use PHPUnit\Framework\TestCase;
use Waytrack\Http\RetryPolicy;

final class RetryPolicyTest extends TestCase
{
    public function testOnly429And5xxAreRetried(): void
    {
        foreach ([429, 500, 502, 503, 504] as $status) {
            self::assertTrue(RetryPolicy::isRetryableStatus($status), "HTTP {$status}");
        }
        foreach ([400, 401, 403, 404, 409, 413, 422] as $status) {
            self::assertFalse(RetryPolicy::isRetryableStatus($status), "HTTP {$status}");
        }
    }

    public function testNetworkFailuresAreRetriedButUntrustedCertificatesAreNot(): void
    {
        foreach ([CURLE_COULDNT_CONNECT, CURLE_OPERATION_TIMEDOUT, CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_SSL_CONNECT_ERROR] as $errno) {
            self::assertTrue(RetryPolicy::isRetryableCurlError($errno), "curl error {$errno}");
        }
        foreach ([CURLE_SSL_CACERT, CURLE_SSL_CACERT_BADFILE, CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL] as $errno) {
            self::assertFalse(RetryPolicy::isRetryableCurlError($errno), "curl error {$errno}");
        }
    }

    public function testBackoffDoublesWithJitterAndIsCapped(): void
    {
        $policy = new RetryPolicy(5, 0.5, 2.0, 60.0);
        for ($i = 0; $i < 50; $i++) {
            self::assertThat($policy->delay(1, null), self::logicalAnd(self::greaterThanOrEqual(0.25), self::lessThanOrEqual(0.5)));
            self::assertThat($policy->delay(2, null), self::logicalAnd(self::greaterThanOrEqual(0.5), self::lessThanOrEqual(1.0)));
            self::assertThat($policy->delay(6, null), self::logicalAnd(self::greaterThanOrEqual(1.0), self::lessThanOrEqual(2.0)));
        }
    }

    public function testJitterSpreadsTheDelays(): void
    {
        $policy = new RetryPolicy(2, 1.0, 8.0, 60.0);
        $delays = array_map(static fn (): float => $policy->delay(1, null), range(1, 20));
        self::assertGreaterThan(1, count(array_unique($delays)));
    }

    public function testRetryAfterIsAFloor(): void
    {
        $policy = new RetryPolicy(2, 0.001, 0.01, 60.0);
        self::assertSame(3.0, $policy->delay(1, 3.0));
    }

    public function testRetryAfterBeyondTheLimitMeansGiveUp(): void
    {
        $policy = new RetryPolicy(2, 0.001, 0.01, 5.0);
        self::assertNull($policy->delay(1, 30.0));
        self::assertSame(5.0, $policy->delay(1, 5.0));
    }

    public function testRetryAfterIsReadInSecondsOrAsADate(): void
    {
        self::assertSame(1.0, RetryPolicy::parseRetryAfter('1'));
        self::assertSame(0.5, RetryPolicy::parseRetryAfter(' 0.5 '));
        $now = gmmktime(10, 0, 0, 11, 22, 2026);
        self::assertSame(30.0, RetryPolicy::parseRetryAfter('Sun, 22 Nov 2026 10:00:30 GMT', $now));
        self::assertSame(0.0, RetryPolicy::parseRetryAfter('Sun, 22 Nov 2026 09:00:00 GMT', $now));
        self::assertNull(RetryPolicy::parseRetryAfter(null));
        self::assertNull(RetryPolicy::parseRetryAfter('soon'));
    }
}
