import { describe, expect, it } from 'vitest';
import { networkErrorMessage } from '../../src/network-errors.js';

// Messages that say whose side failed (api.md §12): fetch's errors as undici throws them (a
// TypeError 'fetch failed' whose cause carries the socket's code), and the timeout's.
const fetchFailed = (code: string) => new TypeError('fetch failed', { cause: Object.assign(new Error(code), { code }) });

describe('networkErrorMessage', () => {
  const url = 'https://graph.facebook.com/v24.0/123/events';

  it.each([
    [
      'ENOTFOUND',
      /^This server could not resolve graph\.facebook\.com \(ENOTFOUND\): check outbound network, DNS, proxy \(not an error of Meta\)$/,
    ],
    ['EAI_AGAIN', /^This server could not resolve graph\.facebook\.com \(EAI_AGAIN\)/],
    [
      'ECONNREFUSED',
      /^This server could not connect to graph\.facebook\.com:443 \(ECONNREFUSED\): check outbound network, DNS, proxy, firewall/,
    ],
    ['UND_ERR_CONNECT_TIMEOUT', /^This server could not connect to graph\.facebook\.com:443 \(UND_ERR_CONNECT_TIMEOUT\)/],
    [
      'DEPTH_ZERO_SELF_SIGNED_CERT',
      /^This server could not make a trusted TLS connection to graph\.facebook\.com \(DEPTH_ZERO_SELF_SIGNED_CERT\): check its CA certificates \(NODE_EXTRA_CA_CERTS\)/,
    ],
    ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', /trusted TLS connection to graph\.facebook\.com/],
    ['ERR_TLS_CERT_ALTNAME_INVALID', /trusted TLS connection to graph\.facebook\.com/],
    [
      'ECONNRESET',
      /^The connection from this server to graph\.facebook\.com:443 was closed without an answer \(ECONNRESET\).*Meta dropped it$/,
    ],
  ])('%s names this server and the host', (code, expected) => {
    expect(networkErrorMessage(fetchFailed(code), url, 'Meta', 1500)).toMatch(expected);
  });

  it('a timeout names the host and the time waited, and says the platform may be slow', () => {
    const timeout = new DOMException('The operation was aborted due to timeout', 'TimeoutError');
    expect(networkErrorMessage(timeout, url, 'Meta', 1500)).toBe(
      'This server got no answer from graph.facebook.com within 1500 ms (timeout): check outbound network, DNS, proxy; if they work, Meta is slow to answer',
    );
  });

  it('an error without a code keeps its innermost message, and an http URL its port 80', () => {
    const error = new TypeError('fetch failed', { cause: new Error('bad port') });
    expect(networkErrorMessage(error, 'http://example.test/x', 'TikTok', 5000)).toBe(
      'This server could not reach example.test (bad port): check outbound network, DNS, proxy (not an error of TikTok)',
    );
    expect(networkErrorMessage(fetchFailed('ECONNREFUSED'), 'http://example.test/x', 'TikTok', 5000)).toMatch(/example\.test:80/);
  });
});
