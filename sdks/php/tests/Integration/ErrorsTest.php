<?php

declare(strict_types=1);

namespace Waytrack\Tests\Integration;

use Waytrack\Client;
use Waytrack\Exception\ApiException;
use Waytrack\Exception\ConnectionException;

final class ErrorsTest extends IntegrationTestCase
{
    /** Runs $call and returns the ApiException it must throw. */
    private static function apiError(callable $call): ApiException
    {
        try {
            $call();
        } catch (ApiException $error) {
            return $error;
        }
        self::fail('expected an ApiException');
    }

    public function testABadKeyIs401Unauthorized(): void
    {
        $error = self::apiError(fn () => self::client(['apiKey' => 'wt_live_' . str_repeat('x', 40)])->stores->list());
        self::assertSame('unauthorized', $error->getErrorCode());
        self::assertSame(401, $error->getHttpStatus());
        self::assertStringStartsWith('req_', (string) $error->getRequestId());
        self::assertNotSame('', $error->getMessage());
    }

    public function testUnknownIdsAre404(): void
    {
        $wt = self::client();
        $store = self::apiError(fn () => $wt->stores->retrieve('st_00000000000000000000000000'));
        self::assertSame('store_not_found', $store->getErrorCode());
        self::assertSame(404, $store->getHttpStatus());

        $conversion = self::apiError(fn () => $wt->conversions->retrieve('conv_unknown'));
        self::assertSame('not_found', $conversion->getErrorCode());
        self::assertSame(404, $conversion->getHttpStatus());

        $click = self::apiError(fn () => $wt->track->click(['fbclid' => self::fbclid(), 'storeId' => 'st_nope', 'landingPage' => 'https://shop.example.com/']));
        self::assertSame('store_not_found', $click->getErrorCode());
    }

    public function testBadInputIs400WithTheField(): void
    {
        $wt = self::client();
        $store = self::newStore($wt);

        $missing = self::apiError(fn () => $wt->track->click(['storeId' => $store['id'], 'landingPage' => 'https://shop.example.com/']));
        self::assertSame('missing_required_field', $missing->getErrorCode());
        self::assertSame(400, $missing->getHttpStatus());
        self::assertSame('fbclid', $missing->getDetails()['field'] ?? null);

        $wrongType = self::apiError(fn () => $wt->track->conversion(['storeId' => $store['id'], 'eventType' => 'Purchase', 'orderId' => '1', 'eventValue' => '10', 'currency' => 'USD']));
        self::assertSame('invalid_request', $wrongType->getErrorCode());
        self::assertSame('eventValue', $wrongType->getDetails()['field'] ?? null);

        $currency = self::apiError(fn () => $wt->track->conversion(['storeId' => $store['id'], 'eventType' => 'Purchase', 'orderId' => '1', 'eventValue' => 10, 'currency' => 'XXQ']));
        self::assertSame('invalid_currency', $currency->getErrorCode());
        self::assertSame('currency', $currency->getDetails()['field'] ?? null);

        $fbclid = self::apiError(fn () => $wt->track->click(['fbclid' => 'bad fbclid!', 'storeId' => $store['id'], 'landingPage' => 'https://shop.example.com/']));
        self::assertSame('invalid_fbclid', $fbclid->getErrorCode());
    }

    public function testNothingListeningIsAConnectionException(): void
    {
        try {
            self::client(['baseUrl' => self::required('WAYTRACK_TEST_DEAD_URL')])->stores->list();
            self::fail('expected a ConnectionException');
        } catch (ConnectionException $error) {
            self::assertSame(CURLE_COULDNT_CONNECT, $error->getCurlErrno());
        }
    }

    public function testTheSelfSignedServerIsRefusedWithoutTheCa(): void
    {
        $wt = new Client(['apiKey' => self::required('WAYTRACK_TEST_LIVE_KEY'), 'baseUrl' => self::required('WAYTRACK_TEST_BASE_URL')] + self::FAST_RETRIES);
        try {
            $wt->stores->list();
            self::fail('an untrusted certificate must be refused');
        } catch (ConnectionException $error) {
            self::assertSame(60, $error->getCurlErrno(), $error->getMessage()); // CURLE_PEER_FAILED_VERIFICATION
        }
    }

    public function testTheCaCanBeGivenAsPemText(): void
    {
        $wt = new Client([
            'apiKey' => self::required('WAYTRACK_TEST_LIVE_KEY'),
            'baseUrl' => self::required('WAYTRACK_TEST_BASE_URL'),
            'ca' => (string) file_get_contents(self::required('WAYTRACK_TEST_CA_FILE')),
        ]);
        self::assertArrayHasKey('stores', $wt->stores->list(['limit' => 1]));
    }

    public function testATestKeyDoesNotSeeLiveData(): void
    {
        $live = self::client();
        $test = self::client(['apiKey' => self::required('WAYTRACK_TEST_TEST_KEY')]);
        $store = self::newStore($live);
        $click = $live->track->click(['fbclid' => self::fbclid(), 'storeId' => $store['id'], 'landingPage' => 'https://shop.example.com/']);

        self::assertSame($store['id'], $test->stores->retrieve($store['id'])['id'], 'stores are shared by both modes');
        self::assertSame([], $test->clicks->list(['storeId' => $store['id']])['clicks']);
        self::assertSame('not_found', self::apiError(fn () => $test->clicks->retrieve($click['clickId']))->getErrorCode());
    }
}
