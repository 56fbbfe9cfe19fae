import type { Logger } from '../logger.js';
import type { JobChange, JobStore } from '../store/stores.js';
import type { Clock } from '../time.js';
import { LeaseLost } from './job-run.js';
import type { LocalQueue } from './local-queue.js';

/** How a node of a cluster takes its share of the jobs. */
export interface ClusterRunOptions {
  /** This node's name in job leases; a new one at every start, so a restarted node's old leases simply run out. */
  node: string;
  /** How long a claim holds without renewal: a dead node's jobs run again elsewhere after this. @default 30000 */
  leaseMs: number;
  /** How often the node looks for work it was not told about (jobs posted to other nodes, leases run out). @default 1000 */
  pollMs: number;
}

export interface ClusterClaimsDeps {
  cluster: ClusterRunOptions;
  store: JobStore;
  clock: Clock;
  log: Logger;
  /** Where claimed jobs wait for a slot on this node. */
  queue: LocalQueue;
  /** The jobs running on this node, each with the controller that stops it. */
  running: ReadonlyMap<string, AbortController>;
  /** True once the node stops: it claims nothing more. */
  isStopping: () => boolean;
  /** Sets fields of a job while this node holds its lease (false once lost). */
  update: (jobId: string, change: JobChange) => Promise<boolean>;
}

/**
 * Cluster mode: jobs wait in the store the nodes share, and this node claims as many as it has
 * free slots, holds them by a lease it renews, and hands back at shutdown those it never started.
 */
export class ClusterClaims {
  /** Jobs this node claimed (waiting in its queue or running). */
  private readonly claimed = new Set<string>();
  /** Jobs waiting in the shared store, as last counted. */
  private sharedPending = 0;
  private claiming: Promise<void> | undefined;
  private claimAgain = false;
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(private readonly deps: ClusterClaimsDeps) {}

  /** Jobs waiting in the shared store, as last counted. */
  waitingInStore(): number {
    return this.sharedPending;
  }

  /** A job was stored to wait: counted at once, and claimed by whichever node has a slot. */
  queued(): void {
    this.sharedPending++;
    this.poke();
  }

  /** Looks for work now and every pollMs, and renews the leases of running jobs. */
  start(): void {
    const cluster = this.deps.cluster;
    this.poke();
    this.timers.push(setInterval(() => this.poke(), cluster.pollMs));
    this.timers.push(setInterval(() => void this.renewLeases(), Math.max(250, cluster.leaseMs / 3)));
    for (const timer of this.timers) timer.unref();
  }

  /** Stops looking for work and renewing leases. */
  stopTimers(): void {
    for (const timer of this.timers) clearInterval(timer);
  }

  /** The job is no longer this node's to hold (it ended, or was not run). */
  forget(jobId: string): void {
    this.claimed.delete(jobId);
  }

  /** Claims as many jobs as there are free slots (one round at a time; a poke during a round runs another). */
  poke(): void {
    if (this.deps.isStopping()) return;
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    this.claiming = this.claimRound()
      .catch((err: unknown) => this.deps.log.warn({ err }, 'could not claim jobs from the store'))
      .finally(() => {
        this.claiming = undefined;
        if (this.claimAgain) {
          this.claimAgain = false;
          this.poke();
        }
      });
  }

  /** At shutdown, once the round under way is over: claimed jobs that never started go back to waiting, for other nodes. */
  async handBack(): Promise<void> {
    await this.claiming;
    for (const id of this.claimed) {
      if (this.deps.running.has(id)) continue;
      await this.deps.update(id, { status: 'pending', progress: 0, lease_owner: null, lease_until: null }).catch((err: unknown) =>
        this.deps.log.warn({ job_id: id, err }, 'could not hand it back'),
      );
      this.claimed.delete(id);
    }
  }

  private async claimRound(): Promise<void> {
    const { cluster, queue, store } = this.deps;
    const free = queue.free();
    if (free > 0 && !queue.isPaused() && !this.deps.isStopping()) {
      const now = this.deps.clock.now();
      for (const job of await store.claim(cluster.node, free, now, now + cluster.leaseMs)) {
        this.claimed.add(job._id);
        queue.push(job);
      }
    }
    this.sharedPending = await store.count({ status: ['pending'] });
  }

  /** Extends the leases of claimed jobs; a job whose lease was lost is stopped here. */
  private async renewLeases(): Promise<void> {
    if (this.claimed.size === 0) return;
    const cluster = this.deps.cluster;
    try {
      const ids = [...this.claimed];
      const held = new Set(await this.deps.store.renew(cluster.node, ids, this.deps.clock.now() + cluster.leaseMs));
      for (const id of ids) {
        if (held.has(id) || !this.claimed.has(id)) continue;
        this.deps.log.warn({ job_id: id }, 'its lease was lost (another node runs it now); stopping it here');
        this.claimed.delete(id);
        this.deps.running.get(id)?.abort(new LeaseLost('lease lost'));
      }
    } catch (err) {
      // The store is out of reach: the leases hold until they run out, and renewal is tried again.
      this.deps.log.warn({ err }, 'could not renew the job leases');
    }
  }
}
