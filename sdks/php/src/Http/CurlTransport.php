<?php

declare(strict_types=1);

namespace Waytrack\Http;

use Waytrack\Config;
use Waytrack\Exception\ConnectionException;

/**
 * Sends one HTTP request with curl, nothing more: no retries, no envelope. One curl handle is
 * kept for the client's life so keep-alive connections (and their TLS sessions) are reused.
 */
final class CurlTransport implements Transport
{
    private \CurlHandle $handle;
    /** Where the `ca` PEM text was written when curl cannot take it from memory. */
    private ?string $caTemp = null;

    public function __construct(private readonly Config $config)
    {
        $this->handle = curl_init();
    }

    /**
     * @param array<string, string> $headers
     * @throws ConnectionException when no HTTP answer was received
     */
    public function send(string $method, string $url, array $headers, ?string $body): Response
    {
        $handle = $this->handle;
        curl_reset($handle);
        $received = [];
        $lines = [];
        foreach ($headers as $name => $value) {
            $lines[] = "{$name}: {$value}";
        }
        // "Expect: 100-continue" would cost a round trip on bodies over 1 KiB.
        $lines[] = 'Expect:';
        $options = [
            CURLOPT_URL => $url,
            CURLOPT_CUSTOMREQUEST => $method,
            CURLOPT_HTTPHEADER => $lines,
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_TIMEOUT_MS => (int) ceil($this->config->timeout * 1000),
            CURLOPT_CONNECTTIMEOUT_MS => (int) ceil($this->config->timeout * 1000),
            CURLOPT_NOSIGNAL => true,
            CURLOPT_FOLLOWLOCATION => false,
            CURLOPT_PROTOCOLS => CURLPROTO_HTTPS | CURLPROTO_HTTP,
            CURLOPT_SSL_VERIFYPEER => true,
            CURLOPT_SSL_VERIFYHOST => 2,
            CURLOPT_HEADERFUNCTION => static function ($curl, string $line) use (&$received): int {
                $parts = explode(':', $line, 2);
                if (count($parts) === 2) {
                    $received[strtolower(trim($parts[0]))] = trim($parts[1]);
                } elseif (str_starts_with($line, 'HTTP/')) {
                    $received = []; // a new status line (e.g. after 100 Continue): forget the interim headers
                }
                return strlen($line);
            },
        ];
        if ($body !== null) {
            $options[CURLOPT_POSTFIELDS] = $body;
        }
        $options += $this->trust();
        curl_setopt_array($handle, $options);

        $answer = curl_exec($handle);
        if ($answer === false) {
            $errno = curl_errno($handle);
            throw new ConnectionException("could not reach Waytrack at {$url}: " . curl_error($handle) . " (curl error {$errno})", $errno);
        }
        return new Response((int) curl_getinfo($handle, CURLINFO_RESPONSE_CODE), $received, (string) $answer);
    }

    /** @return array<int, mixed> which certificates to trust: the given CA, else the system's */
    private function trust(): array
    {
        if ($this->config->caFile !== null) {
            return [CURLOPT_CAINFO => $this->config->caFile];
        }
        if ($this->config->ca !== null) {
            if (defined('CURLOPT_CAINFO_BLOB')) {
                return [CURLOPT_CAINFO_BLOB => $this->config->ca];
            }
            return [CURLOPT_CAINFO => $this->caTempFile($this->config->ca)];
        }
        return [];
    }

    /** PHP 8.1 has no CURLOPT_CAINFO_BLOB: the PEM text goes to a private temporary file instead. */
    private function caTempFile(string $pem): string
    {
        if ($this->caTemp === null) {
            $path = tempnam(sys_get_temp_dir(), 'waytrack-ca-');
            if ($path === false || file_put_contents($path, $pem) === false) {
                throw new \RuntimeException('could not write the CA certificate to a temporary file');
            }
            $this->caTemp = $path;
        }
        return $this->caTemp;
    }

    public function __destruct()
    {
        if ($this->caTemp !== null) {
            @unlink($this->caTemp);
        }
    }
}
