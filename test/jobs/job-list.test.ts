import fs from 'node:fs/promises';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { EndWriteBehind } from '../../server/jobs/end-write-behind.js';
import { JobService } from '../../server/jobs/job-service.js';
import { silentLogger } from '../../server/logger.js';
import { openNedbStores } from '../../server/store/nedb/nedb-stores.js';
import type { JobRecord } from '../../server/store/records/job-record.js';
import type { Stores } from '../../server/store/stores.js';
import { tempDir } from '../helpers/temp-dir.js';

// The admin job list reads widening windows of creation time: its pages must be exactly the
// newest-first order of the whole history, whatever the filter, the cursor or the spacing.

const NOW = Date.UTC(2026, 10, 23, 12);
let dir = '';
let stores: Stores;
let jobs: JobService;
const all: JobRecord[] = [];

beforeAll(async () => {
  dir = await tempDir('sa-joblist-');
  stores = await openNedbStores(dir, silentLogger);
  // Dense in the last hour, sparse over two months, some sharing a creation time, and one ahead of the clock.
  const times = [
    ...Array.from({ length: 30 }, (_, i) => NOW - i * 60_000),
    ...Array.from({ length: 60 }, (_, i) => NOW - (i + 1) * 86_400_000),
    NOW - 5 * 86_400_000,
    NOW - 5 * 86_400_000,
    NOW + 60_000,
  ];
  times.forEach((created, i) => {
    all.push({ _id: `job_${String(i).padStart(3, '0')}`, account_id: i % 3 === 0 ? 'a' : 'b', status: i % 7 === 0 ? 'failed' : 'completed', created_at: created } as JobRecord);
  });
  await stores.jobs.insert(all);
  const ends = new EndWriteBehind({ store: stores.jobs, log: silentLogger });
  jobs = new JobService({ store: stores.jobs, stats: stores.stats, clock: { now: () => NOW }, ends, queue: undefined as never, settings: undefined as never, secrets: undefined as never, jobSecrets: stores.jobSecrets });
});

afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

const newestFirst = (list: JobRecord[]) =>
  [...list].sort((a, b) => b.created_at - a.created_at || (a._id < b._id ? 1 : -1)).map((j) => j._id);

describe('the admin job list', () => {
  for (const [what, filter] of [
    ['everything', {}],
    ['one account', { account_id: 'a' }],
    ['failed jobs', { status: 'failed' as const }],
    ['an account with nothing', { account_id: 'nobody' }],
  ] as const) {
    it(`pages through ${what} in the order of the whole history`, async () => {
      const expected = newestFirst(all.filter((j) => (!('account_id' in filter) || j.account_id === filter.account_id) && (!('status' in filter) || j.status === filter.status)));
      for (const limit of [1, 7, 50, 500]) {
        const seen: string[] = [];
        let before: string | undefined;
        for (;;) {
          const page = await jobs.list({ ...filter, before, limit });
          seen.push(...page.map((j) => j._id));
          if (page.length < limit) break;
          before = page[page.length - 1]._id;
        }
        expect(seen, `limit ${limit}`).toEqual(expected);
      }
    });
  }
});
