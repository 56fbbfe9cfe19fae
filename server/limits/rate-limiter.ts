import type { Clock } from '../time.js';

/**
 * Requests per second per account, as a sliding one-second window. In memory: a restart
 * forgets at most one second of history.
 */
export class RateLimiter {
  private readonly windows = new Map<string, number[]>();

  constructor(
    private readonly clock: Clock,
    private limit: number,
  ) {}

  setLimit(limit: number): void {
    this.limit = limit;
  }

  /** Records a request and returns 0, or — when refused, not recorded — the seconds to wait (≥1). */
  take(accountId: string): number {
    const now = this.clock.now();
    const recent = (this.windows.get(accountId) ?? []).filter((t) => now - t < 1000);
    if (recent.length >= this.limit) {
      this.windows.set(accountId, recent);
      return Math.max(1, Math.ceil((recent[0] + 1000 - now) / 1000));
    }
    recent.push(now);
    this.windows.set(accountId, recent);
    if (this.windows.size > 10_000) this.sweep(now);
    return 0;
  }

  private sweep(now: number) {
    for (const [id, times] of this.windows) if (times.every((t) => now - t >= 1000)) this.windows.delete(id);
  }
}
