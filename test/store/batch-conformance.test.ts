import { beforeEach, expect, it } from 'vitest';

import type { BatchRecord } from '../../server/store/records/batch-record.js';
import type { Stores } from '../../server/store/stores.js';
import { describeOnEachStore } from '../helpers/store-backends.js';

// The batch store, one suite over both backends (as test/store/conformance.test.ts for the others).

const T0 = Date.UTC(2026, 2, 10, 12);

const batchOf = (id: string, fields: Partial<BatchRecord> = {}): BatchRecord => ({
  _id: id,
  account_id: 'acc1',
  key_id: 'key1',
  status: 'running',
  total: 3,
  jobs: [],
  completed: 0,
  failed: 0,
  callback_url: null,
  base_url: 'http://127.0.0.1:1',
  created_at: T0,
  ended_at: null,
  ...fields,
});

describeOnEachStore('the $name batch store', (store) => {
  let stores: Stores;
  beforeEach(() => {
    stores = store.stores;
  });

  it('stores a batch and its sealed items apart, and reads both back', async () => {
    await stores.batches.insert(batchOf('batch_1'), 'sealed-items');
    expect(await stores.batches.get('batch_1')).toEqual(batchOf('batch_1'));
    expect(await stores.batches.items('batch_1')).toBe('sealed-items');
    expect(await stores.batches.get('batch_2')).toBeNull();
    expect(await stores.batches.items('batch_2')).toBeNull();
  });

  it('appends fed jobs in order and counts ends, losing none of many at once', async () => {
    await stores.batches.insert(batchOf('batch_1'), 's');
    await stores.batches.addJobs('batch_1', ['job_a', 'job_b']);
    await Promise.all([
      stores.batches.addJobs('batch_1', ['job_c']),
      stores.batches.countEnd('batch_1', 'completed'),
      stores.batches.countEnd('batch_1', 'completed'),
      stores.batches.countEnd('batch_1', 'failed'),
    ]);
    expect(await stores.batches.get('batch_1')).toMatchObject({ jobs: ['job_a', 'job_b', 'job_c'], completed: 2, failed: 1 });
    expect(await stores.batches.countEnd('batch_9', 'failed')).toBeNull();
  });

  it('ends a running batch once, erasing its items, and lists only those still running', async () => {
    await stores.batches.insert(batchOf('batch_1'), 's1');
    await stores.batches.insert(batchOf('batch_2', { created_at: T0 + 1 }), 's2');
    await stores.batches.insert(batchOf('batch_0', { created_at: T0 + 2 }), 's0');
    expect(await stores.batches.end('batch_1', 'cancelled', T0 + 5)).toMatchObject({ status: 'cancelled', ended_at: T0 + 5 });
    expect(await stores.batches.end('batch_1', 'completed', T0 + 6)).toBeNull();
    expect(await stores.batches.items('batch_1')).toBeNull();
    expect(await stores.batches.get('batch_1')).toMatchObject({ status: 'cancelled', ended_at: T0 + 5 });
    expect((await stores.batches.running()).map((b) => b._id)).toEqual(['batch_2', 'batch_0']);
  });

  it('lists the newest batches first, the higher id first on a tie, up to the limit', async () => {
    await stores.batches.insert(batchOf('batch_a', { created_at: T0 }), 's');
    await stores.batches.insert(batchOf('batch_c', { created_at: T0 + 1, status: 'completed' }), 's');
    await stores.batches.insert(batchOf('batch_b', { created_at: T0 + 1 }), 's');
    expect((await stores.batches.recent(2)).map((b) => b._id)).toEqual(['batch_c', 'batch_b']);
    expect((await stores.batches.recent(10)).map((b) => b._id)).toEqual(['batch_c', 'batch_b', 'batch_a']);
  });

  it('removes the batches that ended before a time, leaving running ones however old', async () => {
    await stores.batches.insert(batchOf('batch_old', { created_at: T0 - 10 }), 's');
    await stores.batches.insert(batchOf('batch_new'), 's');
    await stores.batches.insert(batchOf('batch_running', { created_at: T0 - 20 }), 's');
    await stores.batches.end('batch_old', 'completed', T0 - 5);
    await stores.batches.end('batch_new', 'cancelled', T0 + 5);
    expect(await stores.batches.removeEndedBefore(T0)).toBe(1);
    expect((await stores.batches.recent(10)).map((b) => b._id).sort()).toEqual(['batch_new', 'batch_running']);
  });

  it('keeps batches across a reopening of the store', async () => {
    await stores.batches.insert(batchOf('batch_1'), 's1');
    await stores.batches.addJobs('batch_1', ['job_a']);
    await stores.close();
    const again = await store.open();
    expect(await again.batches.get('batch_1')).toMatchObject({ jobs: ['job_a'] });
    expect(await again.batches.items('batch_1')).toBe('s1');
  });
});
