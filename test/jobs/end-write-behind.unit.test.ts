import { afterEach, describe, expect, it, vi } from 'vitest';

import { EndWriteBehind } from '../../server/jobs/end-write-behind.js';
import { silentLogger } from '../../server/logger.js';
import type { JobRecord } from '../../server/store/records/job-record.js';
import { FakeJobStore, pendingJob } from '../helpers/fake-job-store.js';

// Job ends through the write-behind buffer, over an in-memory store that refuses writes when
// told to: kept for readers, written again every 5 s, announced only once stored.

const diskFull = () => Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
const failedEnd = { status: 'failed' as const, progress: 0, completed_at: 5, error: 'boom' };

afterEach(() => {
  vi.useRealTimers();
});

function buffer(jobs: JobRecord[] = [pendingJob({ _id: 'j1', status: 'processing' })]) {
  const store = new FakeJobStore(jobs);
  const announced: string[] = [];
  const ends = new EndWriteBehind({ store, log: silentLogger, onEnded: (job) => announced.push(job._id) });
  return { store, ends, announced };
}

describe('EndWriteBehind', () => {
  it('stores an end the store takes, keeping nothing back', async () => {
    const { store, ends } = buffer();
    expect(await ends.save('j1', failedEnd)).toBe('stored');
    expect(store.job('j1')).toMatchObject(failedEnd);
    expect(ends.isUnsaved('j1')).toBe(false);
  });

  it("answers lost, writing nothing, when another node holds the job's lease", async () => {
    const { store, ends } = buffer([pendingJob({ _id: 'j1', status: 'processing', lease_owner: 'node-b' })]);
    expect(await ends.save('j1', failedEnd, 'node-a')).toBe('lost');
    expect(store.job('j1').status).toBe('processing');
  });

  it('shows readers an end the disk refused, as if it were stored', async () => {
    const { store, ends } = buffer();
    store.failNext(diskFull());
    expect(await ends.save('j1', failedEnd)).toBe('deferred');
    expect(store.job('j1').status).toBe('processing');
    expect(ends.overlay(store.job('j1'))).toMatchObject({ _id: 'j1', ...failedEnd });
    expect(ends.overlay(null)).toBeNull();
    await ends.stop();
  });

  it('writes a refused end again after 5 s and announces it only then', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { store, ends, announced } = buffer();
    store.failNext(diskFull(), 2);
    await ends.save('j1', failedEnd);
    // The first retry meets a disk still full; the second stores it.
    await vi.advanceTimersByTimeAsync(5_000);
    expect(ends.isUnsaved('j1')).toBe(true);
    expect(announced).toEqual([]);
    await vi.advanceTimersByTimeAsync(4_999);
    expect(ends.isUnsaved('j1')).toBe(true);
    await vi.advanceTimersByTimeAsync(1);
    expect(ends.isUnsaved('j1')).toBe(false);
    expect(store.job('j1')).toMatchObject(failedEnd);
    expect(announced).toEqual(['j1']);
  });

  it('tries once more at stop and counts the ends still not stored', async () => {
    const { store, ends } = buffer([pendingJob({ _id: 'j1', status: 'processing' }), pendingJob({ _id: 'j2', status: 'processing' })]);
    store.failNext(diskFull(), 2);
    await ends.save('j1', failedEnd);
    await ends.save('j2', failedEnd);
    store.failNext(diskFull());
    // j1's write fails again and the try ends there: j2 waits for the next.
    expect(await ends.stop()).toBe(2);
    expect(await ends.stop()).toBe(0);
  });

  it('announces a job only once it has ended', async () => {
    const { store, ends, announced } = buffer([pendingJob({ _id: 'j1', status: 'processing' }), pendingJob({ _id: 'j2', status: 'completed' })]);
    await ends.announce('j1');
    await ends.announce('j2');
    await ends.announce('gone');
    expect(announced).toEqual(['j2']);
    expect(store.updates).toEqual([]);
  });
});
