/**
 * What a capture engine tells about its browsers as it happens, for the metrics: each method is
 * called by the code that did the thing, so a counter never depends on a log line's words.
 * Every method is optional; a listener's failure is not the engine's.
 */
export interface EngineEvents {
  /** A new browser is being started: the last one was recycled, or it exited unasked for. */
  browserStarting?(reason: 'recycled' | 'exited'): void;
  /** A browser that stopped answering was killed. */
  browserKilled?(): void;
  /** A page's renderer was killed for using more memory than its limit. */
  rendererKilled?(): void;
}

/** Calls `event` on `events`, keeping a listener's failure from the caller. */
export function tell<E extends keyof EngineEvents>(events: EngineEvents | undefined, event: E, ...args: Parameters<NonNullable<EngineEvents[E]>>): void {
  try {
    (events?.[event] as ((...a: unknown[]) => void) | undefined)?.(...args);
  } catch {
    // Counting must never break what it counts.
  }
}
