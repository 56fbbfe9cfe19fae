import { describe, expect, it } from 'vitest';

import { DEFAULT_SCHEDULE_MS, MAX_RETRY_AFTER_MS, parseRetryAfter, retryDelay } from '../../server/webhooks/retry-schedule.js';

describe('retry schedule', () => {
  it('waits about 5 s, 5 min, 30 min, 2 h, 5 h and 10 h', () => {
    expect(DEFAULT_SCHEDULE_MS).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000]);
    expect(DEFAULT_SCHEDULE_MS.map((_, i) => retryDelay(i + 1, DEFAULT_SCHEDULE_MS, null, () => 0.5))).toEqual(DEFAULT_SCHEDULE_MS);
  });

  it('moves each delay by at most a fifth either way', () => {
    expect(retryDelay(1, DEFAULT_SCHEDULE_MS, null, () => 0)).toBe(4_000);
    expect(retryDelay(1, DEFAULT_SCHEDULE_MS, null, () => 0.999999)).toBe(6_000);
    const seen = new Set(Array.from({ length: 50 }, () => retryDelay(2, DEFAULT_SCHEDULE_MS)));
    expect(seen.size).toBeGreaterThan(1);
    for (const delay of seen) {
      expect(delay).toBeGreaterThanOrEqual(240_000);
      expect(delay).toBeLessThanOrEqual(360_000);
    }
  });

  it('has no retry after the last one', () => {
    expect(retryDelay(7, DEFAULT_SCHEDULE_MS)).toBeNull();
    expect(retryDelay(0, DEFAULT_SCHEDULE_MS)).toBeNull();
  });

  it('waits for a longer Retry-After, never for a shorter one, and caps it at a day', () => {
    expect(retryDelay(1, [1_000], 60_000, () => 0.5)).toBe(60_000);
    expect(retryDelay(1, [1_000], 10, () => 0.5)).toBe(1_000);
    expect(retryDelay(1, [1_000], 10 * MAX_RETRY_AFTER_MS, () => 0.5)).toBe(MAX_RETRY_AFTER_MS);
  });

  it('reads Retry-After as delay-seconds or as an HTTP date', () => {
    const now = Date.parse('2030-01-01T00:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('Tue, 01 Jan 2030 00:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('Mon, 31 Dec 2029 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(undefined, now)).toBeNull();
  });
});
