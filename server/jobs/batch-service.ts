import crypto from 'node:crypto';

import type { SecretBox } from '../crypto/secret-box.js';
import { AccountShareFullError, NotFoundError, QueueFullError, ShuttingDownError } from '../domain-errors.js';
import type { Logger } from '../logger.js';
import { SerialByKey } from '../serial-by-key.js';
import type { BatchRecord } from '../store/records/batch-record.js';
import { hasEnded, type JobRecord } from '../store/records/job-record.js';
import type { BatchStore } from '../store/stores.js';
import type { Clock } from '../time.js';
import type { CreateParams } from './create-params.js';
import type { JobQueue } from './job-queue.js';
import type { JobService } from './job-service.js';

/** Charges the account for a batch's `count` items around its creation (QuotaService.chargeFor). */
export type BatchCharge = (count: number, create: () => Promise<BatchRecord>) => Promise<BatchRecord>;

/** Told once a batch has ended (completed or cancelled), as stored: the batch.completed webhook. */
export type BatchEnded = (batch: BatchRecord) => void;

export interface BatchServiceDeps {
  store: BatchStore;
  jobs: JobService;
  queue: JobQueue;
  /** Seals a batch's items (their secrets with them) until it ends. */
  secrets: SecretBox;
  clock: Clock;
  log: Logger;
  /** Called once per batch when it ends. @default nothing */
  onEnded?: BatchEnded;
  /**
   * How often the running batches are fed again whatever happens, ms: after a store that failed,
   * or (in a cluster) room left by jobs that ended on other nodes. @default 5000
   */
  feedEveryMs?: number;
}

/** A batch's jobs waiting or running at once: per slot of the queue, so a batch alone keeps every slot busy. */
const JOBS_PER_SLOT = 2;

const newBatchId = () => `batch_${crypto.randomBytes(12).toString('hex')}`;

/** A batch's counts by state, what it has left, and the page of its jobs asked for. */
export interface BatchView {
  batch: BatchRecord;
  counts: { pending: number; processing: number; completed: number; failed: number };
  /** Its jobs on the page, by index. */
  jobs: Array<{ index: number; job: JobRecord }>;
  /** Whether a page follows. */
  more: boolean;
}

/**
 * Batches (POST /v1/batches): admitted whole, charged whole to the limits, then fed into the
 * queue a few jobs at a time (JOBS_PER_SLOT per capture slot) as its jobs end. So a batch of a
 * thousand never holds more than a handful of places in the queue: its account's share stays
 * free for its other requests, and the fair order (round-robin by account) puts another account's
 * job ahead of all but one of the batch's.
 */
export class BatchService {
  /** One batch's feeds and counts take turns. */
  private readonly turns = new SerialByKey();
  /** Feeds and counts under way, which a stop waits for before the stores close. */
  private readonly inFlight = new Set<Promise<unknown>>();
  /** The items of the batches running here, opened once. */
  private readonly items = new Map<string, CreateParams[]>();
  /** Batches to feed whenever room opens in the queue. */
  private readonly running = new Set<string>();
  private ticker: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly deps: BatchServiceDeps) {}

  /** Stores a batch of these items, charged through `charge`, and starts feeding it. */
  async create(accountId: string, keyId: string, items: CreateParams[], options: { callback_url: string | null; base_url: string }, charge: BatchCharge): Promise<BatchRecord> {
    if (this.deps.queue.isClosed()) throw new ShuttingDownError();
    const batch: BatchRecord = {
      _id: newBatchId(),
      account_id: accountId,
      key_id: keyId,
      status: 'running',
      total: items.length,
      jobs: [],
      completed: 0,
      failed: 0,
      callback_url: options.callback_url,
      base_url: options.base_url,
      created_at: this.deps.clock.now(),
      ended_at: null,
    };
    const stored = await charge(items.length, async () => {
      await this.deps.store.insert(batch, this.deps.secrets.seal(items));
      return batch;
    });
    this.items.set(batch._id, items);
    this.running.add(batch._id);
    await this.feed(batch._id);
    return (await this.deps.store.get(batch._id)) ?? stored;
  }

  /** A batch of this account, or NotFoundError, also for another account's batch, so ids reveal nothing. */
  async getOwned(accountId: string, batchId: string): Promise<BatchRecord> {
    const batch = await this.get(batchId);
    if (batch.account_id !== accountId) throw new NotFoundError('batch', batchId);
    return batch;
  }

  /** Any account's batch (the admin), or NotFoundError. */
  async get(batchId: string): Promise<BatchRecord> {
    const batch = typeof batchId === 'string' && batchId.length <= 64 ? await this.deps.store.get(batchId) : null;
    if (!batch) throw new NotFoundError('batch', batchId);
    return batch;
  }

  /** The newest batches of every account, newest first (the control panel). */
  recent(limit: number): Promise<BatchRecord[]> {
    return this.deps.store.recent(limit);
  }

  /** The batch's counts and one page of its jobs (`page` from 1). */
  async view(batch: BatchRecord, page: number, perPage: number): Promise<BatchView> {
    const first = (page - 1) * perPage;
    const ids = batch.jobs.slice(first, first + perPage);
    const found = await Promise.all(ids.map((id) => this.deps.jobs.find(id)));
    const jobs = found.flatMap((job, i) => (job ? [{ index: first + i, job }] : []));
    // The jobs not yet ended are the few fed last but for a slow one: read from the end until all are found.
    let unended = batch.jobs.length - batch.completed - batch.failed;
    let processing = 0;
    for (let i = batch.jobs.length - 1; i >= 0 && unended > 0; i--) {
      const job = await this.deps.jobs.find(batch.jobs[i]);
      if (!job || hasEnded(job.status)) continue;
      unended--;
      if (job.status === 'processing') processing++;
    }
    const pending = batch.total - batch.completed - batch.failed - processing;
    return { batch, counts: { pending, processing, completed: batch.completed, failed: batch.failed }, jobs, more: first + perPage < batch.jobs.length };
  }

  /** Seconds until the batch's last item should have ended: behind the queue, its items not fed yet. */
  estimateSecondsLeft(batch: BatchRecord): number {
    if (batch.status !== 'running') return 0;
    const unfed = batch.total - batch.jobs.length;
    return this.deps.queue.estimateBehind(Math.max(0, this.deps.queue.depth() + unfed - 1), { fullPage: false, delayMs: 0 });
  }

  /**
   * Stops feeding the batch: its items not yet in the queue never run. The few already handed to
   * the queue run to their end. Cancelling an ended batch changes nothing.
   */
  async cancel(accountId: string, batchId: string): Promise<BatchRecord> {
    const batch = await this.getOwned(accountId, batchId);
    if (batch.status !== 'running') return batch;
    return this.inTurn(batchId, async () => {
      const ended = await this.deps.store.end(batchId, 'cancelled', this.deps.clock.now());
      this.forget(batchId);
      if (ended) this.deps.onEnded?.(ended);
      return ended ?? (await this.getOwned(accountId, batchId));
    });
  }

  /** Called once a job's end is stored: counts a batch's job, ends its batch after the last, and fills the room it left. */
  jobEnded(job: JobRecord): void {
    if (job.batch_index !== undefined && hasEnded(job.status)) {
      const id = job.batch_id;
      this
        .inTurn(id, async () => {
          const batch = await this.deps.store.countEnd(id, job.status as 'completed' | 'failed');
          if (batch) await this.endIfDone(batch);
        })
        .catch((err: unknown) => this.deps.log.error({ component: 'batches', batch_id: id, err }, "could not count a batch's job"));
    }
    this.feedAll();
  }

  /** At a start: feeds again the batches a stop left running, then every `feedEveryMs`; how many there were. */
  async start(): Promise<number> {
    const batches = await this.deps.store.running();
    for (const batch of batches) this.running.add(batch._id);
    for (const batch of batches) await this.endIfDone(batch);
    this.feedAll();
    this.ticker = setInterval(() => this.feedAll(), this.deps.feedEveryMs ?? 5000);
    this.ticker.unref();
    return batches.length;
  }

  /** Stops feeding (before the job runner stops). */
  stop(): void {
    this.stopped = true;
    clearInterval(this.ticker);
  }

  /** Waits for the counts of the jobs that ended while the runner stopped (after it, before the stores close). */
  async drain(): Promise<void> {
    while (this.inFlight.size) await Promise.allSettled([...this.inFlight]);
  }

  /** Runs `task` in the batch's turn, counted as under way until it settles. */
  private inTurn<T>(batchId: string, task: () => Promise<T>): Promise<T> {
    const run = this.turns.run(batchId, task);
    this.inFlight.add(run);
    const settled = () => void this.inFlight.delete(run);
    run.then(settled, settled);
    return run;
  }

  private async endIfDone(batch: BatchRecord): Promise<void> {
    if (batch.status !== 'running' || batch.completed + batch.failed < batch.total) return;
    const ended = await this.deps.store.end(batch._id, 'completed', this.deps.clock.now());
    this.forget(batch._id);
    if (ended) this.deps.onEnded?.(ended);
  }

  private forget(batchId: string): void {
    this.running.delete(batchId);
    this.items.delete(batchId);
  }

  private feedAll(): void {
    for (const id of this.running) void this.feed(id);
  }

  /**
   * Hands the batch's next items to the queue while it has fewer than its share of jobs there and
   * the queue has room; a full queue is fed again when a job ends, a store that failed a moment later.
   */
  private feed(batchId: string): Promise<void> {
    return this
      .inTurn(batchId, async () => {
        if (this.stopped) return;
        const batch = await this.deps.store.get(batchId);
        if (!batch || batch.status !== 'running') return this.forget(batchId);
        const window = Math.max(1, this.deps.queue.stats().concurrency) * JOBS_PER_SLOT;
        let next = batch.jobs.length;
        const room = Math.min(window - (next - batch.completed - batch.failed), batch.total - next);
        if (room <= 0) return;
        const items = await this.itemsOf(batch);
        if (!items) return this.endWithoutItems(batch);
        for (let n = 0; n < room; n++, next++) {
          let release: () => void;
          try {
            release = this.deps.jobs.holdCapacity(1, batch.account_id);
          } catch (err) {
            if (err instanceof QueueFullError || err instanceof AccountShareFullError || err instanceof ShuttingDownError) return;
            throw err;
          }
          try {
            const [job] = await this.deps.jobs.create(batch.account_id, batch.key_id, items[next], batch.base_url, undefined, { id: batchId, index: next });
            await this.deps.store.addJobs(batchId, [job._id]);
          } catch (err) {
            if (err instanceof AccountShareFullError) return;
            throw err;
          } finally {
            release();
          }
        }
      })
      .catch((err: unknown) => this.deps.log.error({ component: 'batches', batch_id: batchId, err }, 'could not feed a batch; trying again shortly'));
  }

  /** The batch's items, opened once; null when they are not kept (a data directory restored from a backup). */
  private async itemsOf(batch: BatchRecord): Promise<CreateParams[] | null> {
    let items = this.items.get(batch._id);
    if (!items) {
      const sealed = await this.deps.store.items(batch._id);
      if (sealed === null) return null;
      items = this.deps.secrets.open<CreateParams[]>(sealed);
      this.items.set(batch._id, items);
    }
    return items;
  }

  /** A running batch whose items are not kept cannot be fed on: it is cancelled, saying why. */
  private async endWithoutItems(batch: BatchRecord): Promise<void> {
    this.deps.log.warn({ component: 'batches', batch_id: batch._id }, 'the items of a running batch are not kept (a backup holds no secret): the batch is cancelled');
    const ended = await this.deps.store.end(batch._id, 'cancelled', this.deps.clock.now());
    this.forget(batch._id);
    if (ended) this.deps.onEnded?.(ended);
  }
}
