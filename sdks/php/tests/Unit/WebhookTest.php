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
}
