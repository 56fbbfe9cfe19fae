// Bounds for work that may never finish: a browser that hangs, a name server that does not
// answer, a server that will not stop. Shared by capture, egress and the desktop app, so it
// depends on nothing of theirs.

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

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
