import { afterEach, describe, expect, it, vi } from 'vitest';

import { ClusterClaims } from '../../server/jobs/cluster-claims.js';
import { LeaseLost } from '../../server/jobs/job-run.js';
import { silentLogger } from '../../server/logger.js';
import { StoreUnavailableError } from '../../server/store/stores.js';
import { fakeSettings, ManualClock } from '../helpers/fake-job-core.js';
import { FakeJobStore, pendingJob } from '../helpers/fake-job-store.js';

// One node of a cluster claiming its share of the jobs waiting in the shared store, over an
// in-memory store: as many as it has free slots, in the fair order, held by leases it renews.

const LEASE_MS = 30_000;
const cluster = { node: 'node-a', leaseMs: LEASE_MS, pollMs: 1_000 };

let claims: ClusterClaims | undefined;
afterEach(() => {
  claims?.close();
  claims = undefined;
  vi.useRealTimers();
});

/** A node with `concurrency` slots whose runs hold their slot, claiming from `store`. */
function node(store: FakeJobStore, concurrency = 2) {
  const clock = new ManualClock();
  const running = new Map<string, AbortController>();
  const started: string[] = [];
  const finish = new Map<string, () => void>();
  claims = new ClusterClaims({
    settings: fakeSettings({ concurrency }),
    run: (id) => {
      started.push(id);
      running.set(id, new AbortController());
      return new Promise<void>((resolve) => finish.set(id, resolve));
    },
    onRunError: () => undefined,
    cluster,
    store,
    clock,
    log: silentLogger,
    running,
    update: (id, change) => store.update(id, change, cluster.node),
  });
  return { claims, clock, running, started, finish: (id: string) => finish.get(id)!() };
}

describe('ClusterClaims', () => {
  it('claims as many jobs as it has free slots, lowest turn first, leased until now plus the lease', async () => {
    const store = new FakeJobStore([pendingJob({ _id: 'late', turn: 2 }), pendingJob({ _id: 'first', turn: 0 }), pendingJob({ _id: 'second', turn: 1 })]);
    const { claims, clock, started } = node(store, 2);
    claims.poke();
    await vi.waitFor(() => expect(started.sort()).toEqual(['first', 'second']));
    expect(store.job('first')).toMatchObject({ status: 'processing', lease_owner: 'node-a', lease_until: clock.now() + LEASE_MS });
    expect(store.job('late')).toMatchObject({ status: 'pending' });
    await vi.waitFor(() => expect(claims.depth()).toBe(2 + 1));
  });

  it('claims the next job as soon as a slot frees, without waiting for the poll', async () => {
    const store = new FakeJobStore([pendingJob({ _id: 'first', turn: 0 }), pendingJob({ _id: 'second', turn: 1 })]);
    const { claims, started, finish } = node(store, 1);
    claims.poke();
    await vi.waitFor(() => expect(started).toEqual(['first']));
    finish('first');
    await vi.waitFor(() => expect(started).toEqual(['first', 'second']));
  });

  it('takes over a job whose lease ran out on a node that died, and none whose lease holds', async () => {
    const store = new FakeJobStore([
      pendingJob({ _id: 'orphan', status: 'processing', lease_owner: 'node-dead', lease_until: 999_000 }),
      pendingJob({ _id: 'held', status: 'processing', lease_owner: 'node-b', lease_until: 2_000_000 }),
    ]);
    const { claims, started } = node(store, 2);
    claims.poke();
    await vi.waitFor(() => expect(started).toEqual(['orphan']));
    expect(store.job('held').lease_owner).toBe('node-b');
  });

  it('claims nothing while its queue is paused, or once it is closed, even resumed', async () => {
    const store = new FakeJobStore([pendingJob({ _id: 'j1' })]);
    const { claims, started } = node(store);
    claims.pause();
    claims.poke();
    await vi.waitFor(() => expect(claims.depth()).toBe(1));
    expect(store.job('j1').status).toBe('pending');
    claims.close();
    claims.resume();
    claims.poke();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(started).toEqual([]);
  });

  it('counts a job queued on any node at once, before the store is read again', () => {
    const { claims } = node(new FakeJobStore());
    claims.close();
    claims.enqueue(pendingJob({ _id: 'j1' }));
    claims.enqueue(pendingJob({ _id: 'j2' }));
    expect(claims.depth()).toBe(2);
  });

  it('gives no turns to new jobs, which the store gives', () => {
    const { claims } = node(new FakeJobStore());
    expect(claims.waitsInStore()).toBe(true);
    expect(claims.turnsFor()).toBeUndefined();
  });

  it('claims again on the next poke after a round the store did not answer', async () => {
    const store = new FakeJobStore([pendingJob({ _id: 'j1' })]);
    const { claims, started } = node(store);
    store.failNext(new StoreUnavailableError(new Error('connection refused')));
    claims.poke();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(started).toEqual([]);
    expect(store.job('j1').status).toBe('pending');
    claims.poke();
    await vi.waitFor(() => expect(started).toEqual(['j1']));
  });

  it('renews the leases of its jobs, and stops a job whose lease another node took', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const store = new FakeJobStore([pendingJob({ _id: 'kept' }), pendingJob({ _id: 'lost', created_at: 2_000 })]);
    const { claims, clock, running, started } = node(store, 2);
    claims.start();
    await vi.waitFor(() => expect(started).toHaveLength(2));
    // The lease of `lost` ran out while this node was away, and node-b claimed it.
    store.jobs.get('lost')!.lease_owner = 'node-b';
    clock.advance(5_000);
    await vi.advanceTimersByTimeAsync(LEASE_MS / 3);
    expect(store.job('kept').lease_until).toBe(clock.now() + LEASE_MS);
    expect(running.get('lost')!.signal.reason).toBeInstanceOf(LeaseLost);
    expect(running.get('kept')!.signal.aborted).toBe(false);
  });

  it('hands back at shutdown the jobs it claimed and never started, keeping the running one', async () => {
    const store = new FakeJobStore([pendingJob({ _id: 'run' }), pendingJob({ _id: 'wait', created_at: 2_000 })]);
    const { claims, running, started } = node(store, 1);
    // One slot, but a claim takes as many as are free when it starts: say two were.
    vi.spyOn(claims, 'free').mockReturnValue(2);
    claims.poke();
    await vi.waitFor(() => expect(started).toEqual(['run']));
    expect(running.has('wait')).toBe(false);
    await claims.handBack();
    expect(store.job('wait')).toMatchObject({ status: 'pending', lease_owner: null, lease_until: null });
    expect(store.job('run')).toMatchObject({ status: 'processing', lease_owner: 'node-a' });
  });
});
