import type { Logger } from '../logger.js';
import type { JobChange, JobStore } from '../store/stores.js';
import type { Clock } from '../time.js';
import { LeaseLost } from './job-run.js';
import { LocalQueue, type LocalQueueDeps, type QueueableJob } from './local-queue.js';

/** How a node of a cluster takes its share of the jobs. */
export interface ClusterRunOptions {
  /** This node's name in job leases; a new one at every start, so a restarted node's old leases simply run out. */
  node: string;
  /** How long a claim holds without renewal: a dead node's jobs run again elsewhere after this. @default 30000 */
  leaseMs: number;
  /** How often the node looks for work it was not told about (jobs posted to other nodes, leases run out). @default 1000 */
  pollMs: number;
}

export interface ClusterClaimsDeps extends LocalQueueDeps {
  cluster: ClusterRunOptions;
  store: JobStore;
  clock: Clock;
  log: Logger;
  /** The jobs running on this node, each with the controller that stops it. */
  running: ReadonlyMap<string, AbortController>;
  /** Sets fields of a job while this node holds its lease (false once lost). */
  update: (jobId: string, change: JobChange) => Promise<boolean>;
}

/**
 * The queue of a node of a cluster: jobs wait in the store the nodes share, and this node claims
 * as many as it has free slots (into its LocalQueue, in the fair order), holds them by a lease it
 * renews, and hands back at shutdown those it never started. Once closed it claims nothing more.
 */
export class ClusterClaims extends LocalQueue {
  /** Jobs this node claimed (waiting in its queue or running). */
  private readonly claimed = new Set<string>();
  /** Jobs waiting in the shared store, as last counted. */
  private sharedPending = 0;
  private claiming: Promise<void> | undefined;
  private claimAgain = false;
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(private readonly claimDeps: ClusterClaimsDeps) {
    super(claimDeps);
  }

  /** Jobs wait in the shared store, and this node runs those it claims. */
  override waitsInStore(): boolean {
    return true;
  }

  /** The store gives the turns, seeing every node's jobs. */
  override turnsFor(): undefined {
    return undefined;
  }

  /** A job was stored to wait: counted at once, and claimed by whichever node has a slot. */
  override enqueue(_job: QueueableJob): void {
    this.sharedPending++;
    this.poke();
  }

  /** Jobs waiting in the shared store, as last counted. */
  protected override waitingElsewhere(): number {
    return this.sharedPending;
  }

  /** A freed slot takes the next job from the store. */
  protected override slotFreed(): void {
    super.slotFreed();
    this.poke();
  }

  /** Looks for work now and every pollMs, and renews the leases of running jobs. */
  start(): void {
    const cluster = this.claimDeps.cluster;
    this.poke();
    this.timers.push(setInterval(() => this.poke(), cluster.pollMs));
    this.timers.push(setInterval(() => void this.renewLeases(), Math.max(250, cluster.leaseMs / 3)));
    for (const timer of this.timers) timer.unref();
  }

  /** Stops looking for work and renewing leases, then starting jobs (LocalQueue.close). */
  override close(): void {
    for (const timer of this.timers) clearInterval(timer);
    super.close();
  }

  /** The job is no longer this node's to hold (it ended, or was not run). */
  forget(jobId: string): void {
    this.claimed.delete(jobId);
  }

  /** Claims as many jobs as there are free slots (one round at a time; a poke during a round runs another). */
  poke(): void {
    if (this.isClosed()) return;
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    this.claiming = this.claimRound()
      .catch((err: unknown) => this.claimDeps.log.warn({ err }, 'could not claim jobs from the store'))
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
      if (this.claimDeps.running.has(id)) continue;
      await this.claimDeps.update(id, { status: 'pending', progress: 0, lease_owner: null, lease_until: null }).catch((err: unknown) =>
        this.claimDeps.log.warn({ job_id: id, err }, 'could not hand it back'),
      );
      this.claimed.delete(id);
    }
  }

  private async claimRound(): Promise<void> {
    const { cluster, store } = this.claimDeps;
    const free = this.free();
    if (free > 0 && !this.isPaused() && !this.isClosed()) {
      const now = this.claimDeps.clock.now();
      for (const job of await store.claim(cluster.node, free, now, now + cluster.leaseMs)) {
        this.claimed.add(job._id);
        this.push(job);
      }
    }
    this.sharedPending = await store.count({ status: ['pending'] });
  }

  /** Extends the leases of claimed jobs; a job whose lease was lost is stopped here. */
  private async renewLeases(): Promise<void> {
    if (this.claimed.size === 0) return;
    const { cluster, store, clock, log, running } = this.claimDeps;
    try {
      const ids = [...this.claimed];
      const held = new Set(await store.renew(cluster.node, ids, clock.now() + cluster.leaseMs));
      for (const id of ids) {
        if (held.has(id) || !this.claimed.has(id)) continue;
        log.warn({ job_id: id }, 'its lease was lost (another node runs it now); stopping it here');
        this.claimed.delete(id);
        running.get(id)?.abort(new LeaseLost('lease lost'));
      }
    } catch (err) {
      // The store is out of reach: the leases hold until they run out, and renewal is tried again.
      log.warn({ err }, 'could not renew the job leases');
    }
  }
}
