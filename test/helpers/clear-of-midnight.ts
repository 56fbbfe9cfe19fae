const DAY_MS = 86_400_000;

/** Milliseconds from `now` to the next 00:00 UTC, when daily limits and usage start again. */
export function untilMidnightUtc(now: number): number {
  return DAY_MS - (now % DAY_MS);
}

/**
 * Waits, when fewer than `spanMs` are left before 00:00 UTC, until a second past it; else returns
 * at once. Daily limits and `calls_today` count per UTC day, so a test that counts calls must
 * not start in one day and read its counts in the next. A test (or file) whose counts are made
 * within `spanMs` of its start calls this first; every test is given 30 s this way by
 * test/helpers/setup.ts.
 */
export async function clearOfMidnight(spanMs: number, now: () => number = Date.now, sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))): Promise<void> {
  const left = untilMidnightUtc(now());
  if (left < spanMs) await sleep(left + 1000);
}
