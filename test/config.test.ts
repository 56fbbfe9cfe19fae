import { describe, expect, it } from 'vitest';

import { ConfigError, loadConfig } from '../server/config.js';

describe('the metrics token', () => {
  const token = 'metrics-token-0123456789';

  it('is none by default and for an empty SCREENSHOT_METRICS_TOKEN', () => {
    expect(loadConfig({}).metricsToken).toBeUndefined();
    expect(loadConfig({ SCREENSHOT_METRICS_TOKEN: '' }).metricsToken).toBeUndefined();
  });

  it('is read from SCREENSHOT_METRICS_TOKEN', () => {
    expect(loadConfig({ SCREENSHOT_METRICS_TOKEN: token }).metricsToken).toBe(token);
  });

  it('takes --metrics-token over the variable', () => {
    expect(loadConfig({ SCREENSHOT_METRICS_TOKEN: token }, { metricsToken: `${token}-flag` }).metricsToken).toBe(`${token}-flag`);
  });

  it('needs 16 characters or more, from the variable or the flag', () => {
    expect(loadConfig({ SCREENSHOT_METRICS_TOKEN: 'x'.repeat(16) }).metricsToken).toBe('x'.repeat(16));
    expect(() => loadConfig({ SCREENSHOT_METRICS_TOKEN: 'x'.repeat(15) })).toThrow(ConfigError);
    expect(() => loadConfig({}, { metricsToken: 'x'.repeat(15) })).toThrow('at least 16 characters');
    // A long variable does not excuse a short flag.
    expect(() => loadConfig({ SCREENSHOT_METRICS_TOKEN: token }, { metricsToken: 'short' })).toThrow(ConfigError);
  });
});
