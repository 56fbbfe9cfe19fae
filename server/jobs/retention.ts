import type { Logger } from '../logger.js';
import type { SettingsService } from '../settings.js';
import { compactStore, type Store } from '../store/datastores.js';
import type { FileStore } from '../store/file-store.js';
import type { Clock } from '../time.js';
import type { JobRecord } from './job-record.js';

/** Job records removed at a time, so a year of history does not become one huge operation. */
const PURGE_BATCH = 2000;

/**
 * Removes the image and page source of jobs older than the retention period and marks the
 * jobs `expired`, so their screenshot_url answers 404 and the job says why. Jobs older than the
 * history period (`history_days`) go altogether, with their webhook deliveries, so the stores
 * (which NeDB holds in memory) stop growing; usage per day is kept apart and stays.
 */
export class Retention {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: { store: Store; deliveries?: Store; files: FileStore; settings: SettingsService; clock: Clock; log: Logger },
  ) {}

  /** Expires what passed the retention period, then removes what passed the history period; returns how many expired. */
  async sweep(): Promise<number> {
    const expired = await this.expire();
    await this.purgeHistory();
    return expired;
  }

  /**
   * Removes the jobs that ended before the history period, and any file they still have, in
   * batches; then their webhook deliveries; then rewrites the files compactly. Returns how many
   * jobs were removed. Jobs still waiting or running are left alone.
   */
  async purgeHistory(): Promise<number> {
    const cutoff = this.deps.clock.now() - this.deps.settings.get().history_days * 86_400_000;
    let removed = 0;
    for (;;) {
      const old = (await this.deps.store
        .find({ created_at: { $lt: cutoff }, status: { $in: ['completed', 'failed'] } })
        .limit(PURGE_BATCH)) as JobRecord[];
      if (old.length === 0) break;
      for (const job of old) {
        if (!job.expired) await this.deps.files.remove(job.image_file ?? undefined, job._id);
      }
      removed += await this.deps.store.remove({ _id: { $in: old.map((job) => job._id) } }, { multi: true });
      if (old.length < PURGE_BATCH) break;
    }
    const deliveries = this.deps.deliveries
      ? await this.deps.deliveries.remove({ created_at: { $lt: cutoff }, status: { $ne: 'pending' } }, { multi: true })
      : 0;
    if (removed > 0) {
      await compactStore(this.deps.store);
      if (deliveries > 0 && this.deps.deliveries) await compactStore(this.deps.deliveries);
      this.deps.log.info(`removed ${removed} job(s) and ${deliveries} webhook delivery(ies) older than the history period`);
    }
    return removed;
  }

  private async expire(): Promise<number> {
    const cutoff = this.deps.clock.now() - this.deps.settings.get().retention_days * 86_400_000;
    const old = (await this.deps.store.find({
      expired: false,
      status: { $in: ['completed', 'failed'] },
      completed_at: { $lt: cutoff },
    })) as JobRecord[];
    for (const job of old) {
      await this.deps.files.remove(job.image_file ?? undefined, job._id);
      await this.deps.store.update({ _id: job._id }, { $set: { expired: true, has_page_source: false } });
    }
    if (old.length) this.deps.log.info(`removed the files of ${old.length} expired job(s)`);
    return old.length;
  }

  /** Sweeps now and then every `intervalMs`. */
  start(intervalMs = 3_600_000): void {
    const tick = () =>
      this.sweep().catch((err: unknown) => this.deps.log.error({ err }, 'the retention sweep failed'));
    void tick();
    this.timer = setInterval(tick, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
