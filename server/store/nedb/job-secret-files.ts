import { hasEnded } from '../records/job-record.js';
import type { JobSecretStore, JobStore } from '../stores.js';
import { SealedFiles } from './sealed-files.js';

/** The folder of the data directory holding the sealed secrets of jobs that have not ended; never archived by `backup`. */
export const JOB_SECRETS_DIR = 'job-secrets';

/**
 * The NeDB backend's JobSecretStore: one small file per job in `<data>/job-secrets/`
 * (SealedFiles), written before the job is inserted and unlinked when it ends, so the secrets
 * never reach jobs.db, whose lines outlive the job, and no file holds them once the job has ended.
 */
export class JobSecretFiles implements JobSecretStore {
  private constructor(
    private readonly files: SealedFiles,
    private readonly jobs: JobStore,
  ) {}

  static async open(dataDir: string, jobs: JobStore): Promise<JobSecretFiles> {
    return new JobSecretFiles(await SealedFiles.open(dataDir, JOB_SECRETS_DIR, 'job'), jobs);
  }

  async put(entries: ReadonlyArray<{ id: string; sealed: string }>): Promise<void> {
    const written: string[] = [];
    try {
      for (const { id, sealed } of entries) {
        await this.files.put(id, sealed);
        written.push(id);
      }
    } catch (err) {
      // All or none: the jobs are not inserted, so none of their secrets stay.
      await this.remove(written).catch(() => undefined);
      throw err;
    }
  }

  get(id: string): Promise<string | null> {
    return this.files.get(id);
  }

  async remove(ids: readonly string[]): Promise<void> {
    for (const id of ids) await this.files.remove(id);
  }

  /** At start, before jobs are taken: files of ended or removed jobs, and writes cut short. */
  sweep(): Promise<number> {
    return this.files.sweep(async (id) => {
      const job = await this.jobs.get(id);
      return job !== null && !hasEnded(job.status);
    });
  }
}
