<?php

declare(strict_types=1);

namespace Waytrack\Tests\Integration;

use Waytrack\Client;
use Waytrack\Exception\ApiException;

/** Retries over the wire, through the proxy that fails as told and records what it saw. */
final class RetriesTest extends IntegrationTestCase
{
    /** @var array<string, mixed> */
    private array $store;

    protected function setUp(): void
    {
        parent::setUp();
        $this->store = self::newStore(self::client());
        self::control('POST', '/reset');
    }

    protected function tearDown(): void
    {
        if (self::env('WAYTRACK_TEST_CONTROL_URL') !== null) {
            self::control('POST', '/reset');
        }
    }

    private function order(string $orderId): array
    {
        return ['storeId' => $this->store['id'], 'eventType' => 'Purchase', 'orderId' => $orderId, 'eventValue' => 20, 'currency' => 'USD'];
    }

    /** @return list<array<string, mixed>> the proxy's log for one path */
    private static function seen(string $path): array
    {
        return array_values(array_filter(self::seenByProxy(), static fn (array $r): bool => $r['path'] === $path));
    }

    public function testA503IsRetriedWithTheSameIdempotencyKey(): void
    {
        self::control('POST', '/fail', ['status' => 503, 'count' => 2]);
        $result = self::proxied()->track->conversion($this->order('r-503'));
        self::assertFalse($result['duplicate'], 'the failed attempts never reached the server');

        $posts = self::seen('/v1/track/conversion');
        self::assertCount(3, $posts);
        self::assertNotNull($posts[0]['idempotencyKey']);
        self::assertSame(array_fill(0, 3, $posts[0]['idempotencyKey']), array_column($posts, 'idempotencyKey'));
    }

    public function testA429WaitsForItsRetryAfter(): void
    {
        self::control('POST', '/fail', ['status' => 429, 'count' => 1, 'retryAfter' => 1]);
        $started = microtime(true);
        $click = self::proxied()->track->click(['fbclid' => self::fbclid(), 'storeId' => $this->store['id'], 'landingPage' => 'https://shop.example.com/']);
        self::assertGreaterThanOrEqual(0.95, microtime(true) - $started, 'Retry-After: 1 is honoured despite the tiny backoff');
        self::assertTrue($click['tracked']);

        $posts = self::seen('/v1/track/click');
        self::assertCount(2, $posts);
        self::assertSame($posts[0]['idempotencyKey'], $posts[1]['idempotencyKey']);
    }

    public function testAClosedConnectionIsRetriedWithTheSameKey(): void
    {
        self::control('POST', '/fail', ['status' => 0, 'count' => 1]);
        $result = self::proxied()->track->conversion($this->order('r-closed'));
        self::assertStringStartsWith('conv_', $result['conversionId']);

        $posts = self::seen('/v1/track/conversion');
        self::assertCount(2, $posts);
        self::assertSame($posts[0]['idempotencyKey'], $posts[1]['idempotencyKey']);
    }

    public function testAGetIsRetriedWithoutAKey(): void
    {
        self::control('POST', '/fail', ['status' => 503, 'count' => 1]);
        self::assertSame($this->store['id'], self::proxied()->stores->retrieve($this->store['id'])['id']);
        $gets = self::seen('/v1/stores/' . $this->store['id']);
        self::assertSame(['GET', 'GET'], array_column($gets, 'method'));
        self::assertSame([null, null], array_column($gets, 'idempotencyKey'));
    }

    public function testAPlain4xxIsNotRetried(): void
    {
        try {
            self::proxied()->track->conversion(['storeId' => $this->store['id'], 'eventType' => 'Purchase', 'orderId' => 'r-bad', 'currency' => 'USD']);
            self::fail('expected an ApiException');
        } catch (ApiException $error) {
            self::assertSame(400, $error->getHttpStatus());
            self::assertSame('eventValue', $error->getDetails()['field'] ?? null);
        }
        self::assertCount(1, self::seen('/v1/track/conversion'));
    }

    public function testGivingUpAfterMaxRetriesThrowsTheLastError(): void
    {
        self::control('POST', '/fail', ['status' => 503, 'count' => 10]);
        try {
            self::proxied(['maxRetries' => 2])->track->conversion($this->order('r-down'));
            self::fail('expected an ApiException');
        } catch (ApiException $error) {
            self::assertSame(503, $error->getHttpStatus());
            self::assertSame('service_unavailable', $error->getErrorCode());
            self::assertSame('req_proxy', $error->getRequestId());
        }
        self::assertCount(3, self::seen('/v1/track/conversion'));
    }

    public function testARetryAfterBeyondTheLimitIsNotWaitedFor(): void
    {
        self::control('POST', '/fail', ['status' => 429, 'count' => 1, 'retryAfter' => 30]);
        try {
            self::proxied(['maxRetryAfter' => 5])->stores->list();
            self::fail('expected an ApiException');
        } catch (ApiException $error) {
            self::assertSame(429, $error->getHttpStatus());
            self::assertSame(30.0, $error->getRetryAfter());
        }
        self::assertCount(1, self::seen('/v1/stores'));
    }

    public function testEveryRequestNamesTheLibraryAndCarriesTheKey(): void
    {
        $wt = self::proxied();
        $wt->stores->list(['limit' => 1]);
        $wt->track->conversion($this->order('r-ua-1'));
        $wt->track->conversion($this->order('r-ua-2'), ['idempotencyKey' => 'php-test-' . bin2hex(random_bytes(6))]);

        $seen = self::seenByProxy();
        self::assertCount(3, $seen);
        foreach ($seen as $request) {
            self::assertSame('waytrack-php/' . Client::VERSION . ' php/' . PHP_VERSION, $request['userAgent']);
            self::assertSame('Bearer ' . self::required('WAYTRACK_TEST_LIVE_KEY'), $request['authorization']);
        }
        self::assertNotSame($seen[1]['idempotencyKey'], $seen[2]['idempotencyKey'], 'each call has its own key');
        self::assertStringStartsWith('php-test-', $seen[2]['idempotencyKey']);
    }
}
