import fs from 'node:fs/promises';

import { afterEach, describe, expect, it } from 'vitest';

import { EndWriteBehind } from '../../server/jobs/end-write-behind.js';
import { silentLogger } from '../../server/logger.js';
import { openNedbStores } from '../../server/store/nedb/nedb-stores.js';
import type { JobRecord } from '../../server/store/records/job-record.js';
import { type JobStore, StoreUnavailableError } from '../../server/store/stores.js';
import { tempDir } from '../helpers/temp-dir.js';

let dir = '';
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

/** A real job store whose first update fails as a store that went away does (a seam, for this unit only). */
async function storeAwayOnce(): Promise<JobStore> {
  dir = await tempDir('sa-ends-');
  const { jobs } = await openNedbStores(dir, silentLogger);
  let away = true;
  return Object.assign(Object.create(jobs) as JobStore, {
    update: (id: string, change: object, holder?: string) => {
      if (away) {
        away = false;
        return Promise.reject(new StoreUnavailableError(new Error('connection refused')));
      }
      return jobs.update(id, change, holder);
    },
  });
}

const running = (owner: string) => ({ _id: 'job_1', status: 'processing', created_at: 1, lease_owner: owner, lease_until: 10 }) as JobRecord;
const failedEnd = { status: 'failed' as const, completed_at: 5, error: 'boom' };

describe('job ends kept for a store that was away', () => {
  it('are stored and announced once the store is back, while the node still holds the lease', async () => {
    const store = await storeAwayOnce();
    await store.insert([running('node-a')]);
    const announced: string[] = [];
    const ends = new EndWriteBehind({ store, log: silentLogger, onEnded: (job) => announced.push(job._id) });
    expect(await ends.save('job_1', failedEnd, 'node-a')).toBe('deferred');
    expect(await ends.stop()).toBe(0);
    expect(await store.get('job_1')).toMatchObject({ status: 'failed', error: 'boom' });
    expect(announced).toEqual(['job_1']);
  });

  it('are dropped, not written over the job, when another node took it over meanwhile', async () => {
    const store = await storeAwayOnce();
    await store.insert([running('node-a')]);
    const announced: string[] = [];
    const ends = new EndWriteBehind({ store, log: silentLogger, onEnded: (job) => announced.push(job._id) });
    expect(await ends.save('job_1', failedEnd, 'node-a')).toBe('deferred');
    // node-a's lease ran out while the store was away; node-b claimed the job and completed it.
    await store.update('job_1', { lease_owner: 'node-b', status: 'completed', completed_at: 7 });
    expect(await ends.stop()).toBe(0);
    expect(await store.get('job_1')).toMatchObject({ status: 'completed', lease_owner: 'node-b', completed_at: 7 });
    expect(announced).toEqual([]);
  });
});
