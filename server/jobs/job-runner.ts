import type { Logger } from '../logger.js';
import type { JobChange } from '../store/stores.js';
import { ClusterClaims,type ClusterRunOptions } from './cluster-claims.js';
import type { JobQueue } from './job-queue.js';
import { type JobRunContext, type JobRunDeps, runJob, ShutdownAbort } from './job-run.js';
import { LocalQueue } from './local-queue.js';

export type { ClusterRunOptions } from './cluster-claims.js';
export type { UrlGuard } from './job-run.js';

export interface JobRunnerDeps extends JobRunDeps {
  /** Cluster mode: the store is shared with other nodes, which take jobs by claiming them. @default none (one node) */
  cluster?: ClusterRunOptions;
}

/**
 * Runs queued jobs: at most `concurrency` captures at once in the fair order (its `queue`), each
 * job's run (runJob), recovery of unfinished jobs after a restart, and shutdown that re-queues.
 * In cluster mode jobs wait in the shared store and this node claims its share (ClusterClaims).
 */
export class JobRunner {
  /** The front door to the queue this runner takes its jobs from: LocalQueue, or ClusterClaims in cluster mode. */
  readonly queue: JobQueue;
  /** The same queue, with what only the runner does to it: recovered jobs, closing, idling, measured times. */
  private readonly local: LocalQueue;
  private readonly claims: ClusterClaims | undefined;
  private readonly running = new Map<string, AbortController>();
  private readonly log: Logger;
  private readonly runContext: JobRunContext;

  constructor(private readonly deps: JobRunnerDeps) {
    this.log = deps.log.child({ component: 'jobs' });
    const update = (jobId: string, change: JobChange) => this.update(jobId, change);
    const queueDeps = {
      settings: deps.settings,
      run: (jobId: string) => runJob(this.runContext, jobId),
      onRunError: (jobId: string, err: unknown) => this.log.error({ job_id: jobId, err }, 'running the job failed'),
    };
    this.claims =
      deps.cluster && new ClusterClaims({ ...queueDeps, cluster: deps.cluster, store: deps.store, clock: deps.clock, log: this.log, running: this.running, update });
    this.local = this.claims ?? new LocalQueue(queueDeps);
    this.queue = this.local;
    this.runContext = {
      deps,
      log: this.log,
      node: deps.cluster?.node,
      running: this.running,
      isStopping: () => this.local.isClosed(),
      update,
      forgetClaim: (jobId) => this.claims?.forget(jobId),
      measured: (fullPage, ms) => this.local.measured(fullPage, ms),
      emit: () => this.local.emit(),
    };
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
    this.local.pushAll(unfinished);
    if (unfinished.length) this.log.info(`re-queued ${unfinished.length} unfinished job(s) from the previous run`);
    return unfinished.length;
  }

  /**
   * Stops taking jobs, gives running captures `graceMs` to finish, then aborts the rest;
   * aborted and waiting jobs stay pending in the store and run again at the next start (or, in
   * cluster mode, on another node at once).
   */
  async stop(graceMs: number): Promise<void> {
    this.local.close();
    await this.claims?.handBack();
    const idle = this.local.idle();
    const timer = new Promise((resolve) => setTimeout(resolve, graceMs).unref());
    await Promise.race([idle, timer]);
    for (const controller of this.running.values()) controller.abort(new ShutdownAbort('shutting down'));
    await Promise.race([this.local.idle(), new Promise((resolve) => setTimeout(resolve, 5000).unref())]);
    const unsaved = await this.deps.ends.stop();
    if (unsaved) this.log.warn(`${unsaved} job end(s) could not be stored (disk full?); those jobs run again at the next start`);
  }

  /** Sets fields of a job; in cluster mode only while this node holds its lease (false once lost). */
  private update(jobId: string, change: JobChange): Promise<boolean> {
    return this.deps.store.update(jobId, change, this.deps.cluster?.node);
  }
}
