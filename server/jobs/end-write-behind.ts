import type { Logger } from '../logger.js';
import { hasEnded, type JobRecord } from '../store/records/job-record.js';
import type { JobChange, JobStore } from '../store/stores.js';

/** How often a job's end that could not be stored (a full disk) is written again. */
const SAVE_RETRY_MS = 5000;

export interface EndWriteBehindDeps {
  store: JobStore;
  log: Logger;
  /** Called once a job has ended (completed or failed), after it is persisted. */
  onEnded?: (job: JobRecord) => void;
}

/**
 * A write-behind buffer for job ends (completed or failed) the store refused: every end goes
 * through it to the store, and one the disk refuses is kept in memory: readers see it at once (`overlay`), it is written again every 5 s, and the job's end
 * is announced (its webhook) only once it is stored.
 */
export class EndWriteBehind {
  /** Ends waiting for the store, with the node whose lease they need (cluster mode). */
  private readonly unsaved = new Map<string, { end: JobChange; holder?: string }>();
  private timer: NodeJS.Timeout | undefined;
  private saving: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly deps: EndWriteBehindDeps) {}

  /**
   * Stores a job's end; when the disk refuses it, keeps it for readers and writes it later
   * (`deferred`). With `holder` (cluster mode) the end is stored only while that node holds the
   * job's lease: `lost` when another node has taken the job over.
   */
  async save(jobId: string, end: JobChange, holder?: string): Promise<'stored' | 'deferred' | 'lost'> {
    try {
      return (await this.deps.store.update(jobId, end, holder)) ? 'stored' : 'lost';
    } catch (err) {
      this.deps.log.warn({ job_id: jobId, err }, `its end could not be stored; trying again every ${SAVE_RETRY_MS / 1000} s`);
      this.unsaved.set(jobId, { end, holder });
      this.schedule();
      return 'deferred';
    }
  }

  /** True while the job's end waits in memory for the disk. */
  isUnsaved(jobId: string): boolean {
    return this.unsaved.has(jobId);
  }

  /** The job as readers should see it: with its end, when that is not stored yet. */
  overlay(job: JobRecord | null): JobRecord | null {
    const end = job && this.unsaved.get(job._id)?.end;
    return end ? { ...job, ...end } : job;
  }

  /** Tells `onEnded` about a stored job that has ended. */
  async announce(jobId: string): Promise<void> {
    const ended = await this.deps.store.get(jobId);
    if (ended && hasEnded(ended.status)) this.deps.onEnded?.(ended);
  }

  /** Stops the retries after one last try; resolves to the number of ends still not stored. */
  async stop(): Promise<number> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.flush();
    return this.unsaved.size;
  }

  private schedule(): void {
    if (this.timer || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush().then(() => {
        if (this.unsaved.size) this.schedule();
      });
    }, SAVE_RETRY_MS);
    this.timer.unref();
  }

  /** Writes the ends kept in memory; never rejects (what fails stays for the next try). */
  private flush(): Promise<void> {
    this.saving ??= this.write().finally(() => {
      this.saving = undefined;
    });
    return this.saving;
  }

  private async write(): Promise<void> {
    for (const [jobId, { end, holder }] of this.unsaved) {
      let stored: boolean;
      try {
        stored = await this.deps.store.update(jobId, end, holder);
      } catch {
        return;
      }
      this.unsaved.delete(jobId);
      // The lease ran out while the store was away: the job is another node's now, and so is its end.
      if (!stored) continue;
      await this.announce(jobId).catch((err: unknown) => this.deps.log.error({ job_id: jobId, err }, 'announcing its end failed'));
    }
  }
}
