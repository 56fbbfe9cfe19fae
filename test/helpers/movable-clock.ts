import type { Clock } from '../../server/time.js';

/** A clock that follows the real one, plus an offset the test moves on: minutes pass at once. */
export interface MovableClock extends Clock {
  advance(ms: number): void;
}

export function movableClock(): MovableClock {
  let offset = 0;
  return { now: () => Date.now() + offset, advance: (ms) => void (offset += ms) };
}
