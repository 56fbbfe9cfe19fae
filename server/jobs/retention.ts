import type { Logger } from '../logger.js';
import type { SettingsService } from '../settings.js';
import type { FileStore, JobFiles } from '../store/file-store.js';
import type { JobRecord } from '../store/records/job-record.js';
import type { Stores } from '../store/stores.js';
import { type Clock, HOUR_MS, utcHourStart } from '../time.js';

/** Job records removed at a time, so a year of history does not become one huge operation. */
const PURGE_BATCH = 2000;
/** Jobs whose files are removed together before they are marked expired. */
const EXPIRE_BATCH = 500;
/** Hours of job ends kept for the dashboard (it shows the last 24). */
const HOURLY_KEPT_MS = 7 * 24 * HOUR_MS;

/**
 * Removes the image and page source of jobs older than the retention period and marks the
 * jobs `expired`, so their screenshot_url answers 404 and the job says why. Jobs older than the
 * history period (`history_days`) go altogether, with their webhook deliveries, so the stores
 * stop growing; usage per day is kept apart and stays. The first sweep runs as the service
 * starts, beside the requests: a start that has a year of history to drop from disk does not
 * wait for it.
 */
export class Retention {
  private timer: NodeJS.Timeout | undefined;
  private first: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: {
      stores: Pick<Stores, 'jobs' | 'deliveries' | 'batches' | 'stats' | 'compact' | 'leftOut'>;
      files: FileStore;
      settings: SettingsService;
      clock: Clock;
      log: Logger;
    },
  ) {}

  /**
   * Removes from disk what the start left out as past the history period, expires what passed
   * the retention period, then removes what passed the history period; returns how many expired.
   */
  async sweep(): Promise<number> {
    // A failure here (a full disk) leaves the lines for a later sweep, or start; the rest goes on.
    await this.deps.stores.leftOut?.drop().catch((err: unknown) => this.deps.log.warn({ err }, 'could not remove the jobs left out at start yet'));
    const expired = await this.expire();
    await this.purgeHistory();
    await this.deps.stores.stats.prune(utcHourStart(this.deps.clock.now() - HOURLY_KEPT_MS));
    return expired;
  }

  /**
   * Removes the jobs that ended before the history period, and any file they still have, in
   * batches; then their webhook deliveries and the batches (POST /v1/batches) that ended before it; then folds what the removals left in the stores.
   * Returns how many jobs were removed. Jobs still waiting or running are left alone.
   */
  async purgeHistory(): Promise<number> {
    const { jobs, deliveries } = this.deps.stores;
    const cutoff = this.deps.clock.now() - this.deps.settings.get().history_days * 86_400_000;
    let removed = 0;
    for (;;) {
      const old = await jobs.endedBefore(cutoff, PURGE_BATCH);
      if (old.length === 0) break;
      await this.deps.files.removeMany(old.filter((job) => !job.expired).map(filesOf));
      removed += await jobs.remove(old.map((job) => job._id));
      if (old.length < PURGE_BATCH) break;
    }
    const deliveriesRemoved = await deliveries.removeFinishedBefore(cutoff);
    const batchesRemoved = await this.deps.stores.batches.removeEndedBefore(cutoff);
    if (removed > 0 || deliveriesRemoved > 0 || batchesRemoved > 0) {
      await this.deps.stores.compact();
      this.deps.log.info(`removed ${removed} job(s), ${deliveriesRemoved} webhook delivery(ies) and ${batchesRemoved} batch(es) older than the history period`);
    }
    return removed;
  }

  private async expire(): Promise<number> {
    const cutoff = this.deps.clock.now() - this.deps.settings.get().retention_days * 86_400_000;
    const old = await this.deps.stores.jobs.toExpire(cutoff);
    // The files of a batch go at once (object storage: one DeleteObjects per 1000 keys), then the jobs say so.
    for (let i = 0; i < old.length; i += EXPIRE_BATCH) {
      const batch = old.slice(i, i + EXPIRE_BATCH);
      await this.deps.files.removeMany(batch.map(filesOf));
      for (const job of batch) {
        await this.deps.stores.jobs.update(job._id, { expired: true, has_page_source: false, ...(job.options?.extract ? { has_markdown: false, has_text: false, has_links: false } : {}) });
      }
    }
    if (old.length) this.deps.log.info(`removed the files of ${old.length} expired job(s)`);
    return old.length;
  }

  /** Sweeps after `firstAfterMs` (now, by default) and then every `intervalMs`. */
  start(intervalMs = HOUR_MS, firstAfterMs = 0): void {
    const tick = () =>
      this.sweep().catch((err: unknown) => this.deps.log.error({ err }, 'the retention sweep failed'));
    if (firstAfterMs > 0) {
      this.first = setTimeout(tick, firstAfterMs);
      this.first.unref();
    } else {
      void tick();
    }
    this.timer = setInterval(tick, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearTimeout(this.first);
    if (this.timer) clearInterval(this.timer);
  }
}

/** The files a job may have: its image (if any), its page source and outputs. */
function filesOf(job: Pick<JobRecord, '_id' | 'image_file'>): JobFiles {
  return { image: job.image_file ?? undefined, jobId: job._id };
}
