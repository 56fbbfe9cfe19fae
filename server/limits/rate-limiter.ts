import type { Clock } from '../time.js';

/**
 * Requests per second per key (an account, or a client address), as a sliding one-second window. In memory: a restart
 * forgets at most one second of history.
 */
export class RateLimiter {
  private readonly windows = new Map<string, number[]>();

  constructor(
    private readonly clock: Clock,
    private max: number,
  ) {}

  get limit(): number {
    return this.max;
  }

  setLimit(limit: number): void {
    this.max = limit;
  }

  /** Records a request and returns 0, or — when refused, not recorded — the seconds to wait (≥1). */
  take(key: string): number {
    const now = this.clock.now();
    const recent = (this.windows.get(key) ?? []).filter((t) => now - t < 1000);
    if (recent.length >= this.max) {
      this.windows.set(key, recent);
      return Math.max(1, Math.ceil((recent[0] + 1000 - now) / 1000));
    }
    recent.push(now);
    this.windows.set(key, recent);
    if (this.windows.size > 10_000) this.sweep(now);
    return 0;
  }

  private sweep(now: number) {
    for (const [id, times] of this.windows) if (times.every((t) => now - t >= 1000)) this.windows.delete(id);
  }
}
