import PQueue from 'p-queue';

import type { SettingsService } from '../settings.js';
import { fairTurns } from '../store/fair-turns.js';
import { FairQueue, type QueuedJob } from './fair-queue.js';
import type { JobKind, JobQueue, QueueableJob, QueueStats } from './job-queue.js';

export type { JobKind, QueueableJob, QueueStats } from './job-queue.js';

export interface LocalQueueDeps {
  /** Its `concurrency`: captures at once, followed as it changes. */
  settings: SettingsService;
  /** Runs one job when its turn has come and a slot is free. */
  run: (jobId: string) => Promise<void>;
  /** Told when a run that could not be run failed all the same. */
  onRunError: (jobId: string, err: unknown) => void;
  /** Called each time a slot frees. @default none */
  onSlotFree?: () => void;
}

/** Mean capture time assumed before any capture was measured: a viewport, and a full page. */
const INITIAL_MEAN_MS = 3000;
const INITIAL_FULL_PAGE_MEAN_MS = 6000;

const queuedJob = (job: QueueableJob): QueuedJob => ({
  id: job._id,
  accountId: job.account_id,
  turn: job.turn ?? 0,
  createdAt: job.created_at,
  fullPage: job.full_page,
  delayMs: job.options?.delayMs ?? 0,
});

/**
 * The jobs this node waits on and runs: at most `concurrency` at once, taken in the fair order
 * (round-robin by account), and the estimates of when they will be done from the mean capture
 * time measured here. One node's front door to its queue (JobQueue); ClusterClaims extends it
 * for a node of a cluster.
 */
export class LocalQueue implements JobQueue {
  private readonly queue: PQueue;
  /**
   * The jobs waiting for a slot here, in the fair order, and those running. The p-queue holds
   * one run per waiting job (addRun): when a run gets a slot, it takes whichever job the fair
   * order names then.
   */
  private readonly fair = new FairQueue();
  private readonly listeners = new Set<() => void>();
  /** Mean time of a job, without its delay: viewport captures and full pages apart. */
  private readonly meanMs = { viewport: INITIAL_MEAN_MS, fullPage: INITIAL_FULL_PAGE_MEAN_MS };
  private closed = false;

  constructor(private readonly deps: LocalQueueDeps) {
    this.queue = new PQueue({ concurrency: deps.settings.get().concurrency });
    deps.settings.onChange((s) => {
      this.queue.concurrency = s.concurrency;
    });
    this.queue.on('active', () => this.emit());
    this.queue.on('next', () => {
      this.emit();
      this.slotFreed();
    });
  }

  /** True once close() was called: no job starts any more. */
  isClosed(): boolean {
    return this.closed;
  }

  /** One node: every job waits here. */
  waitsInStore(): boolean {
    return false;
  }

  /** Jobs waiting or running here, and those waiting elsewhere (waitingElsewhere). */
  depth(): number {
    return this.queue.size + this.queue.pending + (this.waitingElsewhere() ?? 0);
  }

  /** Slots no job waits for. */
  free(): number {
    return this.queue.concurrency - this.queue.size - this.queue.pending;
  }

  isPaused(): boolean {
    return this.queue.isPaused;
  }

  stats(): QueueStats {
    return {
      pending: this.queue.size,
      running: this.queue.pending,
      concurrency: this.queue.concurrency,
      limit: this.deps.settings.get().queue_limit,
      paused: this.queue.isPaused,
    };
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Tells the listeners the queue changed. */
  emit(): void {
    for (const listener of this.listeners) listener();
  }

  pause(): void {
    this.queue.pause();
    this.emit();
  }

  resume(): void {
    this.queue.start();
    this.emit();
  }

  /** Queues a stored pending job here; its kind (full page, delay) counts for the estimate. */
  enqueue(job: QueueableJob): void {
    this.push(job);
  }

  /** The turns in the fair order of `count` new jobs of the account (fairTurns), from the jobs waiting and running here. */
  turnsFor(accountId: string, count: number): number[] | undefined {
    return fairTurns(count, this.fair.turnsState(accountId));
  }

  /** Puts the job in the fair order, and one run in the queue. */
  push(job: QueueableJob): void {
    this.fair.push(queuedJob(job));
    this.addRun();
  }

  /** Puts every job in the fair order before the first starts, so the first to start is the first in turn, not the oldest. */
  pushAll(jobs: readonly QueueableJob[]): void {
    for (const job of jobs) this.fair.push(queuedJob(job));
    for (let i = 0; i < jobs.length; i++) this.addRun();
  }

  /** Stops starting jobs and forgets those waiting; running ones go on. */
  close(): void {
    this.closed = true;
    this.queue.pause();
    this.queue.clear();
    this.fair.clear();
  }

  /** Resolves once no job runs. */
  idle(): Promise<void> {
    return this.queue.onPendingZero();
  }

  /** Whether the job waits or runs here. */
  holds(jobId: string): boolean {
    return this.fair.find(jobId) !== undefined;
  }

  /** The account's jobs waiting or running here. */
  accountDepth(accountId: string): number {
    return this.fair.countOf(accountId);
  }

  /** Counts a job's measured time (without its delay) into its kind's mean. */
  measured(fullPage: boolean, ms: number): void {
    const kind = fullPage ? 'fullPage' : 'viewport';
    this.meanMs[kind] = this.meanMs[kind] * 0.8 + ms * 0.2;
  }

  /**
   * Seconds until the last of `count` newly queued jobs of a kind should be done. Given that
   * last job's id (`lastJobId`) while it waits here, the jobs ahead of it are those the fair
   * order takes before it (and those running), each at its own kind's mean plus its delay.
   * Otherwise, in cluster mode (waitingElsewhere: the count waiting in the store) every job
   * waiting or running counts as ahead, the other nodes' at the viewport mean.
   */
  estimateSeconds(count: number, kind: JobKind = { fullPage: false, delayMs: 0 }, lastJobId?: string): number {
    const inStore = this.waitingElsewhere();
    const own = this.costMs(kind);
    const found = lastJobId === undefined ? undefined : this.fair.find(lastJobId);
    if (found?.running) return Math.max(1, Math.ceil(own / 1000));
    if (found) return this.secondsAfter(this.fair.ahead(found.job), own);
    const here = this.fair.all();
    // The new jobs are queued already (in cluster mode, in the store): the ones ahead are the others.
    const ahead = inStore !== undefined ? here : here.slice(0, Math.max(0, here.length - count));
    const elsewhere = inStore !== undefined ? Math.max(0, inStore - count) : 0;
    return this.secondsAfter(ahead, own, elsewhere * this.meanMs.viewport + Math.max(0, count - 1) * own);
  }

  /** Seconds until a new job of a kind is done behind `ahead` jobs counted elsewhere (a cluster's store), each at the viewport mean. */
  estimateBehind(ahead: number, kind: JobKind): number {
    return this.secondsAfter([], this.costMs(kind), ahead * this.meanMs.viewport);
  }

  /**
   * Seconds until enough of the account's jobs have ended that `count` more fit within `max`
   * (its share of the queue): its running jobs end first, then its waiting ones in the fair order.
   */
  accountWaitSeconds(accountId: string, count: number, max: number): number {
    const excess = this.fair.countOf(accountId) + count - max;
    const place = excess - this.fair.runningOf(accountId);
    const waiting = this.fair.waitingOf(accountId);
    if (place <= 0 || waiting.length === 0) return Math.max(1, Math.ceil(this.meanMs.viewport / 1000));
    const job = waiting[Math.min(place, waiting.length) - 1];
    return this.secondsAfter(this.fair.ahead(job), this.costMs(job));
  }

  /** Jobs waiting for this node outside it: none for one node (a cluster's store: ClusterClaims). */
  protected waitingElsewhere(): number | undefined {
    return undefined;
  }

  /** Called each time a slot frees. */
  protected slotFreed(): void {
    this.deps.onSlotFree?.();
  }

  private costMs(job: JobKind): number {
    return (job.fullPage ? this.meanMs.fullPage : this.meanMs.viewport) + job.delayMs;
  }

  /** Seconds until a job of `ownMs` is done after `ahead` (and `moreMs` of other work) shared among the slots. */
  private secondsAfter(ahead: readonly QueuedJob[], ownMs: number, moreMs = 0): number {
    const aheadMs = ahead.reduce((sum, job) => sum + this.costMs(job), moreMs);
    return Math.max(1, Math.ceil((aheadMs / this.queue.concurrency + ownMs) / 1000));
  }

  /** Adds one run to the queue: when it gets a slot, it runs whichever job the fair order names then. */
  private addRun(): void {
    const runNext = async () => {
      const next = this.fair.take();
      if (!next) return;
      try {
        await this.deps.run(next.id);
      } catch (err) {
        this.deps.onRunError(next.id, err);
      } finally {
        this.fair.done(next);
      }
    };
    void this.queue.add(runNext);
  }
}
