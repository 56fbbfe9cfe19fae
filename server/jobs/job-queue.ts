import type { JobRecord } from '../store/records/job-record.js';

/** The queue as the admin API, the metrics and the tray show it. */
export interface QueueStats {
  pending: number;
  running: number;
  concurrency: number;
  limit: number;
  paused: boolean;
}

/** What the queue needs of a job to queue it. */
export type QueueableJob = Pick<JobRecord, '_id' | 'account_id' | 'turn' | 'created_at' | 'full_page' | 'options'>;

/** The kind of a job, as the estimates weigh it: full page or not, and its delay. */
export interface JobKind {
  fullPage: boolean;
  delayMs: number;
}


/**
 * The one front door to the queue, for the JobService, the routes, the metrics and the desktop
 * tray: what waits and runs, its pause, its estimates, the turns of new jobs and their queueing.
 * One node: LocalQueue. A node of a cluster: ClusterClaims, whose jobs wait in the shared store.
 */
export interface JobQueue {
  /** True once the runner stopped the queue: no job starts any more. */
  isClosed(): boolean;
  /** Cluster mode: jobs wait in the store the nodes share, and each node runs those it claims. */
  waitsInStore(): boolean;
  /** Jobs waiting or running (in cluster mode: waiting anywhere, and running here). */
  depth(): number;
  /** The account's jobs waiting or running on this node (one node: all of them). */
  accountDepth(accountId: string): number;
  /** Whether the job waits or runs here. */
  holds(jobId: string): boolean;
  /** What waits, what runs, the limit, and whether it is paused. */
  stats(): QueueStats;
  /** Calls `listener` each time a job starts or ends, or the queue is paused or resumed; returns the unsubscribe. */
  onChange(listener: () => void): () => void;
  pause(): void;
  resume(): void;
  /**
   * Seconds until the last of `count` newly queued jobs of a kind should be done; given that
   * last job's id, from its place in the fair order. @default kind a viewport without delay
   */
  estimateSeconds(count: number, kind?: JobKind, lastJobId?: string): number;
  /** Seconds until a new job of a kind is done behind `ahead` jobs counted elsewhere (a cluster's store). */
  estimateBehind(ahead: number, kind: JobKind): number;
  /** Seconds until enough of the account's jobs have ended that `count` more fit within `max` (its share). */
  accountWaitSeconds(accountId: string, count: number, max: number): number;
  /** The turns in the fair order of `count` new jobs of the account; undefined in cluster mode, where the store gives them. */
  turnsFor(accountId: string, count: number): number[] | undefined;
  /** Queues a stored pending job (in cluster mode: it waits in the store for a node to claim it). */
  enqueue(job: QueueableJob): void;
}
