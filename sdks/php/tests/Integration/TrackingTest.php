<?php

declare(strict_types=1);

namespace Waytrack\Tests\Integration;

final class TrackingTest extends IntegrationTestCase
{
    public function testConsentIsSentAndShown(): void
    {
        $wt = self::client();
        $store = self::newStore($wt);
        $result = $wt->track->conversion([
            'storeId' => $store['id'],
            'eventType' => 'Purchase',
            'orderId' => 'php-consent-' . self::fbclid(),
            'eventValue' => 1,
            'currency' => 'usd',
            'consent' => ['adUserData' => 'denied'],
            'limitedDataUse' => true,
        ]);
        $stored = $wt->conversions->retrieve($result['conversionId']);
        self::assertSame(['adStorage' => 'granted', 'adUserData' => 'denied', 'adPersonalization' => 'granted'], $stored['consent']);
        self::assertTrue($stored['limitedDataUse']);
    }

    public function testAClickThenAnAttributedConversionAndItsDuplicate(): void
    {
        $wt = self::client();
        $store = self::newStore($wt);
        $fbclid = self::fbclid();

        $click = $wt->track->click([
            'fbclid' => $fbclid,
            'storeId' => $store['id'],
            'landingPage' => "https://shop.example.com/p/1?utm_source=facebook&utm_campaign=spring&fbclid={$fbclid}",
            'ipAddress' => '203.0.113.7',
            'userAgent' => 'Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0',
        ]);
        self::assertStringStartsWith('clk_', $click['clickId']);
        self::assertSame($fbclid, $click['fbclid']);
        self::assertTrue($click['tracked']);
        self::assertFalse($click['duplicate']);

        $again = $wt->track->click(['fbclid' => $fbclid, 'storeId' => $store['id'], 'landingPage' => 'https://shop.example.com/']);
        self::assertTrue($again['duplicate']);
        self::assertSame($click['clickId'], $again['clickId']);

        $order = [
            'storeId' => $store['id'],
            'eventType' => 'Purchase',
            'orderId' => 'php-1001',
            'eventValue' => 49.99,
            'currency' => 'usd',
            'fbclid' => $fbclid,
            'customerData' => ['email' => ' Buyer@Example.com '],
            'products' => [['productId' => 'sku-1', 'price' => 49.99, 'quantity' => 1]],
        ];
        $conversion = $wt->track->conversion($order);
        self::assertStringStartsWith('conv_', $conversion['conversionId']);
        self::assertSame('Purchase', $conversion['eventType']);
        self::assertTrue($conversion['attributed']);
        self::assertSame($click['clickId'], $conversion['attributedTo']['clickId']);
        self::assertSame($fbclid, $conversion['attributedTo']['fbclid']);
        self::assertSame(100, $conversion['attributedTo']['confidenceScore']);
        self::assertFalse($conversion['capiSent'], 'the store has no Conversions API configured');
        self::assertFalse($conversion['duplicate']);

        $duplicate = $wt->track->conversion($order);
        self::assertTrue($duplicate['duplicate']);
        self::assertSame($conversion['conversionId'], $duplicate['conversionId']);
        self::assertSame($conversion['attributedTo'], $duplicate['attributedTo']);

        $stored = $wt->conversions->retrieve($conversion['conversionId']);
        self::assertSame('php-1001', $stored['orderId']);
        self::assertSame(49.99, $stored['eventValue']);
        self::assertSame('USD', $stored['currency']);
        self::assertTrue($stored['livemode']);
        self::assertSame('explicit', $stored['attribution']['signal']);
        self::assertSame('sku-1', $stored['products'][0]['productId']);
        self::assertArrayNotHasKey('customerData', $stored, 'raw customer data is never returned');

        $storedClick = $wt->clicks->retrieve($click['clickId']);
        self::assertSame($store['id'], $storedClick['storeId']);
        self::assertSame('facebook', $storedClick['utm']['source']);
        self::assertSame('spring', $storedClick['utm']['campaign']);
        self::assertSame('203.0.113.7', $storedClick['ipAddress']);
    }

    public function testIdentifyLinksABrowserToAnEmail(): void
    {
        $wt = self::client();
        $store = self::newStore($wt);
        $fbclid = self::fbclid();
        $visitor = 'wt.php-' . $fbclid;
        $click = $wt->track->click([
            'fbclid' => $fbclid,
            'storeId' => $store['id'],
            'landingPage' => "https://shop.example.com/p/1?fbclid={$fbclid}",
            'visitorId' => $visitor,
            'ipAddress' => '198.51.100.72',
        ]);
        $linked = $wt->track->identify(['storeId' => $store['id'], 'visitorId' => $visitor, 'email' => ' PHP.Buyer@Example.com']);
        self::assertSame([true, 1, false], [$linked['identified'], $linked['links'], $linked['duplicate']]);
        $again = $wt->track->identify(['storeId' => $store['id'], 'visitorId' => $visitor, 'email' => 'php.buyer@example.com']);
        self::assertTrue($again['duplicate']);
        $conversion = $wt->track->conversion([
            'storeId' => $store['id'],
            'eventType' => 'Purchase',
            'orderId' => 'php-identify-' . $fbclid,
            'eventValue' => 10,
            'currency' => 'usd',
            'customerData' => ['email' => 'php.buyer@example.com'],
            'ipAddress' => '203.0.113.72',
        ]);
        self::assertTrue($conversion['attributed']);
        self::assertSame($click['clickId'], $conversion['attributedTo']['clickId']);
        try {
            $wt->track->identify(['storeId' => $store['id'], 'email' => 'x@example.com']);
            self::fail('an identify without a browser id was accepted');
        } catch (\Waytrack\Exception\ApiException $e) {
            self::assertSame('missing_required_field', $e->getErrorCode());
            self::assertSame('visitorId', $e->getDetails()['field']);
        }
    }

    public function testAConversionWithoutAClickIsNotAttributed(): void
    {
        $wt = self::client();
        $store = self::newStore($wt);
        $result = $wt->track->conversion(['storeId' => $store['id'], 'eventType' => 'signup', 'orderId' => 'u-1', 'eventValue' => 0, 'currency' => 'USD']);
        self::assertFalse($result['attributed']);
        self::assertArrayNotHasKey('attributedTo', $result);
    }

    public function testClickPagesAndTheIteratorOverSeveralPages(): void
    {
        $wt = self::client();
        $store = self::newStore($wt);
        $ids = [];
        for ($i = 0; $i < 5; $i++) {
            $ids[] = $wt->track->click(['fbclid' => self::fbclid(), 'storeId' => $store['id'], 'landingPage' => 'https://shop.example.com/'])['clickId'];
        }

        $page = $wt->clicks->list(['storeId' => $store['id'], 'limit' => 2]);
        self::assertCount(2, $page['clicks']);
        self::assertTrue($page['hasMore']);
        self::assertIsString($page['nextCursor']);

        $walked = array_column(iterator_to_array($wt->clicks->listAll(['storeId' => $store['id'], 'limit' => 2]), false), 'clickId');
        self::assertCount(5, $walked);
        sort($ids);
        sort($walked);
        self::assertSame($ids, $walked);
    }

    public function testConversionFiltersAndTheIterator(): void
    {
        $wt = self::client();
        $store = self::newStore($wt);
        $fbclid = self::fbclid();
        $wt->track->click(['fbclid' => $fbclid, 'storeId' => $store['id'], 'landingPage' => 'https://shop.example.com/']);
        $attributed = $wt->track->conversion(['storeId' => $store['id'], 'eventType' => 'Purchase', 'orderId' => 'a-1', 'eventValue' => 10, 'currency' => 'USD', 'fbclid' => $fbclid]);
        $others = [];
        for ($i = 0; $i < 3; $i++) {
            $others[] = $wt->track->conversion(['storeId' => $store['id'], 'eventType' => 'Lead', 'orderId' => "lead-{$i}", 'eventValue' => 0, 'currency' => 'USD'])['conversionId'];
        }

        $onlyAttributed = $wt->conversions->list(['storeId' => $store['id'], 'attributed' => true]);
        self::assertSame([$attributed['conversionId']], array_column($onlyAttributed['conversions'], 'conversionId'));
        self::assertFalse($onlyAttributed['hasMore']);
        self::assertNull($onlyAttributed['nextCursor']);

        $unattributed = array_column(iterator_to_array($wt->conversions->listAll(['storeId' => $store['id'], 'attributed' => false, 'limit' => 2]), false), 'conversionId');
        sort($others);
        sort($unattributed);
        self::assertSame($others, $unattributed);

        self::assertCount(4, iterator_to_array($wt->conversions->listAll(['storeId' => $store['id'], 'limit' => 1]), false));
    }

    public function testABatchRecordsInOrderWithOneResultPerEvent(): void
    {
        $wt = self::client();
        $store = self::newStore($wt);
        $fbclid = self::fbclid();
        $result = $wt->track->batch([
            ['type' => 'click', 'fbclid' => $fbclid, 'storeId' => $store['id'], 'landingPage' => 'https://shop.example.com/'],
            ['type' => 'conversion', 'storeId' => $store['id'], 'eventType' => 'Purchase', 'orderId' => 'php-batch-1', 'eventValue' => 5, 'currency' => 'USD', 'fbclid' => $fbclid],
            ['type' => 'click', 'fbclid' => 'not valid', 'storeId' => $store['id'], 'landingPage' => 'https://shop.example.com/'],
        ]);
        self::assertSame(3, $result['received']);
        self::assertSame(1, $result['failed']);
        [$click, $conversion, $bad] = $result['results'];
        self::assertSame([0, 200, false], [$click['index'], $click['status'], $click['data']['duplicate']]);
        self::assertSame($click['data']['clickId'], $conversion['data']['attributedTo']['clickId']);
        self::assertSame([2, 400, 'invalid_fbclid', 'fbclid'], [$bad['index'], $bad['status'], $bad['error']['code'], $bad['error']['details']['field']]);

        try {
            $wt->track->batch([]);
            self::fail('an empty batch must throw');
        } catch (\Waytrack\Exception\ApiException $error) {
            self::assertSame([400, 'invalid_request'], [$error->getHttpStatus(), $error->getErrorCode()]);
            self::assertSame('events', $error->getDetails()['field']);
        }
    }
}
