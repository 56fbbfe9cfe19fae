/** A job waiting for a capture slot, or running in one, as the fair order sees it. */
export interface QueuedJob {
  id: string;
  accountId: string;
  /** Its turn in the fair order (JobRecord.turn). */
  turn: number;
  createdAt: number;
  fullPage: boolean;
  /** The delay the job asked for, ms. */
  delayMs: number;
}

/** Whether `a` runs before `b`: a lower turn, then created earlier, then by id (the order of the stores' claim). */
export const runsBefore = (a: QueuedJob, b: QueuedJob): boolean =>
  a.turn < b.turn || (a.turn === b.turn && (a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.id < b.id)));

/**
 * The jobs waiting on one node, in the fair order (lowest turn first, see fairTurns), and the
 * jobs running, which the estimates count.
 */
export class FairQueue {
  /** Each account's waiting jobs, in the order they run. */
  private readonly waiting = new Map<string, QueuedJob[]>();
  /** Jobs taken and not yet done. */
  private readonly running = new Set<QueuedJob>();
  /** How many of `running` each account has. */
  private readonly runningBy = new Map<string, number>();
  private waitingCount = 0;

  get size(): number {
    return this.waitingCount;
  }

  /** Adds a waiting job in its account's list, in its place. */
  push(job: QueuedJob): void {
    const list = this.waiting.get(job.accountId) ?? [];
    let at = list.length;
    // Jobs usually come in order; one re-queued late (at start, say) still takes its place.
    while (at > 0 && runsBefore(job, list[at - 1])) at--;
    list.splice(at, 0, job);
    this.waiting.set(job.accountId, list);
    this.waitingCount++;
  }

  /** The next job in the fair order, now counted as running until done(); undefined when none waits. */
  take(): QueuedJob | undefined {
    let best: QueuedJob | undefined;
    for (const list of this.waiting.values()) if (!best || runsBefore(list[0], best)) best = list[0];
    if (!best) return undefined;
    const list = this.waiting.get(best.accountId)!;
    list.shift();
    if (list.length === 0) this.waiting.delete(best.accountId);
    this.waitingCount--;
    this.running.add(best);
    this.runningBy.set(best.accountId, this.runningOf(best.accountId) + 1);
    return best;
  }

  /** A job taken by take() has ended (or will not run). */
  done(job: QueuedJob): void {
    if (!this.running.delete(job)) return;
    const left = this.runningOf(job.accountId) - 1;
    if (left > 0) this.runningBy.set(job.accountId, left);
    else this.runningBy.delete(job.accountId);
  }

  /** Forgets every waiting job (they stay pending in the store); running ones stay counted until done. */
  clear(): void {
    this.waiting.clear();
    this.waitingCount = 0;
  }

  /** The account's jobs waiting or running here. */
  countOf(accountId: string): number {
    return (this.waiting.get(accountId)?.length ?? 0) + this.runningOf(accountId);
  }

  /** The account's jobs running here. */
  runningOf(accountId: string): number {
    return this.runningBy.get(accountId) ?? 0;
  }

  /** The account's waiting jobs, in the order they run. */
  waitingOf(accountId: string): readonly QueuedJob[] {
    return this.waiting.get(accountId) ?? [];
  }

  /** A job here, and whether it runs already. */
  find(id: string): { job: QueuedJob; running: boolean } | undefined {
    for (const job of this.running) if (job.id === id) return { job, running: true };
    for (const list of this.waiting.values()) {
      const job = list.find((j) => j.id === id);
      if (job) return { job, running: false };
    }
    return undefined;
  }

  /** What fairTurns needs to know of this queue, for new jobs of `accountId`. */
  turnsState(accountId: string): { accountLast: number | null; runningMax: number | null; waitingMin: number | null } {
    const max = (turns: number[]) => (turns.length ? Math.max(...turns) : null);
    const running = [...this.running];
    const own = this.waitingOf(accountId);
    return {
      accountLast: max([...running.filter((job) => job.accountId === accountId).map((job) => job.turn), ...own.slice(-1).map((job) => job.turn)]),
      runningMax: max(running.map((job) => job.turn)),
      waitingMin: this.waitingCount ? Math.min(...[...this.waiting.values()].map((list) => list[0].turn)) : null,
    };
  }

  /** Every job running, and every job waiting. */
  all(): QueuedJob[] {
    return [...this.running, ...[...this.waiting.values()].flat()];
  }

  /** The jobs that hold a slot before `job` (waiting here) starts: those running, and those the fair order takes first. */
  ahead(job: QueuedJob): QueuedJob[] {
    const out = [...this.running];
    for (const list of this.waiting.values()) {
      for (const other of list) {
        if (!runsBefore(other, job)) break;
        out.push(other);
      }
    }
    return out;
  }
}
