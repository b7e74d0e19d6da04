<?php

declare(strict_types=1);

namespace Waytrack\Tests\Unit;

use Waytrack\Exception\ConnectionException;
use Waytrack\Http\Response;
use Waytrack\Http\Transport;

/** A transport that plays back prepared answers and remembers every request it was given. */
final class ScriptedTransport implements Transport
{
    /** @var list<array{method: string, url: string, headers: array<string, string>, body: ?string}> */
    public array $sent = [];

    /** @param list<Response|ConnectionException> $answers */
    public function __construct(private array $answers)
    {
    }

    public function send(string $method, string $url, array $headers, ?string $body): Response
    {
        $this->sent[] = ['method' => $method, 'url' => $url, 'headers' => $headers, 'body' => $body];
        $answer = array_shift($this->answers);
        if ($answer === null) {
            throw new \LogicException('the script has no answer left for ' . $method . ' ' . $url);
        }
        if ($answer instanceof ConnectionException) {
            throw $answer;
        }
        return $answer;
    }

    /** @param array<string, mixed> $data */
    public static function ok(array $data, int $status = 200): Response
    {
        $envelope = ['success' => true, 'data' => $data, 'meta' => ['timestamp' => '2026-11-22T10:00:00.000Z', 'requestId' => 'req_ok']];
        return new Response($status, ['content-type' => 'application/json', 'request-id' => 'req_ok'], json_encode($envelope));
    }

    /**
     * @param array<string, mixed>|null $details
     * @param array<string, string> $headers
     */
    public static function error(int $status, string $code, ?array $details = null, array $headers = []): Response
    {
        $error = ['code' => $code, 'message' => "{$code} happened"] + ($details === null ? [] : ['details' => $details]);
        $envelope = ['success' => false, 'error' => $error, 'meta' => ['timestamp' => '2026-11-22T10:00:00.000Z', 'requestId' => "req_{$status}"]];
        return new Response($status, ['request-id' => "req_{$status}"] + $headers, json_encode($envelope));
    }
}
