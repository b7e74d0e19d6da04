<?php

declare(strict_types=1);

namespace Waytrack\Tests\Integration;

use PHPUnit\Framework\TestCase;
use Waytrack\Client;

/**
 * Tests against a real Waytrack server, described by the WAYTRACK_TEST_* environment that
 * server/test/sdks/harness.ts provides (server/test/sdks/php.test.ts runs these tests with it).
 * Without it they are skipped. Each test makes its own store, so no test depends on another.
 */
abstract class IntegrationTestCase extends TestCase
{
    /** Tiny backoff so the retry tests take milliseconds, not seconds. */
    protected const FAST_RETRIES = ['retryBaseDelay' => 0.001, 'retryMaxDelay' => 0.005];

    protected function setUp(): void
    {
        if (self::env('WAYTRACK_TEST_BASE_URL') === null) {
            self::markTestSkipped('WAYTRACK_TEST_BASE_URL is not set: run `npx vitest run server/test/sdks/php.test.ts` to test against a real server');
        }
    }

    protected static function env(string $name): ?string
    {
        $value = getenv($name);
        return $value === false || $value === '' ? null : $value;
    }

    protected static function required(string $name): string
    {
        $value = self::env($name);
        if ($value === null) {
            throw new \RuntimeException("{$name} is not set");
        }
        return $value;
    }

    /** A client of the server itself, live key, trusting its self-signed certificate. */
    protected static function client(array $options = []): Client
    {
        return new Client($options + [
            'apiKey' => self::required('WAYTRACK_TEST_LIVE_KEY'),
            'baseUrl' => self::required('WAYTRACK_TEST_BASE_URL'),
            'caFile' => self::required('WAYTRACK_TEST_CA_FILE'),
            'timeout' => 10,
        ] + self::FAST_RETRIES);
    }

    /** A client going through the proxy the test can tell to fail. */
    protected static function proxied(array $options = []): Client
    {
        return self::client($options + ['baseUrl' => self::required('WAYTRACK_TEST_PROXY_URL')]);
    }

    /** A store of our own, with a unique name so tests never share data. */
    protected static function newStore(Client $wt, array $fields = []): array
    {
        return $wt->stores->create($fields + [
            'name' => 'PHP ' . bin2hex(random_bytes(4)),
            'domain' => 'shop.example.com',
            'platform' => 'custom',
        ]);
    }

    /** A fresh fbclid: clicks are unique per store and fbclid. */
    protected static function fbclid(): string
    {
        return 'IwAR' . bin2hex(random_bytes(12));
    }

    /**
     * Talks to the proxy's control: POST /fail, POST /reset, GET /requests.
     *
     * @param array<string, mixed>|null $body
     */
    protected static function control(string $method, string $path, ?array $body = null): mixed
    {
        $curl = curl_init(self::required('WAYTRACK_TEST_CONTROL_URL') . $path);
        curl_setopt_array($curl, [
            CURLOPT_CUSTOMREQUEST => $method,
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_TIMEOUT => 5,
            CURLOPT_HTTPHEADER => ['Content-Type: application/json'],
        ]);
        if ($body !== null) {
            curl_setopt($curl, CURLOPT_POSTFIELDS, json_encode($body));
        }
        $answer = curl_exec($curl);
        $status = curl_getinfo($curl, CURLINFO_RESPONSE_CODE);
        if ($answer === false || $status >= 300) {
            throw new \RuntimeException("proxy control {$method} {$path} failed: " . curl_error($curl) . " (HTTP {$status})");
        }
        return $answer === '' ? null : json_decode($answer, true, 512, JSON_THROW_ON_ERROR);
    }

    /** @return list<array{method: string, path: string, idempotencyKey: ?string, userAgent: ?string, authorization: ?string}> */
    protected static function seenByProxy(): array
    {
        return self::control('GET', '/requests');
    }
}
