<?php

declare(strict_types=1);

namespace Waytrack\Tests\Integration;

final class AnalyticsTest extends IntegrationTestCase
{
    public function testMetricsTimeseriesBreakdownAndAdSpend(): void
    {
        $wt = self::client();
        $store = self::newStore($wt);
        $today = gmdate('Y-m-d');
        $fbclid = self::fbclid();
        $wt->track->click(['fbclid' => $fbclid, 'storeId' => $store['id'], 'landingPage' => 'https://shop.example.com/?utm_campaign=spring']);
        $wt->track->click(['fbclid' => self::fbclid(), 'storeId' => $store['id'], 'landingPage' => 'https://shop.example.com/?utm_campaign=autumn']);
        $wt->track->conversion(['storeId' => $store['id'], 'eventType' => 'Purchase', 'orderId' => 'm-1', 'eventValue' => 0.1, 'currency' => 'USD', 'fbclid' => $fbclid]);
        $wt->track->conversion(['storeId' => $store['id'], 'eventType' => 'Purchase', 'orderId' => 'm-2', 'eventValue' => 0.2, 'currency' => 'USD']);

        $spend = $wt->adSpend->upsert($store['id'], ['entries' => [
            ['date' => $today, 'amount' => 0.15, 'currency' => 'USD', 'campaignId' => 'c1'],
            ['date' => $today, 'amount' => 0.05, 'currency' => 'USD', 'campaignId' => 'c2'],
        ]]);
        self::assertCount(2, $spend['entries']);
        self::assertStringStartsWith('spend_', $spend['entries'][0]['id']);
        self::assertSame('meta', $spend['entries'][0]['platform']);

        $range = ['storeId' => $store['id'], 'startDate' => $today, 'endDate' => $today];
        $metrics = $wt->analytics->metrics($range);
        self::assertSame(2, $metrics['totalClicks']);
        self::assertSame(2, $metrics['totalConversions']);
        self::assertEquals(0.3, $metrics['totalRevenue'], 'exact money: 0.1 + 0.2 is 0.3');
        self::assertSame(1, $metrics['attributedConversions']);
        self::assertEquals(0.1, $metrics['attributedRevenue']);
        self::assertEquals(50, $metrics['conversionRate']);
        self::assertEquals(0.2, $metrics['adSpend']);
        self::assertEquals(0.5, $metrics['roas']);
        self::assertSame('USD', $metrics['currency']);

        $series = $wt->analytics->timeseries($range + ['interval' => 'day']);
        self::assertCount(1, $series['buckets']);
        self::assertSame($today, $series['buckets'][0]['label']);
        self::assertSame(2, $series['buckets'][0]['clicks']);

        $breakdown = $wt->analytics->breakdown($range + ['by' => 'utm_campaign', 'limit' => 1]);
        self::assertCount(1, $breakdown['groups']);
        self::assertTrue($breakdown['hasMore']);
        $groups = array_column(iterator_to_array($wt->analytics->breakdownAll($range + ['by' => 'utm_campaign', 'limit' => 1]), false), 'clicks', 'value');
        ksort($groups);
        self::assertSame(['autumn' => 1, 'spring' => 1], $groups);

        $page = $wt->adSpend->list($store['id'], ['startDate' => $today, 'endDate' => $today, 'limit' => 1]);
        self::assertCount(1, $page['entries']);
        self::assertTrue($page['hasMore']);
        $campaigns = array_column(iterator_to_array($wt->adSpend->listAll($store['id'], ['limit' => 1]), false), 'campaignId');
        sort($campaigns);
        self::assertSame(['c1', 'c2'], $campaigns);
    }
}
