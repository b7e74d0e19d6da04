<?php

declare(strict_types=1);

namespace Waytrack\Resource;

/** `$wt->track`: record clicks and conversions, one at a time or in batches, and link browsers to people. */
final class Track extends Resource
{
    /**
     * POST /v1/track/click — record an ad click.
     *
     * @param array<string, mixed> $params fbclid, storeId, landingPage, referrer?, ipAddress?, userAgent?, timestamp?, fingerprint?, fbp?, ttp?, visitorId?, consent?, limitedDataUse? (docs/consent.md)
     * @param array{idempotencyKey?: string} $options
     * @return array<string, mixed> clickId, fbclid, tracked, timestamp, duplicate
     */
    public function click(array $params, array $options = []): array
    {
        return $this->requester->request('POST', '/track/click', [], $params, $options);
    }

    /**
     * POST /v1/track/conversion — record a conversion and attribute it.
     *
     * @param array<string, mixed> $params storeId, eventType, orderId, eventValue, currency, customerData?, products?, fingerprint?, clickId?, fbclid?, fbc?, fbp?, ipAddress?, userAgent?, eventSourceUrl?, eventId?, timestamp?, consent?, limitedDataUse? (docs/consent.md)
     * @param array{idempotencyKey?: string} $options
     * @return array<string, mixed> conversionId, eventType, attributed, attributedTo?, capiSent, timestamp, duplicate
     */
    public function conversion(array $params, array $options = []): array
    {
        return $this->requester->request('POST', '/track/conversion', [], $params, $options);
    }

    /**
     * POST /v1/track/identify — link a browser to a person's email or phone.
     *
     * The server normalizes and SHA-256 hashes them (a 64-hex value is taken as it is); a later
     * conversion with that email or phone, from any device, has identity evidence for that
     * browser's clicks. At least one browser id and one of email and phone.
     *
     * @param array<string, mixed> $params storeId, visitorId?, fbp?, ttp?, email?, phone?
     * @param array{idempotencyKey?: string} $options
     * @return array<string, mixed> storeId, identified, links, duplicate, timestamp
     */
    public function identify(array $params, array $options = []): array
    {
        return $this->requester->request('POST', '/track/identify', [], $params, $options);
    }

    /**
     * POST /v1/track/batch — record 1–500 clicks and conversions in one request, in order.
     *
     * Returns one result per event: `['index' => …, 'status' => 200, 'data' => …]` (what `click` or
     * `conversion` would return) or `['index' => …, 'status' => 4xx, 'error' => [code, message, details]]`.
     * Throws only when the request itself fails (not a list of 1–500 events, no tracking scope, network).
     *
     * @param list<array<string, mixed>> $events each `['type' => 'click'|'conversion', ...the fields of click or conversion]`
     * @param array{idempotencyKey?: string} $options
     * @return array<string, mixed> received, failed, results
     */
    public function batch(array $events, array $options = []): array
    {
        return $this->requester->request('POST', '/track/batch', [], ['events' => array_values($events)], $options);
    }
}
