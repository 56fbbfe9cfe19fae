import type { Logger } from '../logger.js';
import type { SettingsService } from '../settings.js';
import type { Store } from '../store/datastores.js';
import type { FileStore } from '../store/file-store.js';
import type { Clock } from '../time.js';
import type { JobRecord } from './job-record.js';

/**
 * Removes the image and page source of jobs older than the retention period and marks the
 * jobs `expired`, so their screenshot_url answers 404 and the job says why.
 */
export class Retention {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: { store: Store; files: FileStore; settings: SettingsService; clock: Clock; log: Logger },
  ) {}

  async sweep(): Promise<number> {
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
