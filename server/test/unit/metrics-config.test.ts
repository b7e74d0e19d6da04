import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

const TOKEN = 'scrape-0123456789abcdef';

describe('METRICS_PORT, METRICS_HOST, METRICS_TOKEN', () => {
  it('default: /metrics on the API port, without a token (as before)', () => {
    const config = loadConfig({});
    expect([config.metricsPort, config.metricsHost, config.metricsToken]).toEqual([undefined, '127.0.0.1', undefined]);
  });

  it('read when valid', () => {
    const config = loadConfig({ METRICS_PORT: '9464', METRICS_HOST: '10.0.0.5', METRICS_TOKEN: TOKEN });
    expect([config.metricsPort, config.metricsHost, config.metricsToken]).toEqual([9464, '10.0.0.5', TOKEN]);
    expect(loadConfig({ METRICS_PORT: '9464', METRICS_HOST: '::' }).metricsHost).toBe('::');
    expect(loadConfig({ METRICS_PORT: '9464', METRICS_HOST: 'metrics.internal' }).metricsHost).toBe('metrics.internal');
  });

  it.each([
    [{ METRICS_PORT: 'abc' }, 'METRICS_PORT must be an integer'],
    [{ METRICS_PORT: '70000' }, 'METRICS_PORT must be between 0 and 65535'],
    [{ METRICS_PORT: '8443' }, 'METRICS_PORT must differ from PORT'],
    [{ METRICS_PORT: '8080', HTTP_PORT: '8080' }, 'METRICS_PORT must differ from HTTP_PORT'],
    [{ METRICS_HOST: '0.0.0.0' }, 'METRICS_HOST is set but METRICS_PORT is not'],
    [{ METRICS_PORT: '9464', METRICS_HOST: 'not a host' }, 'METRICS_HOST must be an IP address or a host name'],
    [{ METRICS_TOKEN: 'short' }, 'METRICS_TOKEN must be at least 16 characters'],
    [{ METRICS_TOKEN: 'has a space in the middle' }, 'METRICS_TOKEN must be at least 16 characters'],
  ])('%o is refused with one line naming the variable', (env, message) => {
    let error: unknown;
    try {
      loadConfig(env);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain(message);
    expect((error as Error).message).not.toContain('\n');
    expect((error as Error).message).not.toContain('has a space'); // a token is never repeated
  });
});
