import { SerialByKey } from '../../serial-by-key.js';
import { HOUR_MS } from '../../time.js';
import { fairTurns } from '../fair-turns.js';
import { type JobRecord, type JobStatus, UNFINISHED_STATUSES } from '../records/job-record.js';
import type { JobChange, JobListFilter, JobStore } from '../stores.js';
import { indexedFields } from './datafile-guard.js';
import type { NedbFile } from './nedb-file.js';

/** The job list reads back in time an hour, then spans twice as long as the last, up to this; then all that is left. */
const LIST_LONGEST_SPAN = 2 ** 17 * HOUR_MS;
/**
 * Indexes earlier versions kept, dropped from the file at open: no query reads them (the status
 * index answers the queries that also name completed_at, and nothing asks by account alone but
 * counts in tests), and one holding every job of an account under one key makes each change of
 * that account's jobs cost a pass over all of them.
 */
const RETIRED_INDEXES = ['account_id', 'completed_at'];

/** jobs.db: every job, held in memory by NeDB, with the indexes its reads need. */
export class NedbJobStore implements JobStore {
  /** Claims take turns, so two claims in this process never hand out one job twice. */
  private readonly turns = new SerialByKey();

  private constructor(private readonly db: NedbFile<JobRecord>) {}

  static async open(db: NedbFile<JobRecord>): Promise<NedbJobStore> {
    for (const field of indexedFields(db)) if (RETIRED_INDEXES.includes(field)) await db.removeIndex(field);
    await Promise.all([
      // Unfinished jobs at start, and the ended ones the sweeps read.
      db.ensureIndex({ fieldName: 'status' }),
      // The job list (newest first, in spans of time) reads ranges of this.
      db.ensureIndex({ fieldName: 'created_at' }),
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

  /**
   * Enqueues take turns with each other (one process owns the file), so the count each reads is
   * current. A cluster's nodes enqueue through the store; one node alone gives the turns from the
   * queue it holds (JobRunner.turnsFor) and inserts.
   */
  enqueue(jobs: readonly JobRecord[], max: number): Promise<JobRecord[] | null> {
    return this.turns.run('enqueue', async () => {
      const queue = await this.db.find({ status: { $in: UNFINISHED_STATUSES } });
      const accountId = jobs[0]?.account_id;
      const own = queue.filter((job) => job.account_id === accountId);
      if (own.length + jobs.length > max) return null;
      const turnsOf = (list: JobRecord[]) => list.map((job) => job.turn ?? 0);
      const running = turnsOf(queue.filter((job) => job.status === 'processing'));
      const waiting = turnsOf(queue.filter((job) => job.status === 'pending'));
      const turns = fairTurns(jobs.length, {
        accountLast: own.length ? Math.max(...turnsOf(own)) : null,
        runningMax: running.length ? Math.max(...running) : null,
        waitingMin: waiting.length ? Math.min(...waiting) : null,
      });
      const queued = jobs.map((job, i) => ({ ...job, turn: turns[i] }));
      await this.insert(queued);
      return queued;
    });
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
      const free = (await this.db.find({ $or: [{ status: 'pending' }, { status: 'processing', lease_until: { $lt: now } }] }))
        .sort((a, b) => (a.turn ?? 0) - (b.turn ?? 0) || a.created_at - b.created_at || (a._id < b._id ? -1 : 1))
        .slice(0, limit)
        .sort((a, b) => a.created_at - b.created_at || (a._id < b._id ? -1 : 1));
      const claimed: JobRecord[] = [];
      for (const job of free) {
        const change = { status: 'processing' as const, lease_owner: node, lease_until: until };
        if (await this.update(job._id, change)) claimed.push({ ...job, ...change });
      }
      return claimed;
    });
  }

  async countAhead(job: Pick<JobRecord, '_id' | 'turn' | 'created_at'>): Promise<number> {
    const turn = job.turn ?? 0;
    const queue = await this.db.find({ status: { $in: UNFINISHED_STATUSES } });
    return queue.filter((other) => {
      if (other.status === 'processing') return true;
      const t = other.turn ?? 0;
      return t < turn || (t === turn && (other.created_at < job.created_at || (other.created_at === job.created_at && other._id < job._id)));
    }).length;
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
   * Read back in time in spans of creation time (the last hour, the hour before, the two hours
   * before those, and so on, each twice as long), each a range of the created_at index sorted and
   * cut to what the page still needs, until the page is full: a page costs about what the newest
   * jobs that fill it are, however long the history behind them.
   */
  async list(filter: JobListFilter): Promise<JobRecord[]> {
    const { before } = filter;
    const wanted = (job: JobRecord) =>
      (!filter.status || job.status === filter.status) &&
      (!filter.account_id || job.account_id === filter.account_id) &&
      (!before || job.created_at < before.created_at || (job.created_at === before.created_at && job._id < before.id));
    // The spans only make the read cheap; the last one takes everything left, so any anchor gives the same page.
    const end = before ? before.created_at : Date.now();
    const page: JobRecord[] = [];
    // The first span reaches up to the cursor's own time (ties go by id), or with none, to jobs ahead of the clock.
    let upper: Record<string, number> = before ? { $lte: before.created_at } : {};
    const where = function (this: JobRecord) {
      return wanted(this);
    };
    for (let span = HOUR_MS; page.length < filter.limit; span *= 2) {
      const lower = span > LIST_LONGEST_SPAN ? undefined : end - span;
      const range = lower === undefined ? upper : { ...upper, $gte: lower };
      const query = Object.keys(range).length ? { created_at: range, $where: where } : { $where: where };
      page.push(...(await this.db.find(query).sort({ created_at: -1, _id: -1 }).limit(filter.limit - page.length)));
      if (lower === undefined) break;
      upper = { $lt: lower };
    }
    return page;
  }

  unfinished(): Promise<JobRecord[]> {
    return this.db.find({ status: { $in: UNFINISHED_STATUSES } }).sort({ created_at: 1 });
  }

  count(filter: { account_id?: string; status?: readonly JobStatus[] } = {}): Promise<number> {
    return this.db.count({
      ...(filter.account_id === undefined ? {} : { account_id: filter.account_id }),
      ...(filter.status === undefined ? {} : { status: { $in: filter.status } }),
    });
  }

  // "Not unfinished" rather than "$in ended": NeDB reads an $in of an indexed field as the union
  // of its keys, every ended job, where the created_at range names the few before the cutoff.
  endedBefore(cutoff: number, limit: number): Promise<JobRecord[]> {
    return this.db.find({ created_at: { $lt: cutoff }, status: { $nin: UNFINISHED_STATUSES } }).limit(limit);
  }

  /** Jobs that ended since `since` (the hourly figures of a data directory from before they were kept). */
  endedSince(since: number): Promise<JobRecord[]> {
    return this.db.find({ completed_at: { $gte: since }, status: { $nin: UNFINISHED_STATUSES } });
  }

  toExpire(cutoff: number): Promise<JobRecord[]> {
    return this.db.find({ expired: false, status: { $nin: UNFINISHED_STATUSES }, completed_at: { $lt: cutoff } });
  }

  remove(ids: readonly string[]): Promise<number> {
    return this.db.remove({ _id: { $in: ids } }, { multi: true });
  }

  webhookDue(cutoff: number, limit: number): Promise<JobRecord[]> {
    return this.db.find({ webhook_due: true, completed_at: { $lt: cutoff } }).sort({ completed_at: 1 }).limit(limit);
  }
}
