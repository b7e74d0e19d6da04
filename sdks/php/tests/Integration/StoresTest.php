<?php

declare(strict_types=1);

namespace Waytrack\Tests\Integration;

final class StoresTest extends IntegrationTestCase
{
    public function testCreateRetrieveUpdate(): void
    {
        $wt = self::client();
        $store = self::newStore($wt, ['name' => 'Acme Outdoor', 'currency' => 'EUR', 'timezone' => 'Europe/Paris', 'pixelId' => '123456789012345']);

        self::assertStringStartsWith('st_', $store['id']);
        self::assertSame('Acme Outdoor', $store['name']);
        self::assertSame('shop.example.com', $store['domain']);
        self::assertSame('EUR', $store['currency']);
        self::assertSame('Europe/Paris', $store['timezone']);
        self::assertSame('active', $store['status']);
        self::assertSame(7, $store['attributionWindowDays']);
        self::assertFalse($store['capiConfigured']);

        self::assertSame($store, $wt->stores->retrieve($store['id']));

        $updated = $wt->stores->update($store['id'], ['name' => 'Acme Outdoor EU', 'status' => 'inactive', 'pixelId' => null]);
        self::assertSame('Acme Outdoor EU', $updated['name']);
        self::assertSame('inactive', $updated['status']);
        self::assertNull($updated['pixelId'], 'null clears the pixel id');
        self::assertSame('inactive', $wt->stores->retrieve($store['id'])['status']);
    }

    public function testAListPageAndEveryPage(): void
    {
        $wt = self::client();
        $created = [self::newStore($wt)['id'], self::newStore($wt)['id'], self::newStore($wt)['id']];

        $page = $wt->stores->list(['limit' => 2]);
        self::assertCount(2, $page['stores']);
        self::assertSame($page['stores'], $page['items']);
        self::assertTrue($page['hasMore']);
        self::assertIsString($page['nextCursor']);

        $next = $wt->stores->list(['limit' => 2, 'cursor' => $page['nextCursor']]);
        self::assertNotEmpty($next['stores']);
        self::assertSame([], array_intersect(array_column($page['stores'], 'id'), array_column($next['stores'], 'id')), 'pages do not overlap');
        $times = array_column([...$page['stores'], ...$next['stores']], 'createdAt');
        $sorted = $times;
        rsort($sorted);
        self::assertSame($sorted, $times, 'newest first across pages');

        $all = array_column(iterator_to_array($wt->stores->listAll(['limit' => 2]), false), 'id');
        self::assertSame(array_values(array_unique($all)), $all, 'no store twice');
        self::assertSame([], array_diff($created, $all), 'every store reached through several pages');
        self::assertGreaterThan(2, count($all));
    }

    public function testTheStatusFilter(): void
    {
        $wt = self::client();
        $store = self::newStore($wt);
        $wt->stores->update($store['id'], ['status' => 'inactive']);
        $inactive = array_column(iterator_to_array($wt->stores->listAll(['status' => 'inactive']), false), 'status', 'id');
        self::assertSame('inactive', $inactive[$store['id']] ?? null);
        self::assertSame(['inactive'], array_values(array_unique($inactive)));
    }

    public function testDestinations(): void
    {
        $wt = self::client();
        $store = self::newStore($wt, []);
        $listed = $wt->stores->destinations->list($store['id']);
        self::assertSame(['meta', 'google_ads', 'tiktok', 'microsoft', 'reddit', 'linkedin', 'pinterest', 'snapchat'], array_column($listed['destinations'], 'kind'));
        $tiktok = $wt->stores->destinations->put($store['id'], 'tiktok', ['pixelCode' => 'CPHP1234567890', 'accessToken' => 'tt-secret-php']);
        self::assertTrue($tiktok['configured']);
        self::assertSame('CPHP1234567890', $tiktok['settings']['pixelCode']);
        self::assertStringNotContainsString('tt-secret-php', json_encode($tiktok));
        $removed = $wt->stores->destinations->delete($store['id'], 'tiktok');
        self::assertFalse($removed['configured']);

        $click = $wt->track->click(['storeId' => $store['id'], 'landingPage' => 'https://shop.example.com/p', 'ttclid' => 'TT-php-' . bin2hex(random_bytes(6))]);
        self::assertStringStartsWith('TT-php-', $click['ttclid']);
        self::assertArrayNotHasKey('fbclid', $click);
    }
}
