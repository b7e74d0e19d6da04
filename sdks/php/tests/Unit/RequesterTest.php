<?php

declare(strict_types=1);

namespace Waytrack\Tests\Unit;

use PHPUnit\Framework\TestCase;
use Waytrack\Client;
use Waytrack\Config;
use Waytrack\Exception\ApiException;
use Waytrack\Exception\ConnectionException;
use Waytrack\Http\Requester;
use Waytrack\Http\Response;

/** The retry loop and the envelope handling, over a scripted transport (no network, no real waits). */
final class RequesterTest extends TestCase
{
    /** @var list<float> */
    private array $slept = [];

    /** @param array<string, mixed> $options */
    private function requester(ScriptedTransport $transport, array $options = []): Requester
    {
        $config = new Config($options + ['apiKey' => 'wt_test_secret', 'baseUrl' => 'https://api.example.com/v1', 'retryBaseDelay' => 0.01, 'retryMaxDelay' => 0.02]);
        return new Requester($config, $transport, function (float $seconds): void {
            $this->slept[] = $seconds;
        });
    }

    public function testReturnsTheEnvelopesDataAndSendsTheHeaders(): void
    {
        $transport = new ScriptedTransport([ScriptedTransport::ok(['stores' => [], 'hasMore' => false, 'nextCursor' => null])]);
        $data = $this->requester($transport)->request('GET', '/stores', ['limit' => 5]);

        self::assertSame(['stores' => [], 'hasMore' => false, 'nextCursor' => null], $data);
        $sent = $transport->sent[0];
        self::assertSame('GET', $sent['method']);
        self::assertSame('https://api.example.com/v1/stores?limit=5', $sent['url']);
        self::assertSame('Bearer wt_test_secret', $sent['headers']['Authorization']);
        self::assertSame('waytrack-php/' . Client::VERSION . ' php/' . PHP_VERSION, $sent['headers']['User-Agent']);
        self::assertArrayNotHasKey('Idempotency-Key', $sent['headers'], 'only POSTs carry an Idempotency-Key');
        self::assertNull($sent['body']);
    }

    public function testAPostIsRetriedOn503WithTheSameIdempotencyKey(): void
    {
        $transport = new ScriptedTransport([
            ScriptedTransport::error(503, 'service_unavailable'),
            ScriptedTransport::error(502, 'bad_gateway'),
            ScriptedTransport::ok(['clickId' => 'clk_1']),
        ]);
        $data = $this->requester($transport)->request('POST', '/track/click', [], ['fbclid' => 'a']);

        self::assertSame(['clickId' => 'clk_1'], $data);
        self::assertCount(3, $transport->sent);
        $keys = array_map(static fn (array $s): string => $s['headers']['Idempotency-Key'], $transport->sent);
        self::assertMatchesRegularExpression('/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/', $keys[0]);
        self::assertSame([$keys[0], $keys[0], $keys[0]], $keys);
        self::assertSame('{"fbclid":"a"}', $transport->sent[2]['body']);
        self::assertSame('application/json', $transport->sent[0]['headers']['Content-Type']);
        self::assertCount(2, $this->slept);
    }

    public function testEachPostCallHasItsOwnKeyUnlessOneIsGiven(): void
    {
        $transport = new ScriptedTransport([ScriptedTransport::ok([]), ScriptedTransport::ok([]), ScriptedTransport::ok([])]);
        $requester = $this->requester($transport);
        $requester->request('POST', '/track/click', [], ['fbclid' => 'a']);
        $requester->request('POST', '/track/click', [], ['fbclid' => 'a']);
        $requester->request('POST', '/track/click', [], ['fbclid' => 'a'], ['idempotencyKey' => 'order-1001']);

        self::assertNotSame($transport->sent[0]['headers']['Idempotency-Key'], $transport->sent[1]['headers']['Idempotency-Key']);
        self::assertSame('order-1001', $transport->sent[2]['headers']['Idempotency-Key']);
    }

    public function testA429WaitsAtLeastItsRetryAfter(): void
    {
        $transport = new ScriptedTransport([
            ScriptedTransport::error(429, 'rate_limit_exceeded', ['retryAfterSeconds' => 3], ['retry-after' => '3']),
            ScriptedTransport::ok(['ok' => true]),
        ]);
        self::assertSame(['ok' => true], $this->requester($transport)->request('GET', '/clicks'));
        self::assertSame([3.0], $this->slept);
    }

    public function testARetryAfterLongerThanWeWaitIsReturnedAtOnce(): void
    {
        $transport = new ScriptedTransport([ScriptedTransport::error(429, 'rate_limit_exceeded', null, ['retry-after' => '120'])]);
        try {
            $this->requester($transport, ['maxRetryAfter' => 10])->request('GET', '/clicks');
            self::fail('expected an ApiException');
        } catch (ApiException $error) {
            self::assertSame(429, $error->getHttpStatus());
            self::assertSame(120.0, $error->getRetryAfter());
        }
        self::assertCount(1, $transport->sent);
        self::assertSame([], $this->slept);
    }

    public function testOther4xxAreNeverRetried(): void
    {
        foreach ([[400, 'missing_required_field'], [401, 'unauthorized'], [404, 'store_not_found'], [409, 'conflict']] as [$status, $code]) {
            $transport = new ScriptedTransport([ScriptedTransport::error($status, $code, ['field' => 'fbclid', 'reason' => 'required_field_missing'])]);
            try {
                $this->requester($transport)->request('POST', '/track/click', [], ['storeId' => 'st_1']);
                self::fail('expected an ApiException');
            } catch (ApiException $error) {
                self::assertSame($code, $error->getErrorCode());
                self::assertSame($status, $error->getHttpStatus());
                self::assertSame("req_{$status}", $error->getRequestId());
                self::assertSame('fbclid', $error->getDetails()['field'] ?? null);
                self::assertSame("{$code} happened", $error->getMessage());
            }
            self::assertCount(1, $transport->sent, "HTTP {$status} must not be retried");
        }
        self::assertSame([], $this->slept);
    }

    public function testTheLastErrorIsThrownWhenRetriesRunOut(): void
    {
        $transport = new ScriptedTransport(array_fill(0, 3, ScriptedTransport::error(503, 'service_unavailable')));
        try {
            $this->requester($transport)->request('POST', '/track/conversion', [], ['orderId' => '1']);
            self::fail('expected an ApiException');
        } catch (ApiException $error) {
            self::assertSame('service_unavailable', $error->getErrorCode());
        }
        self::assertCount(3, $transport->sent, 'the first attempt and maxRetries (2) retries');
    }

    public function testMaxRetriesZeroSendsOnce(): void
    {
        $transport = new ScriptedTransport([ScriptedTransport::error(500, 'internal_error')]);
        $this->expectException(ApiException::class);
        try {
            $this->requester($transport, ['maxRetries' => 0])->request('GET', '/stores');
        } finally {
            self::assertCount(1, $transport->sent);
        }
    }

    public function testNetworkFailuresAreRetriedWithTheSameKey(): void
    {
        $transport = new ScriptedTransport([
            new ConnectionException('connection reset', CURLE_RECV_ERROR),
            new ConnectionException('timed out', CURLE_OPERATION_TIMEDOUT),
            ScriptedTransport::ok(['conversionId' => 'conv_1']),
        ]);
        self::assertSame(['conversionId' => 'conv_1'], $this->requester($transport)->request('POST', '/track/conversion', [], ['orderId' => '1']));
        self::assertSame($transport->sent[0]['headers']['Idempotency-Key'], $transport->sent[2]['headers']['Idempotency-Key']);
        self::assertCount(2, $this->slept);
    }

    public function testAnUntrustedCertificateIsNotRetried(): void
    {
        $transport = new ScriptedTransport([new ConnectionException('SSL certificate problem', CURLE_SSL_CACERT)]);
        $this->expectException(ConnectionException::class);
        try {
            $this->requester($transport)->request('GET', '/stores');
        } finally {
            self::assertCount(1, $transport->sent);
        }
    }

    public function testConnectionErrorsRunningOutAreThrownAsConnectionErrors(): void
    {
        $transport = new ScriptedTransport(array_fill(0, 3, new ConnectionException('refused', CURLE_COULDNT_CONNECT)));
        try {
            $this->requester($transport)->request('GET', '/stores');
            self::fail('expected a ConnectionException');
        } catch (ConnectionException $error) {
            self::assertSame(CURLE_COULDNT_CONNECT, $error->getCurlErrno());
        }
        self::assertCount(3, $transport->sent);
    }

    public function testASuccessThatIsNotAnEnvelopeIsAnError(): void
    {
        $transport = new ScriptedTransport([new Response(200, ['request-id' => 'req_x'], '<html>captive portal</html>')]);
        try {
            $this->requester($transport)->request('GET', '/stores');
            self::fail('expected an ApiException');
        } catch (ApiException $error) {
            self::assertSame('invalid_response', $error->getErrorCode());
            self::assertSame(200, $error->getHttpStatus());
            self::assertSame('req_x', $error->getRequestId());
        }
    }

    public function testAnErrorWithoutEnvelopeKeepsItsStatusAndIsRetriedIf5xx(): void
    {
        $transport = new ScriptedTransport([new Response(502, [], 'Bad Gateway'), new Response(502, [], 'Bad Gateway'), new Response(502, [], 'Bad Gateway')]);
        try {
            $this->requester($transport)->request('GET', '/stores');
            self::fail('expected an ApiException');
        } catch (ApiException $error) {
            self::assertSame('invalid_response', $error->getErrorCode());
            self::assertSame(502, $error->getHttpStatus());
            self::assertNull($error->getRequestId());
        }
        self::assertCount(3, $transport->sent);
    }
}
