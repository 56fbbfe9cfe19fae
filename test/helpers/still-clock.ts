import type { Clock } from '../../server/time.js';

/**
 * A clock that follows the real one except while `still` runs: then it stands at the moment
 * `still` began, so a burst of requests falls into one second of the per-second limits however
 * slowly a loaded machine answers them.
 */
export function stillClock(): { clock: Clock; still<T>(work: () => Promise<T>): Promise<T> } {
  let heldAt: number | undefined;
  return {
    clock: { now: () => heldAt ?? Date.now() },
    async still(work) {
      heldAt = Date.now();
      try {
        return await work();
      } finally {
        heldAt = undefined;
      }
    },
  };
}
