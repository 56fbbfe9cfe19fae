import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../data-dir.js';
import { hasEnded } from '../records/job-record.js';
import type { JobSecretStore, JobStore } from '../stores.js';

/** The folder of the data directory holding the sealed secrets of jobs that have not ended; never archived by `backup`. */
export const JOB_SECRETS_DIR = 'job-secrets';

/** Job ids as the service makes them: a file name, never a path. */
const SAFE_ID = /^[A-Za-z0-9_-]{1,64}$/;

function fileName(id: string): string {
  if (!SAFE_ID.test(id)) throw new Error(`not a job id: ${JSON.stringify(id)}`);
  return id;
}

/**
 * The NeDB backend's JobSecretStore: one small file per job in `<data>/job-secrets/` (0600),
 * written before the job is inserted and unlinked when it ends, so the secrets never reach
 * jobs.db, whose lines outlive the job, and no file holds them once the job has ended.
 */
export class JobSecretFiles implements JobSecretStore {
  private constructor(
    private readonly dir: string,
    private readonly jobs: JobStore,
  ) {}

  static async open(dataDir: string, jobs: JobStore): Promise<JobSecretFiles> {
    const dir = path.join(dataDir, JOB_SECRETS_DIR);
    await fs.mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    await fs.chmod(dir, PRIVATE_DIR_MODE);
    return new JobSecretFiles(dir, jobs);
  }

  async put(entries: ReadonlyArray<{ id: string; sealed: string }>): Promise<void> {
    const written: string[] = [];
    try {
      for (const { id, sealed } of entries) {
        const target = path.join(this.dir, fileName(id));
        const temp = `${target}.${crypto.randomBytes(6).toString('hex')}.tmp`;
        try {
          await fs.writeFile(temp, sealed, { mode: PRIVATE_FILE_MODE, flush: true });
          await fs.rename(temp, target);
        } finally {
          await fs.rm(temp, { force: true });
        }
        written.push(id);
      }
    } catch (err) {
      // All or none: the jobs are not inserted, so none of their secrets stay.
      await this.remove(written).catch(() => undefined);
      throw err;
    }
  }

  async get(id: string): Promise<string | null> {
    if (!SAFE_ID.test(id)) return null;
    try {
      return await fs.readFile(path.join(this.dir, id), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async remove(ids: readonly string[]): Promise<void> {
    for (const id of ids) if (SAFE_ID.test(id)) await fs.rm(path.join(this.dir, id), { force: true });
  }

  /** At start, before jobs are taken: files of ended or removed jobs, and writes cut short. */
  async sweep(): Promise<number> {
    let removed = 0;
    for (const name of await fs.readdir(this.dir)) {
      const job = SAFE_ID.test(name) ? await this.jobs.get(name) : null;
      if (job && !hasEnded(job.status)) continue;
      await fs.rm(path.join(this.dir, name), { force: true, recursive: true });
      removed++;
    }
    return removed;
  }
}
