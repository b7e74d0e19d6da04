<?php

declare(strict_types=1);

namespace Waytrack\Tests\Unit;

use PHPUnit\Framework\TestCase;
use Waytrack\Client;
use Waytrack\Exception\ConnectionException;

/** Network failures with real sockets on this machine, no Waytrack server needed. */
final class CurlTransportTest extends TestCase
{
    /** @var resource|null */
    private $listener = null;

    protected function tearDown(): void
    {
        if ($this->listener !== null) {
            fclose($this->listener);
        }
    }

    /** A local port that was free a moment ago: connecting to it is refused. */
    private static function deadPort(): int
    {
        $socket = stream_socket_server('tcp://127.0.0.1:0');
        $port = (int) substr((string) strrchr(stream_socket_get_name($socket, false), ':'), 1);
        fclose($socket);
        return $port;
    }

    public function testARefusedConnectionIsAConnectionExceptionAfterTheRetries(): void
    {
        $wt = new Client(['apiKey' => 'wt_test_x', 'baseUrl' => 'https://127.0.0.1:' . self::deadPort() . '/v1', 'retryBaseDelay' => 0.001]);
        try {
            $wt->stores->list();
            self::fail('expected a ConnectionException');
        } catch (ConnectionException $error) {
            self::assertSame(CURLE_COULDNT_CONNECT, $error->getCurlErrno());
            self::assertFalse($error->isTimeout());
            self::assertStringContainsString('127.0.0.1', $error->getMessage());
        }
    }

    public function testATimeoutIsRetriedThenAConnectionException(): void
    {
        // A listening socket that never accepts: the kernel completes the TCP handshake, the TLS
        // handshake then waits for ever, so each attempt ends on the client's timeout.
        $this->listener = stream_socket_server('tcp://127.0.0.1:0', $errno, $errstr, STREAM_SERVER_BIND | STREAM_SERVER_LISTEN);
        $port = (int) substr((string) strrchr(stream_socket_get_name($this->listener, false), ':'), 1);
        $wt = new Client(['apiKey' => 'wt_test_x', 'baseUrl' => "https://127.0.0.1:{$port}/v1", 'timeout' => 0.2, 'maxRetries' => 2, 'retryBaseDelay' => 0.001]);

        $started = microtime(true);
        try {
            $wt->track->click(['fbclid' => 'a', 'storeId' => 'st_1', 'landingPage' => 'https://shop.example.com/']);
            self::fail('expected a ConnectionException');
        } catch (ConnectionException $error) {
            self::assertTrue($error->isTimeout(), $error->getMessage());
        }
        self::assertGreaterThanOrEqual(0.55, microtime(true) - $started, 'three attempts of 0.2 s each');

        $connections = 0;
        while (@stream_socket_accept($this->listener, 0) !== false) {
            $connections++;
        }
        self::assertSame(3, $connections, 'the first attempt and two retries');
    }
}
