<?php

declare(strict_types=1);

namespace Waytrack\Tests\Integration;

use Waytrack\Exception\ApiException;

/** Spend sources, the channel report, tracking health and cohorts (api.md §11) against the real server. */
final class SpendChannelsTest extends IntegrationTestCase
{
    public function testSpendSourcesConnectListSyncAndDisconnect(): void
    {
        $wt = self::client();
        $store = self::newStore($wt);
        $listed = $wt->stores->spendSources->list($store['id']);
        self::assertSame(['meta', 'google_ads', 'tiktok'], array_column($listed['spendSources'], 'kind'));

        $put = $wt->stores->spendSources->put($store['id'], 'tiktok', ['advertiserIds' => ['7001'], 'accessToken' => 'tt-php-secret', 'backfillDays' => 14]);
        self::assertTrue($put['configured']);
        self::assertSame(['7001'], $put['accounts']);
        self::assertStringNotContainsString('tt-php-secret', json_encode($put));
        $wt->stores->spendSources->sync($store['id'], 'tiktok');
        self::assertFalse($wt->stores->spendSources->delete($store['id'], 'tiktok')['configured']);

        try {
            $wt->stores->spendSources->put($store['id'], 'meta', ['accessToken' => 'x']);
            self::fail('a source without accounts is refused');
        } catch (ApiException $e) {
            self::assertSame(400, $e->getHttpStatus());
            self::assertSame('adAccountIds', $e->getDetails()['field'] ?? null);
        }
    }

    public function testChannelsTrackingHealthAndCohorts(): void
    {
        $wt = self::client();
        $store = self::newStore($wt);
        $today = gmdate('Y-m-d');
        $fbclid = self::fbclid();
        $wt->track->click(['fbclid' => $fbclid, 'storeId' => $store['id'], 'landingPage' => "https://shop.example.com/?fbclid={$fbclid}&campaign_id=777"]);
        $wt->track->conversion(['storeId' => $store['id'], 'eventType' => 'Purchase', 'orderId' => 'c-1', 'eventValue' => 40, 'currency' => 'USD', 'fbclid' => $fbclid, 'customerData' => ['email' => 'a@example.com']]);
        $wt->track->conversion(['storeId' => $store['id'], 'eventType' => 'Purchase', 'orderId' => 'c-2', 'eventValue' => 10, 'currency' => 'USD', 'customerData' => ['email' => 'b@example.com'], 'ipAddress' => '198.51.100.7', 'userAgent' => 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0']);
        $wt->adSpend->upsert($store['id'], ['entries' => [['date' => $today, 'amount' => 20, 'currency' => 'USD', 'platform' => 'meta', 'campaignId' => '777']]]);
        $range = ['storeId' => $store['id'], 'startDate' => $today, 'endDate' => $today];

        $report = $wt->analytics->channels($range);
        $byChannel = array_column($report['channels'], null, 'channel');
        self::assertEquals(20, $byChannel['meta']['spend']);
        self::assertEquals(40, $byChannel['meta']['revenue']);
        self::assertEquals(2, $byChannel['meta']['roas']);
        self::assertSame('777', $byChannel['meta']['campaigns'][0]['campaignId']);
        self::assertEquals(10, $byChannel['unattributed']['revenue']);
        self::assertEquals(2.5, $report['totals']['mer']);

        foreach ($wt->analytics->trackingHealth($range)['items'] as $item) {
            self::assertNotSame('', $item['message']);
        }

        $cohorts = $wt->analytics->cohorts(['storeId' => $store['id'], 'by' => 'month']);
        $month = array_column($cohorts['cohorts'], null, 'cohort')[substr($today, 0, 7)];
        self::assertSame(2, $month['customers']);
        self::assertEquals(10, $month['cac']);
    }
}
