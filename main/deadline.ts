/**
 * Settles with `work`, or rejects with `onTimeout()` after `ms`. The loser is not cancelled
 * here (the caller tears the page down), but its late rejection is swallowed so a destroyed
 * window never surfaces as an unhandled rejection in the main process.
 */
export async function withDeadline<T>(work: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  work.catch(() => undefined);
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(onTimeout()), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Seconds as people write them in messages: 30, 1.5. */
export function seconds(ms: number): string {
  return String(Math.round(ms / 100) / 10);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
