<?php

declare(strict_types=1);

namespace Waytrack;

use Waytrack\Exception\WebhookVerificationException;

/**
 * Verifies webhooks Waytrack sends (Standard Webhooks): `webhook-signature` must hold a `v1`
 * HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>" keyed with the endpoint's `whsec_…`
 * secret, and the timestamp must be within the tolerance of now. A message may arrive more than
 * once: deduplicate by `webhook-id`. Integers beyond PHP_INT_MAX in the event (shop ids can be)
 * come back as their exact decimal text, never as a rounded float.
 */
final class Webhook
{
    public const SECRET_PREFIX = 'whsec_';
    public const TOLERANCE_SECONDS = 300;

    /**
     * @param string $payload the body exactly as received (`file_get_contents('php://input')`)
     * @param array<string, string|string[]> $headers the request's headers, any case (`getallheaders()`)
     * @return array<string, mixed> the event: `type`, `timestamp`, `data`
     * @throws WebhookVerificationException the request is not one Waytrack signed with this secret, now
     * @throws \InvalidArgumentException the secret is not a `whsec_…` secret (the receiver's configuration)
     */
    public static function verify(
        string $payload,
        array $headers,
        string $secret,
        int $tolerance = self::TOLERANCE_SECONDS,
        ?int $now = null,
    ): array {
        $key = self::keyOf($secret);
        $id = self::header($headers, 'webhook-id');
        $timestamp = self::header($headers, 'webhook-timestamp');
        $signatures = self::header($headers, 'webhook-signature');
        // \z, not $: a trailing newline is not part of a timestamp.
        if (!preg_match('/^\d{1,15}\z/', $timestamp)) {
            throw new WebhookVerificationException('webhook-timestamp is not a number of seconds');
        }
        $age = ($now ?? time()) - (int) $timestamp;
        if ($age > $tolerance) {
            throw new WebhookVerificationException('webhook-timestamp is too old');
        }
        if (-$age > $tolerance) {
            throw new WebhookVerificationException('webhook-timestamp is too new');
        }
        $expected = base64_encode(hash_hmac('sha256', $id . '.' . $timestamp . '.' . $payload, $key, true));
        foreach (explode(' ', $signatures) as $candidate) {
            [$version, $signature] = array_pad(explode(',', $candidate, 2), 2, '');
            if ($version === 'v1' && hash_equals($expected, $signature)) {
                $event = json_decode($payload, true, 512, JSON_BIGINT_AS_STRING);
                if (!is_array($event)) {
                    throw new WebhookVerificationException('the body is not a JSON object');
                }
                return $event;
            }
        }
        throw new WebhookVerificationException('no matching signature');
    }

    /** The key of a `whsec_…` secret: the base64-decoded part after the prefix (a bare base64 secret too). */
    private static function keyOf(string $secret): string
    {
        $encoded = str_starts_with($secret, self::SECRET_PREFIX) ? substr($secret, strlen(self::SECRET_PREFIX)) : $secret;
        $key = base64_decode($encoded, true);
        if ($key === false || $key === '') {
            throw new \InvalidArgumentException('the webhook secret is not a whsec_ secret (the one shown when the endpoint was made)');
        }
        return $key;
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
