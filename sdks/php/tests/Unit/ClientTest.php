<?php

declare(strict_types=1);

namespace Waytrack\Tests\Unit;

use PHPUnit\Framework\TestCase;
use Waytrack\Client;
use Waytrack\Resource\AdSpend;
use Waytrack\Resource\Analytics;
use Waytrack\Resource\Clicks;
use Waytrack\Resource\Conversions;
use Waytrack\Resource\Stores;
use Waytrack\Resource\Track;

final class ClientTest extends TestCase
{
    public function testExposesEveryResource(): void
    {
        $wt = new Client(['apiKey' => 'wt_test_x']);
        self::assertInstanceOf(Track::class, $wt->track);
        self::assertInstanceOf(Stores::class, $wt->stores);
        self::assertInstanceOf(Conversions::class, $wt->conversions);
        self::assertInstanceOf(Clicks::class, $wt->clicks);
        self::assertInstanceOf(Analytics::class, $wt->analytics);
        self::assertInstanceOf(AdSpend::class, $wt->adSpend);
    }

    public function testAnEmptyIdIsRefusedBeforeAnyRequest(): void
    {
        // Nothing listens on the base URL: reaching the network would be a ConnectionException.
        $wt = new Client(['apiKey' => 'wt_test_x', 'baseUrl' => 'https://127.0.0.1:9/v1', 'maxRetries' => 0]);
        $this->expectException(\InvalidArgumentException::class);
        $wt->stores->retrieve('');
    }

    public function testVersionIsTheServers(): void
    {
        $package = __DIR__ . '/../../../../server/package.json';
        if (!is_file($package)) {
            self::markTestSkipped('not inside the Waytrack repository: no server/package.json to compare with');
        }
        $server = json_decode((string) file_get_contents($package), true, 512, JSON_THROW_ON_ERROR);
        self::assertSame($server['version'], Client::VERSION);
    }
}
