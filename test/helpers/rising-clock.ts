import type { Clock } from '../../server/time.js';

/**
 * A clock that follows the real one but never reads the same millisecond twice: each reading is
 * at least one millisecond after the one before, so records stamped one after another sort in
 * that order by time however fast the machine makes them.
 */
export function risingClock(): Clock {
  let last = 0;
  return { now: () => (last = Math.max(Date.now(), last + 1)) };
}
