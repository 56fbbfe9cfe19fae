import type { Logger } from '../logger.js';
import type { MonitorStore } from '../store/stores.js';
import type { Clock } from '../time.js';
import type { MonitorChecks } from './monitor-checks.js';
import { nextOccurrence } from './schedule.js';

export interface MonitorSchedulerDeps {
  store: MonitorStore;
  checks: MonitorChecks;
  clock: Clock;
  log: Logger;
  /** How often the store is asked for due occurrences, ms. @default 1000 */
  pollMs?: number;
  /** How long pictures are kept (the retention period), ms: older checks lose their diff picture. */
  retentionMs: () => number;
  /** How long job records are kept (the history period), ms: older checks go too. */
  historyMs: () => number;
}

/** How often the diff pictures past the retention period, and the checks past the history period, are removed, ms. */
const SWEEP_MS = 3_600_000;

/** Due monitors taken per look. */
const DUE_BATCH = 50;

/**
 * Runs each monitor's occurrences. The next occurrence of every monitor is stored
 * (`next_run_at`), so a schedule survives a restart; a look finds the monitors due, and each
 * occurrence is claimed by moving `next_run_at` to the one after it with a conditional update:
 * of two nodes (or a node and its restart) claiming it, one runs it. The one after is the first
 * later than now, so occurrences missed while no node ran are made up by one check, not a burst.
 * It also removes, hourly, the diff pictures of checks past the retention period, and the checks
 * past the history period (with their jobs, which that period removes).
 */
export class MonitorScheduler {
  private timer: NodeJS.Timeout | undefined;
  private sweeper: NodeJS.Timeout | undefined;
  private looking: Promise<void> | undefined;
  private stopped = true;

  constructor(private readonly deps: MonitorSchedulerDeps) {}

  start(): void {
    this.stopped = false;
    const pollMs = this.deps.pollMs ?? 1000;
    this.timer = setInterval(() => void this.look(), pollMs);
    this.timer.unref();
    void this.look();
    this.sweeper = setInterval(() => void this.sweep(), SWEEP_MS);
    this.sweeper.unref();
    void this.sweep();
  }

  /**
   * Removes the diff pictures past the retention period and the checks past the history period
   * (a failure is logged; the next sweep tries again). Resolves to how many of each it removed.
   */
  async sweep(): Promise<{ diffs: number; checks: number }> {
    const now = this.deps.clock.now();
    const diffs = await this.deps.checks.sweepDiffs(now - this.deps.retentionMs()).catch((err: unknown) => {
      this.deps.log.warn({ component: 'monitors', err }, 'could not remove old diff pictures');
      return 0;
    });
    const checks = await this.deps.checks.purgeBefore(now - this.deps.historyMs()).catch((err: unknown) => {
      this.deps.log.warn({ component: 'monitors', err }, 'could not remove the checks past the history period');
      return 0;
    });
    if (checks) this.deps.log.info({ component: 'monitors' }, `removed ${checks} monitor check(s) older than the history period`);
    return { diffs, checks };
  }

  /** Stops looking, and waits for a look under way (the checks it started are jobs like any other). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearInterval(this.sweeper);
    await this.looking;
  }

  /** One look for due occurrences (not overlapping another); resolves when their checks are made. */
  look(): Promise<void> {
    if (this.looking) return this.looking;
    this.looking = this.runDue()
      .catch((err: unknown) => this.deps.log.warn({ component: 'monitors', err }, 'could not look for due monitors'))
      .finally(() => {
        this.looking = undefined;
      });
    return this.looking;
  }

  private async runDue(): Promise<void> {
    const now = this.deps.clock.now();
    for (const monitor of await this.deps.store.due(now, DUE_BATCH)) {
      if (this.stopped) return;
      const occurrence = monitor.next_run_at;
      if (occurrence === null) continue;
      const next = nextOccurrence(monitor.schedule, occurrence, now);
      if (!(await this.deps.store.claim(monitor._id, occurrence, next))) continue;
      await this.deps.checks.start(monitor, occurrence).catch((err: unknown) =>
        this.deps.log.error({ component: 'monitors', monitor_id: monitor._id, err }, 'a scheduled check could not be made'),
      );
    }
  }
}
