import { describe, expect, it } from 'vitest';

import { clearOfMidnight, untilMidnightUtc } from './clear-of-midnight.js';

describe('clearOfMidnight', () => {
  const sleeps = async (at: number, spanMs: number) => {
    const slept: number[] = [];
    await clearOfMidnight(spanMs, () => at, async (ms) => void slept.push(ms));
    return slept;
  };

  it('waits until a second past 00:00 UTC when the span would cross it', async () => {
    expect(await sleeps(Date.UTC(2026, 10, 27, 23, 59, 50), 30_000)).toEqual([11_000]);
    expect(await sleeps(Date.UTC(2026, 11, 31, 23, 59, 59, 500), 30_000)).toEqual([1_500]);
  });

  it('returns at once when the span ends before 00:00 UTC, or the day has just begun', async () => {
    expect(await sleeps(Date.UTC(2026, 10, 27, 23, 59, 20), 30_000)).toEqual([]);
    expect(await sleeps(Date.UTC(2026, 10, 28, 0, 0, 0), 30_000)).toEqual([]);
    expect(await sleeps(Date.UTC(2026, 10, 27, 12), 3_600_000)).toEqual([]);
  });

  it('counts to the next 00:00 UTC whatever the local time zone', () => {
    expect(untilMidnightUtc(Date.UTC(2026, 10, 27, 18))).toBe(6 * 3_600_000);
    expect(untilMidnightUtc(Date.UTC(2026, 10, 28))).toBe(86_400_000);
  });
});
