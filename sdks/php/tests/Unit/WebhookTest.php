<?php

declare(strict_types=1);

namespace Waytrack\Tests\Unit;

use PHPUnit\Framework\TestCase;
use Waytrack\Exception\WebhookVerificationException;
use Waytrack\Webhook;

/** Webhook::verify against the Standard Webhooks specification's test vector. */
final class WebhookTest extends TestCase
{
    private const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    private const BODY = '{"test": 2432232314}';
    private const NOW = 1614265340;

    /** @return array<string, string> */
    private static function headers(): array
    {
        return [
            'Webhook-Id' => 'msg_p5jXN8AQM9LWM0D4loKWxJek',
            'Webhook-Timestamp' => '1614265330',
            'Webhook-Signature' => 'v1,bm9ldHRoZXNpZ25hdHVyZQ== v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
        ];
    }

    public function testAcceptsTheReferenceVector(): void
    {
        self::assertSame(['test' => 2432232314], Webhook::verify(self::BODY, self::headers(), self::SECRET, 300, self::NOW));
    }

    public function testRefusesAnAlteredBody(): void
    {
        $this->expectException(WebhookVerificationException::class);
        Webhook::verify('{"test": 2432232315}', self::headers(), self::SECRET, 300, self::NOW);
    }

    public function testRefusesAnotherSecret(): void
    {
        $this->expectException(WebhookVerificationException::class);
        Webhook::verify(self::BODY, self::headers(), 'whsec_' . str_repeat('A', 44), 300, self::NOW);
    }

    public function testRefusesAnOldTimestamp(): void
    {
        $this->expectException(WebhookVerificationException::class);
        Webhook::verify(self::BODY, self::headers(), self::SECRET, 300, self::NOW + 600);
    }

    public function testRefusesATimestampFromTheFuture(): void
    {
        $this->expectException(WebhookVerificationException::class);
        Webhook::verify(self::BODY, self::headers(), self::SECRET, 300, self::NOW - 600);
    }

    public function testAcceptsTheBareBase64SecretAndRefusesWhenNoSignatureIsV1AndRight(): void
    {
        self::assertSame(['test' => 2432232314], Webhook::verify(self::BODY, self::headers(), substr(self::SECRET, 6), 300, self::NOW));
        $headers = self::headers();
        $headers['Webhook-Signature'] = 'v1,bm9ldHRoZXNpZ25hdHVyZQ== v2,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=';
        $this->expectException(WebhookVerificationException::class);
        Webhook::verify(self::BODY, $headers, self::SECRET, 300, self::NOW);
    }

    public function testATimestampIsDigitsOnly(): void
    {
        foreach (['+1614265330', ' 1614265330', "1614265330\n", ''] as $timestamp) {
            $headers = self::headers();
            $headers['Webhook-Timestamp'] = $timestamp;
            try {
                Webhook::verify(self::BODY, $headers, self::SECRET, 300, self::NOW);
                self::fail('accepted timestamp ' . json_encode($timestamp));
            } catch (WebhookVerificationException) {
                self::addToAssertionCount(1);
            }
        }
    }

    public function testASecretThatIsNotOneIsAnInvalidArgumentNotARefusedRequest(): void
    {
        foreach (['', 'whsec_', 'whsec_not base64!', 'whsec_abcde'] as $secret) {
            try {
                Webhook::verify(self::BODY, self::headers(), $secret, 300, self::NOW);
                self::fail('accepted secret ' . json_encode($secret));
            } catch (\InvalidArgumentException $e) {
                self::assertNotInstanceOf(WebhookVerificationException::class, $e);
            }
        }
    }

    public function testKeepsIntegersBeyondPhpIntMaxAsExactText(): void
    {
        $body = '{"data": {"id": 820982911946154508, "line": 12345678901234567890}}';
        $key = base64_decode(substr(self::SECRET, 6), true);
        $signature = 'v1,' . base64_encode(hash_hmac('sha256', 'msg_1.1614265330.' . $body, $key, true));
        $headers = ['webhook-id' => 'msg_1', 'webhook-timestamp' => '1614265330', 'webhook-signature' => $signature];
        $event = Webhook::verify($body, $headers, self::SECRET, 300, self::NOW);
        self::assertSame(['id' => 820982911946154508, 'line' => '12345678901234567890'], $event['data']);
    }
}
