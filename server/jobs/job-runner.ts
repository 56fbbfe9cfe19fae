import type { Logger } from '../logger.js';
import { fairTurns } from '../store/fair-turns.js';
import type { JobChange } from '../store/stores.js';
import { ClusterClaims,type ClusterRunOptions } from './cluster-claims.js';
import { type JobRunContext, type JobRunDeps, runJob, ShutdownAbort } from './job-run.js';
import { type JobKind, LocalQueue, type QueueableJob, type QueueStats } from './local-queue.js';

export type { ClusterRunOptions } from './cluster-claims.js';
export type { UrlGuard } from './job-run.js';
export type { QueueStats } from './local-queue.js';

export interface JobRunnerDeps extends JobRunDeps {
  /** Cluster mode: the store is shared with other nodes, which take jobs by claiming them. @default none (one node) */
  cluster?: ClusterRunOptions;
}

/**
 * Runs queued jobs: at most `concurrency` captures at once in the fair order (LocalQueue), each
 * job's run (runJob), recovery of unfinished jobs after a restart, and shutdown that re-queues.
 * In cluster mode jobs wait in the shared store and this node claims its share (ClusterClaims).
 */
export class JobRunner {
  private readonly queue: LocalQueue;
  private readonly claims: ClusterClaims | undefined;
  private readonly running = new Map<string, AbortController>();
  private readonly log: Logger;
  private readonly runContext: JobRunContext;
  private stopping = false;

  constructor(private readonly deps: JobRunnerDeps) {
    this.log = deps.log.child({ component: 'jobs' });
    this.queue = new LocalQueue({
      settings: deps.settings,
      run: (jobId) => runJob(this.runContext, jobId),
      onRunError: (jobId, err) => this.log.error({ job_id: jobId, err }, 'running the job failed'),
      onSlotFree: () => this.claims?.poke(),
    });
    const update = (jobId: string, change: JobChange) => this.update(jobId, change);
    const isStopping = () => this.stopping;
    this.claims =
      deps.cluster &&
      new ClusterClaims({ cluster: deps.cluster, store: deps.store, clock: deps.clock, log: this.log, queue: this.queue, running: this.running, isStopping, update });
    this.runContext = {
      deps,
      log: this.log,
      node: deps.cluster?.node,
      running: this.running,
      isStopping,
      update,
      forgetClaim: (jobId) => this.claims?.forget(jobId),
      measured: (fullPage, ms) => this.queue.measured(fullPage, ms),
      emit: () => this.queue.emit(),
    };
  }

  /** Jobs waiting or running (in cluster mode: waiting anywhere, and running here). */
  depth(): number {
    return this.queue.depth() + (this.claims?.waitingInStore() ?? 0);
  }

  /** Cluster mode: jobs wait in the store the nodes share, and each node runs those it claims. */
  waitsInStore(): boolean {
    return this.claims !== undefined;
  }

  /** True once stop() was called: no job starts any more. */
  isStopping(): boolean {
    return this.stopping;
  }

  stats(): QueueStats {
    return this.queue.stats();
  }

  onChange(listener: () => void): () => void {
    return this.queue.onChange(listener);
  }

  pause(): void {
    this.queue.pause();
  }

  resume(): void {
    this.queue.resume();
  }

  /**
   * The turns in the fair order of `count` new jobs of the account (fairTurns), from the jobs
   * waiting and running here; undefined in cluster mode, where the store gives them.
   */
  turnsFor(accountId: string, count: number): number[] | undefined {
    return this.claims ? undefined : fairTurns(count, this.queue.turnsState(accountId));
  }

  /** The account's jobs waiting or running on this node (one node: all of them). */
  accountDepth(accountId: string): number {
    return this.queue.accountDepth(accountId);
  }

  /**
   * Seconds until the last of `count` newly queued jobs of a kind (full page or not, with its
   * delay) should be done (LocalQueue.estimateSeconds); in cluster mode every job waiting in the
   * store counts as ahead.
   */
  estimateSeconds(count: number, kind: JobKind = { fullPage: false, delayMs: 0 }, lastJobId?: string): number {
    return this.queue.estimateSeconds(count, kind, lastJobId, this.claims?.waitingInStore());
  }

  /** Seconds until a new job of a kind is done behind `ahead` jobs counted elsewhere (a cluster's store), each at the viewport mean. */
  estimateBehind(ahead: number, kind: JobKind): number {
    return this.queue.estimateBehind(ahead, kind);
  }

  /** Whether the job waits or runs here. */
  holds(jobId: string): boolean {
    return this.queue.holds(jobId);
  }

  /**
   * Seconds until enough of the account's jobs have ended that `count` more fit within `max`
   * (its share of the queue): its running jobs end first, then its waiting ones in the fair order.
   */
  accountWaitSeconds(accountId: string, count: number, max: number): number {
    return this.queue.accountWaitSeconds(accountId, count, max);
  }

  /**
   * Queues a stored pending job; its kind (full page, delay) counts for the estimate. In cluster
   * mode it waits in the store for a node to claim it.
   */
  enqueue(job: QueueableJob): void {
    if (this.claims) this.claims.queued();
    else this.queue.push(job);
  }

  /**
   * Re-queues every job a previous run left pending or processing, in their turns. In cluster
   * mode the node starts claiming instead: waiting jobs, and those whose node's lease ran out.
   * A job left processing was under way when the process or node stopped (its run counted a
   * start); one already run again MAX_RUNS_AFTER_A_STOP times after such stops fails when its
   * turn comes instead of running (runJob).
   */
  async recover(): Promise<number> {
    if (this.claims) {
      this.claims.start();
      return 0;
    }
    const unfinished = await this.deps.store.unfinished();
    for (const job of unfinished) {
      if (job.status === 'processing') {
        // On a full disk the job stays `processing` on file; runJob takes it all the same.
        await this.update(job._id, { status: 'pending', progress: 0 }).catch((err: unknown) =>
          this.log.warn({ job_id: job._id, err }, 'could not set it back to pending'),
        );
      }
    }
    this.queue.pushAll(unfinished);
    if (unfinished.length) this.log.info(`re-queued ${unfinished.length} unfinished job(s) from the previous run`);
    return unfinished.length;
  }

  /**
   * Stops taking jobs, gives running captures `graceMs` to finish, then aborts the rest;
   * aborted and waiting jobs stay pending in the store and run again at the next start (or, in
   * cluster mode, on another node at once).
   */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    this.claims?.stopTimers();
    this.queue.close();
    await this.claims?.handBack();
    const idle = this.queue.idle();
    const timer = new Promise((resolve) => setTimeout(resolve, graceMs).unref());
    await Promise.race([idle, timer]);
    for (const controller of this.running.values()) controller.abort(new ShutdownAbort('shutting down'));
    await Promise.race([this.queue.idle(), new Promise((resolve) => setTimeout(resolve, 5000).unref())]);
    const unsaved = await this.deps.ends.stop();
    if (unsaved) this.log.warn(`${unsaved} job end(s) could not be stored (disk full?); those jobs run again at the next start`);
  }

  /** Sets fields of a job; in cluster mode only while this node holds its lease (false once lost). */
  private update(jobId: string, change: JobChange): Promise<boolean> {
    return this.deps.store.update(jobId, change, this.deps.cluster?.node);
  }
}
