import type { Logger } from '../../logger.js';
import type { FileStore } from '../file-store.js';
import type { LeftOutHistory } from '../stores.js';
import type { PreparedJobs } from './history-prefilter.js';

/** Files removed between two looks at the event loop's other work. */
const BATCH = 500;

/**
 * The jobs a start left out of jobs.db's documents as past the history period (history-prefilter):
 * gone from memory at once, while their lines stay in jobs.db and their images and page sources
 * on disk until `drop`, the retention sweep's first step, removes the files and then folds the
 * file. In that order, and jobs.db is not folded by anyone before (`mayFold`): a stop or a crash
 * in between leaves the lines for the next start to find again, so no file is left behind
 * without a job naming it.
 */
export class NedbLeftOutJobs implements LeftOutHistory {
  private files: PreparedJobs['withFiles'];
  private left: number;
  /** jobs.db holds lines the fold takes away (the jobs left out, or a document's earlier lines). */
  private unfolded: boolean;
  private dropping: Promise<number> | undefined;

  constructor(
    prepared: PreparedJobs,
    private readonly deps: { files: FileStore; fold: () => Promise<void>; log: Logger },
  ) {
    this.files = prepared.withFiles;
    this.left = prepared.dropped;
    this.unfolded = !prepared.compact;
  }

  pending(): number {
    return this.left;
  }

  /** Whether jobs.db may be folded now: not while a job left out of it still has files on disk. */
  mayFold(): boolean {
    return this.files.length === 0;
  }

  drop(): Promise<number> {
    this.dropping ??= this.dropOnce().finally(() => (this.dropping = undefined));
    return this.dropping;
  }

  private async dropOnce(): Promise<number> {
    const { files, left } = this;
    if (left === 0 && !this.unfolded) return 0;
    for (let i = 0; i < files.length; i += BATCH) {
      await this.deps.files.removeMany(files.slice(i, i + BATCH).map(({ jobId, image }) => ({ image: image ?? undefined, jobId })));
      await new Promise((resolve) => setImmediate(resolve));
    }
    this.files = [];
    await this.deps.fold();
    this.unfolded = false;
    this.left = 0;
    if (left > 0) this.deps.log.info(`removed ${left} job(s) left out at start as past the history period${files.length ? `, and the files of ${files.length}` : ''}`);
    return left;
  }
}
