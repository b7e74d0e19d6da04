<?php

declare(strict_types=1);

namespace Waytrack\Resource;

/** `$wt->track`: record clicks and conversions. */
final class Track extends Resource
{
    /**
     * POST /v1/track/click — record an ad click.
     *
     * @param array<string, mixed> $params fbclid, storeId, landingPage, referrer?, ipAddress?, userAgent?, timestamp?, fingerprint?, fbp?
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
     * @param array<string, mixed> $params storeId, eventType, orderId, eventValue, currency, customerData?, products?, fingerprint?, clickId?, fbclid?, fbc?, fbp?, ipAddress?, userAgent?, eventSourceUrl?, eventId?, timestamp?
     * @param array{idempotencyKey?: string} $options
     * @return array<string, mixed> conversionId, eventType, attributed, attributedTo?, capiSent, timestamp, duplicate
     */
    public function conversion(array $params, array $options = []): array
    {
        return $this->requester->request('POST', '/track/conversion', [], $params, $options);
    }
}
