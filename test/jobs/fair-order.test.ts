import { describe, expect, it } from 'vitest';

import { FairQueue, type QueuedJob } from '../../server/jobs/fair-queue.js';
import { fairTurns } from '../../server/store/fair-turns.js';

let created = 0;
const job = (accountId: string, turn: number, fields: Partial<QueuedJob> = {}): QueuedJob => ({
  id: `job-${++created}`,
  accountId,
  turn,
  createdAt: created,
  fullPage: false,
  delayMs: 0,
  ...fields,
});

/** Queues `count` jobs of an account as JobService does: turns from the queue as it is. */
function queue(fair: FairQueue, accountId: string, count: number): QueuedJob[] {
  const jobs = fairTurns(count, fair.turnsState(accountId)).map((turn) => job(accountId, turn));
  for (const j of jobs) fair.push(j);
  return jobs;
}

describe('fairTurns', () => {
  it('starts an empty queue at turn 0 and gives an account successive turns', () => {
    expect(fairTurns(3, { accountLast: null, runningMax: null, waitingMin: null })).toEqual([0, 1, 2]);
    expect(fairTurns(2, { accountLast: 4, runningMax: 1, waitingMin: 2 })).toEqual([5, 6]);
  });

  it('starts a newcomer at the turn running, or with none running at the lowest turn waiting', () => {
    expect(fairTurns(1, { accountLast: null, runningMax: 7, waitingMin: 3 })).toEqual([7]);
    expect(fairTurns(1, { accountLast: null, runningMax: null, waitingMin: 3 })).toEqual([3]);
  });

  it('gives an account whose last job is long past no turns saved up', () => {
    expect(fairTurns(1, { accountLast: 2, runningMax: 40, waitingMin: 41 })).toEqual([40]);
  });
});

describe('FairQueue', () => {
  it('alternates between a flood and a single job queued after it, with one slot', () => {
    const fair = new FairQueue();
    const flood = queue(fair, 'a', 5);
    const single = queue(fair, 'b', 1);
    const order: string[] = [];
    for (let next = fair.take(); next; next = fair.take()) {
      order.push(next.id);
      fair.done(next);
    }
    expect(order).toEqual([flood[0].id, single[0].id, ...flood.slice(1).map((j) => j.id)]);
  });

  it('serves a newcomer next while the flood holds every slot', () => {
    const fair = new FairQueue();
    queue(fair, 'a', 6);
    const running = [fair.take()!, fair.take()!];
    const [single] = queue(fair, 'b', 1);
    expect(fair.take()).toBe(single);
    fair.done(running[0]);
    expect(fair.take()!.accountId).toBe('a');
  });

  it('counts ahead of a job those running and those the order takes first', () => {
    const fair = new FairQueue();
    const flood = queue(fair, 'a', 4);
    const running = fair.take()!;
    const [single] = queue(fair, 'b', 1);
    expect(fair.ahead(single)).toEqual([running]);
    expect(fair.ahead(flood[3]).map((j) => j.id).sort()).toEqual([running.id, single.id, flood[1].id, flood[2].id].sort());
    expect(fair.countOf('a')).toBe(4);
    expect(fair.find(running.id)).toEqual({ job: running, running: true });
  });

  it('puts a job re-queued late in its place by turn', () => {
    const fair = new FairQueue();
    const later = job('a', 5);
    const earlier = job('a', 1, { createdAt: later.createdAt + 1 });
    fair.push(later);
    fair.push(earlier);
    expect(fair.waitingOf('a')).toEqual([earlier, later]);
  });
});
