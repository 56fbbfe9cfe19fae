import type { JobRecord, JobStatus } from '../jobs/job-record.js';
import { KeyedTurns } from '../keyed-turns.js';
import type { NedbFile } from './nedb-stores.js';
import type { JobChange, JobListFilter, JobStore } from './stores.js';

const HOUR = 3_600_000;
/** How far back the job list looks at a time, widening until a page is full. */
const LIST_WINDOWS = [HOUR, 24 * HOUR, 7 * 24 * HOUR, 30 * 24 * HOUR, Infinity];
const UNFINISHED: readonly JobStatus[] = ['pending', 'processing'];
const ENDED: readonly JobStatus[] = ['completed', 'failed'];

/** Newest first: created_at, then id, both descending. */
const newestFirst = (a: JobRecord, b: JobRecord) => b.created_at - a.created_at || (a._id < b._id ? 1 : a._id > b._id ? -1 : 0);

/** jobs.db: every job, held in memory by NeDB, with the indexes its reads need. */
export class NedbJobStore implements JobStore {
  /** Claims take turns, so two claims in this process never hand out one job twice. */
  private readonly turns = new KeyedTurns();

  private constructor(private readonly db: NedbFile<JobRecord>) {}

  static async open(db: NedbFile<JobRecord>): Promise<NedbJobStore> {
    await Promise.all([
      db.ensureIndex({ fieldName: 'account_id' }),
      db.ensureIndex({ fieldName: 'status' }),
      // The job list (newest first, in time windows) reads ranges of this.
      db.ensureIndex({ fieldName: 'created_at' }),
      db.ensureIndex({ fieldName: 'completed_at', sparse: true }),
      // GET /v1/files/<name> looks the job up by its image file on every request, unauthenticated.
      db.ensureIndex({ fieldName: 'image_file', sparse: true }),
      // Result-cache lookups (cache_ttl), on jobs whose request asked for one.
      db.ensureIndex({ fieldName: 'cache_key', sparse: true }),
    ]);
    return new NedbJobStore(db);
  }

  async insert(jobs: readonly JobRecord[]): Promise<void> {
    await this.db.insert([...jobs]);
  }

  get(id: string): Promise<JobRecord | null> {
    return this.db.findOne({ _id: id });
  }

  byImage(imageFile: string): Promise<JobRecord | null> {
    return this.db.findOne({ image_file: imageFile });
  }

  async update(id: string, change: JobChange, holder?: string): Promise<boolean> {
    const query = holder === undefined ? { _id: id } : { _id: id, lease_owner: holder };
    return (await this.db.update(query, { $set: change })) > 0;
  }

  claim(node: string, limit: number, now: number, until: number): Promise<JobRecord[]> {
    return this.turns.run('claim', async () => {
      const free = await this.db
        .find({ $or: [{ status: 'pending' }, { status: 'processing', lease_until: { $lt: now } }] })
        .sort({ created_at: 1 })
        .limit(limit);
      const claimed: JobRecord[] = [];
      for (const job of free) {
        const change = { status: 'processing' as const, lease_owner: node, lease_until: until };
        if (await this.update(job._id, change)) claimed.push({ ...job, ...change });
      }
      return claimed;
    });
  }

  async renew(node: string, ids: readonly string[], until: number): Promise<string[]> {
    const held = await this.db.find({ _id: { $in: ids }, lease_owner: node, status: 'processing' });
    if (held.length) await this.db.update({ _id: { $in: held.map((j) => j._id) } }, { $set: { lease_until: until } }, { multi: true });
    return held.map((j) => j._id);
  }

  byCacheKey(cacheKey: string, limit: number): Promise<JobRecord[]> {
    return this.db.find({ cache_key: cacheKey }).sort({ created_at: -1 }).limit(limit);
  }

  /**
   * Read in widening windows of creation time (the last hour, day, week, month, then all),
   * each a range of the created_at index, so a page of the newest jobs costs what the last
   * hours hold rather than a sort of the whole history.
   */
  async list(filter: JobListFilter): Promise<JobRecord[]> {
    const { before } = filter;
    const wanted = (job: JobRecord) =>
      (!filter.status || job.status === filter.status) &&
      (!filter.account_id || job.account_id === filter.account_id) &&
      (!before || job.created_at < before.created_at || (job.created_at === before.created_at && job._id < before.id));
    const upper = before ? before.created_at : Infinity;
    // The windows only make the read cheap; the last one takes everything left, so any anchor gives the same page.
    const end = before ? before.created_at : Date.now();
    for (const span of LIST_WINDOWS) {
      const range: Record<string, number> = {};
      if (Number.isFinite(span)) range.$gte = end - span;
      if (Number.isFinite(upper)) range.$lte = upper;
      const found = (await this.db.find(Object.keys(range).length ? { created_at: range } : {})).filter(wanted);
      if (found.length < filter.limit && Number.isFinite(span)) continue;
      return found.sort(newestFirst).slice(0, filter.limit);
    }
    return [];
  }

  unfinished(): Promise<JobRecord[]> {
    return this.db.find({ status: { $in: UNFINISHED } }).sort({ created_at: 1 });
  }

  count(filter: { account_id?: string; status?: readonly JobStatus[] } = {}): Promise<number> {
    return this.db.count({
      ...(filter.account_id === undefined ? {} : { account_id: filter.account_id }),
      ...(filter.status === undefined ? {} : { status: { $in: filter.status } }),
    });
  }

  endedBefore(cutoff: number, limit: number): Promise<JobRecord[]> {
    return this.db.find({ created_at: { $lt: cutoff }, status: { $in: ENDED } }).limit(limit);
  }

  /** Jobs that ended since `since` (the hourly figures of a data directory from before they were kept). */
  endedSince(since: number): Promise<JobRecord[]> {
    return this.db.find({ completed_at: { $gte: since }, status: { $in: ENDED } });
  }

  toExpire(cutoff: number): Promise<JobRecord[]> {
    return this.db.find({ expired: false, status: { $in: ENDED }, completed_at: { $lt: cutoff } });
  }

  remove(ids: readonly string[]): Promise<number> {
    return this.db.remove({ _id: { $in: ids } }, { multi: true });
  }
}
