/**
 * Delays before each retry after the first attempt: about 5 s, 5 min, 30 min, 2 h, 5 h and 10 h,
 * the Standard Webhooks reference schedule; the last retry comes about 17.6 h after the job ended.
 */
export const DEFAULT_SCHEDULE_MS: readonly number[] = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000];

/** A receiver's Retry-After is honoured up to this long, so it cannot park a delivery forever. */
export const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

/** Each delay is moved by up to this fraction either way, so receivers are not hit in waves. */
const JITTER = 0.2;

/**
 * Milliseconds until retry number `retry` (1-based), or null when the schedule is exhausted.
 * A Retry-After longer than the scheduled delay wins (capped at 24 h).
 */
export function retryDelay(
  retry: number,
  schedule: readonly number[],
  retryAfterMs: number | null = null,
  random: () => number = Math.random,
): number | null {
  if (retry < 1 || retry > schedule.length) return null;
  const base = schedule[retry - 1];
  const jittered = Math.round(base * (1 + JITTER * (2 * random() - 1)));
  return Math.max(jittered, Math.min(retryAfterMs ?? 0, MAX_RETRY_AFTER_MS));
}

/** A Retry-After header (delay-seconds or an HTTP date) as milliseconds from `now`; null when absent or invalid. */
export function parseRetryAfter(value: string | undefined, now: number): number | null {
  if (!value) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}
