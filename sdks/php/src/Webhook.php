<?php

declare(strict_types=1);

namespace Waytrack;

use Waytrack\Exception\WebhookVerificationException;

/**
 * Verifies webhooks Waytrack sends (Standard Webhooks): `webhook-signature` must hold a `v1`
 * HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>" keyed with the endpoint's `whsec_…`
 * secret, and the timestamp must be within the tolerance of now. A message may arrive more than
 * once: deduplicate by `webhook-id`.
 */
final class Webhook
{
    public const SECRET_PREFIX = 'whsec_';
    public const TOLERANCE_SECONDS = 300;

    /**
     * @param string $payload the body exactly as received (`file_get_contents('php://input')`)
     * @param array<string, string|string[]> $headers the request's headers, any case (`getallheaders()`)
     * @return array<string, mixed> the event: `type`, `timestamp`, `data`
     * @throws WebhookVerificationException
     */
    public static function verify(
        string $payload,
        array $headers,
        string $secret,
        int $tolerance = self::TOLERANCE_SECONDS,
        ?int $now = null,
    ): array {
        $id = self::header($headers, 'webhook-id');
        $timestamp = self::header($headers, 'webhook-timestamp');
        $signatures = self::header($headers, 'webhook-signature');
        if (!preg_match('/^\d+$/', $timestamp)) {
            throw new WebhookVerificationException('webhook-timestamp is not a number');
        }
        if (abs(($now ?? time()) - (int) $timestamp) > $tolerance) {
            throw new WebhookVerificationException('webhook-timestamp is too old or too new');
        }
        $encoded = str_starts_with($secret, self::SECRET_PREFIX) ? substr($secret, strlen(self::SECRET_PREFIX)) : $secret;
        $key = base64_decode($encoded, true);
        if ($key === false) {
            throw new WebhookVerificationException('the secret is not a whsec_ secret');
        }
        $expected = base64_encode(hash_hmac('sha256', $id . '.' . $timestamp . '.' . $payload, $key, true));
        foreach (explode(' ', $signatures) as $candidate) {
            [$version, $signature] = array_pad(explode(',', $candidate, 2), 2, '');
            if ($version === 'v1' && hash_equals($expected, $signature)) {
                $event = json_decode($payload, true);
                if (!is_array($event)) {
                    throw new WebhookVerificationException('the body is not a JSON object');
                }
                return $event;
            }
        }
        throw new WebhookVerificationException('no matching signature');
    }

    /** @param array<string, string|string[]> $headers */
    private static function header(array $headers, string $name): string
    {
        foreach ($headers as $key => $value) {
            if (strtolower((string) $key) === $name) {
                return is_array($value) ? implode(' ', $value) : (string) $value;
            }
        }
        throw new WebhookVerificationException("missing $name header");
    }
}
