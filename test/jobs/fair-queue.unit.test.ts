import { describe, expect, it } from 'vitest';

import { FairQueue, type QueuedJob, runsBefore } from '../../server/jobs/fair-queue.js';

// The order jobs wait in on one node, beyond the round-robin of test/jobs/fair-order.test.ts:
// ties, the running count, and what clear() and turnsState() say.

const job = (id: string, accountId: string, turn: number, createdAt = 0): QueuedJob => ({ id, accountId, turn, createdAt, fullPage: false, delayMs: 0 });

describe('runsBefore', () => {
  it('puts the lower turn first, then the older job, then the lower id', () => {
    expect(runsBefore(job('z', 'a', 1, 9), job('a', 'b', 2, 0))).toBe(true);
    expect(runsBefore(job('z', 'a', 1, 1), job('a', 'b', 1, 2))).toBe(true);
    expect(runsBefore(job('a', 'a', 1, 1), job('b', 'b', 1, 1))).toBe(true);
    expect(runsBefore(job('b', 'a', 1, 1), job('a', 'b', 1, 1))).toBe(false);
  });
});

describe('FairQueue', () => {
  it('takes the job lowest in turn across accounts, and nothing once none waits', () => {
    const fair = new FairQueue();
    fair.push(job('a1', 'a', 2));
    fair.push(job('b1', 'b', 1));
    expect(fair.take()?.id).toBe('b1');
    expect(fair.take()?.id).toBe('a1');
    expect(fair.take()).toBeUndefined();
    expect(fair.size).toBe(0);
  });

  it('counts a taken job as running until done, and ignores a done for a job never taken', () => {
    const fair = new FairQueue();
    const taken = job('a1', 'a', 0);
    fair.push(taken);
    fair.push(job('a2', 'a', 1));
    fair.take();
    expect(fair.runningOf('a')).toBe(1);
    fair.done(job('a2', 'a', 1));
    expect(fair.runningOf('a')).toBe(1);
    fair.done(taken);
    expect(fair.runningOf('a')).toBe(0);
    expect(fair.countOf('a')).toBe(1);
  });

  it('forgets the waiting jobs at clear but keeps the running ones counted', () => {
    const fair = new FairQueue();
    fair.push(job('a1', 'a', 0));
    fair.push(job('a2', 'a', 1));
    const running = fair.take()!;
    fair.clear();
    expect(fair.size).toBe(0);
    expect(fair.find('a2')).toBeUndefined();
    expect(fair.find(running.id)).toEqual({ job: running, running: true });
  });

  it("tells fairTurns the account's last turn, the highest running and the lowest waiting", () => {
    const fair = new FairQueue();
    fair.push(job('a1', 'a', 4));
    fair.push(job('a2', 'a', 6));
    fair.push(job('b1', 'b', 5));
    fair.take();
    expect(fair.turnsState('a')).toEqual({ accountLast: 6, runningMax: 4, waitingMin: 5 });
    expect(fair.turnsState('c')).toEqual({ accountLast: null, runningMax: 4, waitingMin: 5 });
  });
});
