<?php

declare(strict_types=1);

namespace Waytrack\Http;

use Waytrack\Client;
use Waytrack\Config;
use Waytrack\Exception\ApiException;
use Waytrack\Exception\ConnectionException;

/**
 * One API call: headers, the retry loop, and the envelope unwrapped into its `data` or turned
 * into an ApiException. Resource classes only say which method, path, query and body.
 */
final class Requester
{
    private readonly RetryPolicy $retries;
    /** @var \Closure(float): void */
    private readonly \Closure $sleep;

    /**
     * @param (\Closure(float): void)|null $sleep how to wait between attempts (seconds)
     */
    public function __construct(
        private readonly Config $config,
        private readonly Transport $transport,
        ?\Closure $sleep = null,
    ) {
        $this->retries = new RetryPolicy($config->maxRetries, $config->retryBaseDelay, $config->retryMaxDelay, $config->maxRetryAfter);
        $this->sleep = $sleep ?? static function (float $seconds): void {
            usleep((int) round($seconds * 1_000_000));
        };
    }

    public static function userAgent(): string
    {
        return 'waytrack-php/' . Client::VERSION . ' php/' . PHP_VERSION;
    }

    /** A fresh random UUID (v4): one per POST call, reused by all of that call's attempts. */
    public static function newIdempotencyKey(): string
    {
        $bytes = random_bytes(16);
        $bytes[6] = chr((ord($bytes[6]) & 0x0f) | 0x40);
        $bytes[8] = chr((ord($bytes[8]) & 0x3f) | 0x80);
        return vsprintf('%s%s-%s-%s-%s-%s%s%s', str_split(bin2hex($bytes), 4));
    }

    /**
     * @param array<string, mixed> $query
     * @param array<string, mixed>|null $body
     * @param array{idempotencyKey?: string} $options
     * @return array<string, mixed> the envelope's `data`
     */
    public function request(string $method, string $path, array $query = [], ?array $body = null, array $options = []): array
    {
        $headers = [
            'Authorization' => 'Bearer ' . $this->config->apiKey,
            'User-Agent' => self::userAgent(),
            'Accept' => 'application/json',
        ];
        $payload = null;
        if ($body !== null) {
            $payload = Json::encodeBody($body);
            $headers['Content-Type'] = 'application/json';
        }
        if ($method === 'POST') {
            // Generated once here, outside the loop: a retry must be recognised as the same call.
            $headers['Idempotency-Key'] = $options['idempotencyKey'] ?? self::newIdempotencyKey();
        }
        $url = $this->config->baseUrl . $path . Query::build($query);

        for ($attempt = 0; ; $attempt++) {
            try {
                $response = $this->transport->send($method, $url, $headers, $payload);
            } catch (ConnectionException $error) {
                if ($attempt >= $this->retries->maxRetries() || !RetryPolicy::isRetryableCurlError($error->getCurlErrno())) {
                    throw $error;
                }
                $this->wait($this->retries->delay($attempt + 1, null));
                continue;
            }
            if ($response->status >= 200 && $response->status < 300) {
                return self::data($response);
            }
            $retryAfter = RetryPolicy::parseRetryAfter($response->header('retry-after'));
            $error = ApiException::fromEnvelope($response->status, Json::decode($response->body), $response->header('request-id'), $retryAfter);
            if ($attempt >= $this->retries->maxRetries() || !RetryPolicy::isRetryableStatus($response->status)) {
                throw $error;
            }
            $delay = $this->retries->delay($attempt + 1, $retryAfter);
            if ($delay === null) {
                throw $error;
            }
            $this->wait($delay);
        }
    }

    /** @return array<string, mixed> */
    private static function data(Response $response): array
    {
        $envelope = Json::decode($response->body);
        if (!is_array($envelope) || !array_key_exists('data', $envelope) || !is_array($envelope['data'])) {
            throw ApiException::fromEnvelope($response->status, null, $response->header('request-id'));
        }
        return $envelope['data'];
    }

    private function wait(?float $seconds): void
    {
        if ($seconds !== null && $seconds > 0) {
            ($this->sleep)($seconds);
        }
    }
}
