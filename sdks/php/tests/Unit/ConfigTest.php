<?php

declare(strict_types=1);

namespace Waytrack\Tests\Unit;

use PHPUnit\Framework\TestCase;
use Waytrack\Client;
use Waytrack\Config;

final class ConfigTest extends TestCase
{
    public function testDefaultsFollowTheContract(): void
    {
        $config = new Config(['apiKey' => 'wt_test_x']);
        self::assertSame('https://localhost:8443/v1', $config->baseUrl);
        self::assertSame(10.0, $config->timeout);
        self::assertSame(2, $config->maxRetries);
        self::assertNull($config->caFile);
        self::assertNull($config->ca);
    }

    public function testBaseUrlLosesItsTrailingSlash(): void
    {
        self::assertSame('https://api.example.com/v1', (new Config(['apiKey' => 'k', 'baseUrl' => 'https://api.example.com/v1/']))->baseUrl);
    }

    public function testApiKeyIsRequired(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        $this->expectExceptionMessage("'apiKey'");
        new Client([]);
    }

    public function testBlankApiKeyIsRefused(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        new Config(['apiKey' => '  ']);
    }

    public function testUnknownOptionIsRefusedByName(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        $this->expectExceptionMessage('api_key');
        new Client(['apiKey' => 'k', 'api_key' => 'k']);
    }

    public function testUnreadableCaFileIsRefused(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        new Config(['apiKey' => 'k', 'caFile' => '/nonexistent/ca.pem']);
    }

    public function testRelativeBaseUrlIsRefused(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        new Config(['apiKey' => 'k', 'baseUrl' => 'localhost:8443/v1']);
    }

    public function testNegativeMaxRetriesIsRefused(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        new Config(['apiKey' => 'k', 'maxRetries' => -1]);
    }

    public function testTimeoutMustBeANumber(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        new Config(['apiKey' => 'k', 'timeout' => '10']);
    }

    public function testNumbersAreKept(): void
    {
        $config = new Config(['apiKey' => 'k', 'timeout' => 2, 'maxRetries' => 0, 'retryBaseDelay' => 0.001, 'maxRetryAfter' => 5]);
        self::assertSame(2.0, $config->timeout);
        self::assertSame(0, $config->maxRetries);
        self::assertSame(0.001, $config->retryBaseDelay);
        self::assertSame(5.0, $config->maxRetryAfter);
    }
}
