<?php

declare(strict_types=1);

namespace Waytrack;

use Waytrack\Http\CurlTransport;
use Waytrack\Http\Requester;
use Waytrack\Resource\AdSpend;
use Waytrack\Resource\Analytics;
use Waytrack\Resource\Clicks;
use Waytrack\Resource\Conversions;
use Waytrack\Resource\Stores;
use Waytrack\Resource\Track;

/**
 * The Waytrack API client.
 *
 *     $wt = new Waytrack\Client(['apiKey' => 'wt_live_…', 'caFile' => '/path/localhost-cert.pem']);
 *     $result = $wt->track->conversion(['storeId' => $id, 'eventType' => 'Purchase', …]);
 *
 * Options: apiKey (required), baseUrl (default https://localhost:8443/v1), caFile or ca (PEM
 * text) to trust a self-signed server, timeout (seconds, default 10), maxRetries (default 2),
 * and the backoff tuning retryBaseDelay, retryMaxDelay, maxRetryAfter (seconds).
 */
final class Client
{
    /** Released together with the server; sent in the User-Agent. */
    public const VERSION = '0.1.0';

    public readonly Track $track;
    public readonly Stores $stores;
    public readonly Conversions $conversions;
    public readonly Clicks $clicks;
    public readonly Analytics $analytics;
    public readonly AdSpend $adSpend;

    /**
     * @param array<string, mixed> $options
     * @throws \InvalidArgumentException on a missing apiKey, an unknown option or a bad value
     */
    public function __construct(array $options)
    {
        $config = new Config($options);
        $requester = new Requester($config, new CurlTransport($config));
        $this->track = new Track($requester);
        $this->stores = new Stores($requester);
        $this->conversions = new Conversions($requester);
        $this->clicks = new Clicks($requester);
        $this->analytics = new Analytics($requester);
        $this->adSpend = new AdSpend($requester);
    }
}
