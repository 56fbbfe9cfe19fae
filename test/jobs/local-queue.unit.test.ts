import { describe, expect, it, vi } from 'vitest';

import { LocalQueue, type QueueableJob } from '../../server/jobs/local-queue.js';
import { fakeSettings } from '../helpers/fake-job-core.js';

// The jobs one node waits on and runs: at most `concurrency` at once, in the fair order, with
// runs the test ends itself.

const job = (id: string, account = 'a', turn = 0, created = 0): QueueableJob => ({ _id: id, account_id: account, turn, created_at: created, full_page: false });

/** A queue whose runs wait until the test ends them; `started` lists the jobs in the order they started. */
function heldQueue(concurrency = 1) {
  const settings = fakeSettings({ concurrency });
  const started: string[] = [];
  const ends = new Map<string, { resolve: () => void; reject: (err: unknown) => void }>();
  const runErrors: string[] = [];
  let slotsFreed = 0;
  const queue = new LocalQueue({
    settings,
    run: (id) =>
      new Promise<void>((resolve, reject) => {
        started.push(id);
        ends.set(id, { resolve, reject });
      }),
    onRunError: (id) => runErrors.push(id),
    onSlotFree: () => slotsFreed++,
  });
  const end = async (id: string, err?: unknown) => {
    if (err) ends.get(id)!.reject(err);
    else ends.get(id)!.resolve();
    await vi.waitFor(() => expect(queue.holds(id)).toBe(false));
  };
  return { queue, settings, started, end, runErrors, freed: () => slotsFreed };
}

describe('LocalQueue', () => {
  it('runs no more jobs at once than its concurrency', async () => {
    const { queue, started, end } = heldQueue(2);
    for (const id of ['j1', 'j2', 'j3']) queue.push(job(id));
    await vi.waitFor(() => expect(started).toEqual(['j1', 'j2']));
    expect(queue.stats()).toMatchObject({ running: 2, pending: 1, concurrency: 2 });
    expect(queue.free()).toBe(-1);
    await end('j1');
    await vi.waitFor(() => expect(started).toEqual(['j1', 'j2', 'j3']));
  });

  it('runs a newcomer before the rest of a flood queued ahead of it', async () => {
    const { queue, started, end } = heldQueue(1);
    for (let i = 0; i < 3; i++) queue.push(job(`a${i}`, 'a', i, i));
    await vi.waitFor(() => expect(started).toEqual(['a0']));
    // fairTurns gives a newcomer the turn running now.
    queue.push(job('b0', 'b', 0, 10));
    for (const id of ['a0', 'b0', 'a1']) {
      await vi.waitFor(() => expect(started.at(-1)).toBe(id));
      await end(id);
    }
    expect(started).toEqual(['a0', 'b0', 'a1', 'a2']);
  });

  it('starts with the first in turn, not the oldest, when jobs come back all at once', async () => {
    const { queue, started } = heldQueue(1);
    queue.pushAll([job('old', 'a', 3, 1), job('young', 'b', 0, 2)]);
    await vi.waitFor(() => expect(started).toEqual(['young']));
  });

  it('follows a change of concurrency', async () => {
    const { queue, settings, started } = heldQueue(1);
    for (const id of ['j1', 'j2', 'j3']) queue.push(job(id));
    await vi.waitFor(() => expect(started).toHaveLength(1));
    await settings.update({ concurrency: 3 });
    await vi.waitFor(() => expect(started).toHaveLength(3));
  });

  it('tells onRunError of a run that threw, and frees its slot for the next', async () => {
    const { queue, started, end, runErrors, freed } = heldQueue(1);
    queue.push(job('j1'));
    queue.push(job('j2'));
    await vi.waitFor(() => expect(started).toEqual(['j1']));
    await end('j1', new Error('store away'));
    expect(runErrors).toEqual(['j1']);
    await vi.waitFor(() => expect(started).toEqual(['j1', 'j2']));
    expect(freed()).toBeGreaterThanOrEqual(1);
  });

  it('starts nothing while paused, and the waiting jobs once resumed', async () => {
    const { queue, started } = heldQueue(1);
    queue.pause();
    queue.push(job('j1'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(started).toEqual([]);
    expect(queue.stats().paused).toBe(true);
    queue.resume();
    await vi.waitFor(() => expect(started).toEqual(['j1']));
  });

  it('forgets the waiting jobs at close while the running one goes on', async () => {
    const { queue, started, end } = heldQueue(1);
    queue.push(job('j1'));
    queue.push(job('j2'));
    await vi.waitFor(() => expect(started).toEqual(['j1']));
    expect(queue.isClosed()).toBe(false);
    queue.close();
    expect(queue.isClosed()).toBe(true);
    expect(queue.holds('j2')).toBe(false);
    expect(queue.holds('j1')).toBe(true);
    await end('j1');
    await queue.idle();
    expect(started).toEqual(['j1']);
  });

  it('gives new jobs their turns in the fair order, and queues them to run', async () => {
    const { queue, started } = heldQueue(1);
    queue.enqueue(job('a1', 'a', 0));
    await vi.waitFor(() => expect(started).toEqual(['a1']));
    expect(queue.waitsInStore()).toBe(false);
    // a's next job goes behind a newcomer's first.
    expect(queue.turnsFor('a', 2)).toEqual([1, 2]);
    expect(queue.turnsFor('b', 1)).toEqual([0]);
  });

  it("counts an account's jobs waiting and running here", async () => {
    const { queue, started } = heldQueue(1);
    queue.push(job('a1', 'a'));
    queue.push(job('a2', 'a', 1));
    queue.push(job('b1', 'b'));
    await vi.waitFor(() => expect(started).toHaveLength(1));
    expect(queue.accountDepth('a')).toBe(2);
    expect(queue.accountDepth('b')).toBe(1);
    expect(queue.depth()).toBe(3);
  });

  it('estimates a new job behind the jobs ahead of it, shared among the slots, at the measured mean', async () => {
    const { queue, started } = heldQueue(2);
    for (const id of ['j1', 'j2', 'j3', 'j4']) queue.push(job(id));
    await vi.waitFor(() => expect(started).toHaveLength(2));
    // Before any measure a viewport capture is taken to last 3 s: j4 waits for three jobs on two slots, then its own.
    expect(queue.estimateSeconds(1, { fullPage: false, delayMs: 0 }, 'j4')).toBe(Math.ceil((3 * 3000) / 2 / 1000 + 3));
    // A running job is its own time away.
    expect(queue.estimateSeconds(1, { fullPage: false, delayMs: 0 }, 'j1')).toBe(3);
    // Measured at 1 s, the mean moves a fifth of the way there.
    queue.measured(false, 1000);
    expect(queue.estimateSeconds(1, { fullPage: false, delayMs: 0 }, 'j1')).toBe(Math.ceil(2.6));
  });
});
