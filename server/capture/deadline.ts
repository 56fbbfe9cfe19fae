/**
 * Settles with `work`, or rejects with `onTimeout()` after `ms`. The loser is not cancelled
 * (the caller tears the page down), but its late rejection is swallowed so a closed page never
 * surfaces as an unhandled rejection.
 */
export async function withDeadline<T>(work: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  work.catch(() => undefined);
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(onTimeout()), Math.max(0, ms));
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** A duration as messages show it: whole seconds, or tenths below one second. */
export function seconds(ms: number): string {
  return ms >= 950 ? String(Math.round(ms / 1000)) : String(Math.round(ms / 100) / 10);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
