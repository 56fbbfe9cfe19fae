import type { JobRecord } from '../../server/store/records/job-record.js';
import type { JobChange, JobSecretStore, JobStore } from '../../server/store/stores.js';
import { waitingJob } from '../store/conformance-records.js';

/** A job waiting to run (the conformance suite's waitingJob), first in its account's turns; `fields` override. */
export function pendingJob(fields: Partial<JobRecord> & { _id: string }): JobRecord {
  return waitingJob({ batch_id: `batch-${fields._id}`, created_at: 1_000, turn: 0, ...fields });
}

const unused = (name: string) => () => Promise.reject(new Error(`FakeJobStore.${name} is not used by the job core`));

/**
 * The job store in memory, for unit tests of the job core: the reads and writes the queue, the
 * runs, the claims and the ends make, with the semantics of the real stores (a lease-held write
 * refused to another node, claims in the fair order), every update recorded, and failures to
 * order. Methods the job core does not call reject.
 */
export class FakeJobStore implements JobStore {
  readonly jobs = new Map<string, JobRecord>();
  /** Every update asked for, in order, refused or not. */
  readonly updates: Array<{ id: string; change: JobChange; holder?: string }> = [];
  private readonly failures: unknown[] = [];

  constructor(jobs: readonly JobRecord[] = []) {
    for (const job of jobs) this.jobs.set(job._id, structuredClone(job));
  }

  /** The next `count` calls to update (and claim, renew, count) reject with `err`, as a store that went away. */
  failNext(err: unknown, count = 1): void {
    for (let i = 0; i < count; i++) this.failures.push(err);
  }

  /** A copy of the job as stored now. */
  job(id: string): JobRecord {
    const job = this.jobs.get(id);
    if (!job) throw new Error(`no job ${id}`);
    return structuredClone(job);
  }

  /** The values one field of a job was set to, in order. */
  changesOf<K extends keyof JobChange>(id: string, field: K): Array<JobChange[K]> {
    return this.updates.filter((u) => u.id === id && field in u.change).map((u) => u.change[field]);
  }

  private fail(): void {
    if (this.failures.length) throw this.failures.shift();
  }

  insert(jobs: readonly JobRecord[]): Promise<void> {
    for (const job of jobs) this.jobs.set(job._id, structuredClone(job));
    return Promise.resolve();
  }

  get(id: string): Promise<JobRecord | null> {
    const job = this.jobs.get(id);
    return Promise.resolve(job ? structuredClone(job) : null);
  }

  async update(id: string, change: JobChange, holder?: string): Promise<boolean> {
    this.updates.push({ id, change: structuredClone(change), holder });
    await Promise.resolve();
    this.fail();
    const job = this.jobs.get(id);
    if (!job || (holder !== undefined && job.lease_owner !== holder)) return false;
    Object.assign(job, structuredClone(change));
    return true;
  }

  async claim(node: string, limit: number, now: number, until: number): Promise<JobRecord[]> {
    await Promise.resolve();
    this.fail();
    const free = [...this.jobs.values()]
      .filter((job) => job.status === 'pending' || (job.status === 'processing' && (job.lease_until ?? 0) < now))
      .sort((a, b) => (a.turn ?? 0) - (b.turn ?? 0) || a.created_at - b.created_at || (a._id < b._id ? -1 : 1))
      .slice(0, limit);
    for (const job of free) Object.assign(job, { status: 'processing', lease_owner: node, lease_until: until });
    return free.map((job) => structuredClone(job));
  }

  async renew(node: string, ids: readonly string[], until: number): Promise<string[]> {
    await Promise.resolve();
    this.fail();
    const held = ids.map((id) => this.jobs.get(id)).filter((job) => job?.lease_owner === node && job.status === 'processing');
    for (const job of held) job!.lease_until = until;
    return held.map((job) => job!._id);
  }

  async count(filter: { account_id?: string; status?: readonly JobRecord['status'][] } = {}): Promise<number> {
    await Promise.resolve();
    this.fail();
    return [...this.jobs.values()].filter(
      (job) => (!filter.account_id || job.account_id === filter.account_id) && (!filter.status || filter.status.includes(job.status)),
    ).length;
  }

  unfinished(): Promise<JobRecord[]> {
    const jobs = [...this.jobs.values()].filter((job) => job.status === 'pending' || job.status === 'processing');
    return Promise.resolve(jobs.sort((a, b) => a.created_at - b.created_at).map((job) => structuredClone(job)));
  }

  webhookDue(cutoff: number, limit: number): Promise<JobRecord[]> {
    const due = [...this.jobs.values()]
      .filter((job) => job.webhook_due && job.completed_at !== null && job.completed_at < cutoff)
      .sort((a, b) => (a.completed_at ?? 0) - (b.completed_at ?? 0))
      .slice(0, limit);
    return Promise.resolve(due.map((job) => structuredClone(job)));
  }

  enqueue = unused('enqueue');
  byImage = unused('byImage');
  countAhead = unused('countAhead');
  byCacheKey = unused('byCacheKey');
  list = unused('list');
  endedBefore = unused('endedBefore');
  toExpire = unused('toExpire');
  remove = unused('remove');
}

/** Jobs' sealed secrets in memory; `removed` lists the ids erased. */
export class FakeJobSecretStore implements JobSecretStore {
  readonly sealed = new Map<string, string>();
  readonly removed: string[] = [];

  put(entries: ReadonlyArray<{ id: string; sealed: string }>): Promise<void> {
    for (const { id, sealed } of entries) this.sealed.set(id, sealed);
    return Promise.resolve();
  }

  get(id: string): Promise<string | null> {
    return Promise.resolve(this.sealed.get(id) ?? null);
  }

  remove(ids: readonly string[]): Promise<void> {
    for (const id of ids) {
      this.sealed.delete(id);
      this.removed.push(id);
    }
    return Promise.resolve();
  }

  sweep(): Promise<number> {
    return Promise.resolve(0);
  }
}
