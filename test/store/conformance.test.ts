import crypto from 'node:crypto';
import fs from 'node:fs/promises';

import pg from 'pg';
import { beforeEach, describe, expect, it } from 'vitest';

import type { JobRecord } from '../../server/store/records/job-record.js';
import { EmailTakenError, type Stores } from '../../server/store/stores.js';
import { describeOnEachStore } from '../helpers/store-backends.js';
import { deliveryDoc, jobRecord, newAccount, newKey, waitingJob } from './conformance-records.js';

const ids = (records: ReadonlyArray<{ _id: string }>) => records.map((r) => r._id);
const sortedIds = (records: ReadonlyArray<{ _id: string }>) => ids(records).sort();
const byDay = <T extends { day: string; account_id: string }>(days: T[]) =>
  [...days].sort((a, b) => a.day.localeCompare(b.day) || a.account_id.localeCompare(b.account_id));

const DAY = 86_400_000;
const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 2, 10, 12);

describeOnEachStore('the $name stores', (store) => {
  const { name, open } = store;
  let stores: Stores;
  beforeEach(() => {
    stores = store.stores;
  });

  it(`says it is the ${name} backend`, () => {
    expect(stores.backend).toBe(name);
  });

  describe('jobs', () => {
    it('stores jobs and reads each back whole by id', async () => {
      const [a, b] = [jobRecord(), waitingJob({ cache_key: 'ck', has_secrets: true, secret_names: { headers: ['X-A'], cookies: [], http_auth: true } })];
      await stores.jobs.insert([a, b]);
      expect(await stores.jobs.get(a._id)).toEqual(a);
      expect(await stores.jobs.get(b._id)).toEqual(b);
      expect(await stores.jobs.get('no-such-job')).toBeNull();
    });

    it('finds a job by its image file, and nothing for a file no job holds', async () => {
      const job = jobRecord({ image_file: 'abc123.webp' });
      await stores.jobs.insert([jobRecord(), job, waitingJob()]);
      expect((await stores.jobs.byImage('abc123.webp'))?._id).toBe(job._id);
      expect(await stores.jobs.byImage('nothing.png')).toBeNull();
    });

    it('sets the fields of an update and keeps the others; false for a job that is not there', async () => {
      const job = waitingJob();
      await stores.jobs.insert([job]);
      const change = { status: 'completed', progress: 100, completed_at: T0, image_file: 'done.png', page_title: 'Done', options: { darkMode: true } } as const;
      expect(await stores.jobs.update(job._id, change)).toBe(true);
      expect(await stores.jobs.get(job._id)).toEqual({ ...job, ...change });
      expect((await stores.jobs.byImage('done.png'))?._id).toBe(job._id);
      expect(await stores.jobs.update('no-such-job', { progress: 5 })).toBe(false);
    });

    it("keeps a completed job's warnings whole, and a job written without them reads back without them", async () => {
      const job = waitingJob();
      const older = jobRecord();
      await stores.jobs.insert([job, older]);
      const warnings = [
        { code: 'images_not_loaded', message: '2 images in the picture are missing: 2 failed to load (first: https://example.com/a.png).' },
        { code: 'console_errors', message: 'The page reported 1 error to its console (first: "quoted" \\ ünïcode).' },
      ] as const;
      expect(await stores.jobs.update(job._id, { status: 'completed', progress: 100, warnings: [...warnings] })).toBe(true);
      expect((await stores.jobs.get(job._id))?.warnings).toEqual(warnings);
      expect(await stores.jobs.get(older._id)).not.toHaveProperty('warnings');
    });

    it('keeps a job whose page title holds a NUL character (PostgreSQL stores it as U+FFFD)', async () => {
      const job = jobRecord();
      await stores.jobs.insert([job]);
      expect(await stores.jobs.update(job._id, { page_title: 'a\0b' })).toBe(true);
      expect((await stores.jobs.get(job._id))?.page_title?.replace('\uFFFD', '\0')).toBe('a\0b');
    });

    it('finds the newest jobs with a result-cache key, up to the limit', async () => {
      const jobs = [0, 1, 2, 3].map((i) => jobRecord({ cache_key: 'same', created_at: T0 + i * 1_000 }));
      await stores.jobs.insert([...jobs, jobRecord({ cache_key: 'other', created_at: T0 + 10_000 }), jobRecord({ created_at: T0 + 20_000 })]);
      expect(ids(await stores.jobs.byCacheKey('same', 3))).toEqual([jobs[3], jobs[2], jobs[1]].map((j) => j._id));
      expect(await stores.jobs.byCacheKey('none', 3)).toEqual([]);
    });

    it('lists jobs newest first, ties on created_at broken by id, descending', async () => {
      const jobs = [
        jobRecord({ _id: 'j-b', created_at: T0 }),
        jobRecord({ _id: 'j-a', created_at: T0 }),
        jobRecord({ _id: 'j-c', created_at: T0 }),
        jobRecord({ _id: 'j-z', created_at: T0 - DAY * 40 }),
        jobRecord({ _id: 'j-0', created_at: T0 + 1 }),
      ];
      await stores.jobs.insert(jobs);
      expect(ids(await stores.jobs.list({ limit: 10 }))).toEqual(['j-0', 'j-c', 'j-b', 'j-a', 'j-z']);
      expect(ids(await stores.jobs.list({ limit: 2 }))).toEqual(['j-0', 'j-c']);
    });

    it('lists the jobs of one state, of one account, or both', async () => {
      const jobs = [
        jobRecord({ account_id: 'a1', status: 'completed', created_at: T0 }),
        jobRecord({ account_id: 'a1', status: 'failed', image_file: null, created_at: T0 + 1 }),
        jobRecord({ account_id: 'a2', status: 'failed', image_file: null, created_at: T0 + 2 }),
        waitingJob({ account_id: 'a2', created_at: T0 + 3 }),
      ];
      await stores.jobs.insert(jobs);
      expect(ids(await stores.jobs.list({ status: 'failed', limit: 10 }))).toEqual([jobs[2]._id, jobs[1]._id]);
      expect(ids(await stores.jobs.list({ account_id: 'a2', limit: 10 }))).toEqual([jobs[3]._id, jobs[2]._id]);
      expect(ids(await stores.jobs.list({ account_id: 'a1', status: 'failed', limit: 10 }))).toEqual([jobs[1]._id]);
      expect(await stores.jobs.list({ account_id: 'a3', limit: 10 })).toEqual([]);
    });

    it('pages through the list with the before cursor, through ties, with every job once', async () => {
      // 25 jobs over 5 creation times, hours to months apart, ids not in creation order.
      const times = [T0, T0 - HOUR / 2, T0 - 3 * DAY, T0 - 20 * DAY, T0 - 200 * DAY];
      const jobs = Array.from({ length: 25 }, (_, i) => jobRecord({ _id: `j${String((i * 7) % 25).padStart(2, '0')}`, created_at: times[i % 5] }));
      await stores.jobs.insert(jobs);
      const order = [...jobs].sort((a, b) => b.created_at - a.created_at || (a._id < b._id ? 1 : -1)).map((j) => j._id);
      for (const limit of [1, 4, 7]) {
        const seen: string[] = [];
        let before: { created_at: number; id: string } | undefined;
        for (;;) {
          const page = await stores.jobs.list({ limit, before });
          seen.push(...ids(page));
          if (page.length < limit) break;
          const last = page[page.length - 1];
          before = { created_at: last.created_at, id: last._id };
        }
        expect(seen).toEqual(order);
      }
      const [, second] = order;
      const anchor = jobs.find((j) => j._id === second)!;
      expect(ids(await stores.jobs.list({ limit: 3, status: 'completed', before: { created_at: anchor.created_at, id: anchor._id } }))).toEqual(order.slice(2, 5));
    });

    it('gives the jobs waiting or running, oldest first', async () => {
      const jobs = [
        waitingJob({ created_at: T0 + 2 }),
        waitingJob({ status: 'processing', progress: 50, started_at: T0 + 5, created_at: T0 }),
        jobRecord({ created_at: T0 - 1 }),
        waitingJob({ created_at: T0 + 1 }),
        jobRecord({ status: 'failed', created_at: T0 - 2 }),
      ];
      await stores.jobs.insert(jobs);
      expect(ids(await stores.jobs.unfinished())).toEqual([jobs[1]._id, jobs[3]._id, jobs[0]._id]);
    });

    it('counts jobs, by account and by states', async () => {
      await stores.jobs.insert([
        jobRecord({ account_id: 'a1' }),
        jobRecord({ account_id: 'a1', status: 'failed' }),
        waitingJob({ account_id: 'a1' }),
        waitingJob({ account_id: 'a2', status: 'processing' }),
      ]);
      expect(await stores.jobs.count()).toBe(4);
      expect(await stores.jobs.count({ account_id: 'a1' })).toBe(3);
      expect(await stores.jobs.count({ status: ['pending', 'processing'] })).toBe(2);
      expect(await stores.jobs.count({ account_id: 'a1', status: ['completed', 'failed'] })).toBe(2);
      expect(await stores.jobs.count({ status: [] })).toBe(0);
      expect(await stores.jobs.count({ account_id: 'a3' })).toBe(0);
    });

    it('gives ended jobs created before a cutoff, up to a limit, never one still waiting', async () => {
      const old = [jobRecord({ created_at: T0 - 3 }), jobRecord({ status: 'failed', created_at: T0 - 2 }), jobRecord({ created_at: T0 - 1 })];
      await stores.jobs.insert([...old, waitingJob({ created_at: T0 - 10 }), jobRecord({ created_at: T0 }), jobRecord({ created_at: T0 + 1 })]);
      expect(sortedIds(await stores.jobs.endedBefore(T0, 10))).toEqual(sortedIds(old));
      const some = await stores.jobs.endedBefore(T0, 2);
      expect(some).toHaveLength(2);
      expect(sortedIds(old)).toEqual(expect.arrayContaining(ids(some)));
    });

    it('gives the ended jobs not yet expired that ended before a cutoff', async () => {
      const due = [jobRecord({ completed_at: T0 - 1 }), jobRecord({ status: 'failed', completed_at: T0 - 100 })];
      await stores.jobs.insert([
        ...due,
        jobRecord({ completed_at: T0 - 1, expired: true, image_file: null }),
        jobRecord({ completed_at: T0 }),
        waitingJob({ created_at: T0 - DAY }),
        waitingJob({ status: 'processing', created_at: T0 - DAY }),
      ]);
      expect(sortedIds(await stores.jobs.toExpire(T0))).toEqual(sortedIds(due));
      await stores.jobs.update(due[0]._id, { expired: true, image_file: null });
      expect(ids(await stores.jobs.toExpire(T0))).toEqual([due[1]._id]);
    });

    it('gives the ended jobs whose webhook is still due that ended before a cutoff, oldest end first, up to a limit', async () => {
      const [older, newer] = [jobRecord({ webhook_due: true, completed_at: T0 - 100 }), jobRecord({ status: 'failed', webhook_due: true, completed_at: T0 - 1 })];
      await stores.jobs.insert([
        newer,
        older,
        jobRecord({ webhook_due: true, completed_at: T0 }),
        jobRecord({ webhook_due: false, completed_at: T0 - 1 }),
        jobRecord({ completed_at: T0 - 1 }),
      ]);
      expect(ids(await stores.jobs.webhookDue(T0, 10))).toEqual([older._id, newer._id]);
      expect(ids(await stores.jobs.webhookDue(T0, 1))).toEqual([older._id]);
      await stores.jobs.update(older._id, { webhook_due: false });
      expect(ids(await stores.jobs.webhookDue(T0, 10))).toEqual([newer._id]);
    });

    it('removes jobs by id and says how many it removed', async () => {
      const jobs = [jobRecord(), jobRecord(), jobRecord()];
      await stores.jobs.insert(jobs);
      expect(await stores.jobs.remove([jobs[0]._id, jobs[2]._id, 'no-such-job'])).toBe(2);
      expect(await stores.jobs.get(jobs[0]._id)).toBeNull();
      expect(await stores.jobs.byImage(jobs[2].image_file!)).toBeNull();
      expect(ids(await stores.jobs.list({ limit: 10 }))).toEqual([jobs[1]._id]);
      expect(await stores.jobs.remove([])).toBe(0);
    });

    it('claims the oldest waiting jobs for a node, leased until a time', async () => {
      const waiting = [waitingJob({ created_at: T0 + 2 }), waitingJob({ created_at: T0 }), waitingJob({ created_at: T0 + 1 })];
      await stores.jobs.insert([...waiting, jobRecord({ created_at: T0 - 1 })]);
      const claimed = await stores.jobs.claim('node-1', 2, T0, T0 + 30_000);
      expect(ids(claimed)).toEqual([waiting[1]._id, waiting[2]._id]);
      const lease = { status: 'processing', lease_owner: 'node-1', lease_until: T0 + 30_000 };
      expect(claimed[0]).toEqual({ ...waiting[1], ...lease });
      expect(await stores.jobs.get(waiting[2]._id)).toEqual({ ...waiting[2], ...lease });
      expect(ids(await stores.jobs.claim('node-2', 5, T0, T0 + 30_000))).toEqual([waiting[0]._id]);
      expect(await stores.jobs.claim('node-3', 5, T0, T0 + 30_000)).toEqual([]);
    });

    it('hands each waiting job to one node only, however many claim at once', async () => {
      const waiting = Array.from({ length: 20 }, (_, i) => waitingJob({ created_at: T0 + i }));
      await stores.jobs.insert(waiting);
      const claims = await Promise.all(Array.from({ length: 10 }, (_, i) => stores.jobs.claim(`node-${i}`, 3, T0, T0 + 30_000)));
      const claimed = claims.flatMap(ids);
      expect(new Set(claimed).size).toBe(claimed.length);
      expect([...claimed].sort()).toEqual(sortedIds(waiting));
      for (const [i, jobs] of claims.entries()) {
        for (const job of jobs) expect((await stores.jobs.get(job._id))?.lease_owner).toBe(`node-${i}`);
      }
    });

    it('claims jobs round-robin by account, in the turns enqueue gives them', async () => {
      const job = (account: string, at: number) => waitingJob({ account_id: account, created_at: T0 + at });
      // A queues four jobs, then B two: B's start at the queue's current turn, taking every other slot.
      const a = (await stores.jobs.enqueue([0, 1, 2, 3].map((i) => job('acc-a', i)), 100))!;
      const b = (await stores.jobs.enqueue([10, 11].map((i) => job('acc-b', i)), 100))!;
      expect(a.map((j) => j.turn)).toEqual([0, 1, 2, 3]);
      expect(b.map((j) => j.turn)).toEqual([0, 1]);
      expect(await stores.jobs.get(b[1]._id)).toEqual(b[1]);
      // What estimated_time_seconds counts in a cluster: A's first two and B's first run before B's second.
      expect(await stores.jobs.countAhead(b[1])).toBe(3);
      // Turn 0: A's and B's first (the older first); turn 1: A's second, older than B's.
      expect(ids(await stores.jobs.claim('node-1', 3, T0, T0 + 30_000))).toEqual(ids([a[0], a[1], b[0]]));
      // C arrives while turn 1 runs: its first job takes turn 1, ahead of A's last two.
      const c = (await stores.jobs.enqueue([20, 21].map((i) => job('acc-c', i)), 100))!;
      expect(c.map((j) => j.turn)).toEqual([1, 2]);
      // Ahead of C's first: the three running, and B's second (turn 1, older).
      expect(await stores.jobs.countAhead(c[0])).toBe(4);
      expect(ids(await stores.jobs.claim('node-2', 3, T0, T0 + 30_000))).toEqual(ids([a[2], b[1], c[0]]));
      expect(ids(await stores.jobs.claim('node-3', 5, T0, T0 + 30_000))).toEqual(ids([a[3], c[1]]));
      // An account that comes back after its jobs ended starts at the current turn, with no turns saved up.
      for (const j of [a[0], b[0], a[1], a[2], b[1], c[0]]) await stores.jobs.update(j._id, { status: 'completed' });
      expect((await stores.jobs.enqueue([job('acc-b', 30)], 100))!.map((j) => j.turn)).toEqual([3]);
    });

    it("enqueues an account's jobs only within a bound on its jobs waiting or running", async () => {
      const mine = (n: number, fields: Partial<JobRecord> = {}) => Array.from({ length: n }, () => waitingJob({ account_id: 'acc-a', ...fields }));
      await stores.jobs.insert([...mine(2), ...mine(1, { status: 'processing' }), ...mine(3, { status: 'completed' }), waitingJob({ account_id: 'acc-b' })]);
      expect(await stores.jobs.enqueue(mine(2), 4)).toBeNull();
      expect(await stores.jobs.count({ account_id: 'acc-a' })).toBe(6);
      const fits = mine(1);
      expect(await stores.jobs.enqueue(fits, 4)).toHaveLength(1);
      expect((await stores.jobs.get(fits[0]._id))?.url).toBe(fits[0].url);
      // Many at once, as the nodes of a cluster would: exactly the bound is admitted.
      const tries = await Promise.all(Array.from({ length: 10 }, () => stores.jobs.enqueue(mine(1), 8)));
      expect(tries.filter(Boolean)).toHaveLength(4);
      expect(await stores.jobs.count({ account_id: 'acc-a', status: ['pending', 'processing'] })).toBe(8);
      expect(await stores.jobs.enqueue(mine(1, { account_id: 'acc-b' }), 2)).toHaveLength(1);
    });

    it('gives a running job whose lease ran out to another node, and only then', async () => {
      const job = waitingJob();
      await stores.jobs.insert([job, waitingJob({ status: 'processing', created_at: T0 - DAY })]);
      await stores.jobs.claim('node-1', 1, T0, T0 + 30_000);
      expect(await stores.jobs.claim('node-2', 5, T0 + 29_999, T0 + 60_000)).toEqual([]);
      const retaken = await stores.jobs.claim('node-2', 5, T0 + 30_001, T0 + 60_000);
      expect(retaken).toEqual([{ ...job, status: 'processing', lease_owner: 'node-2', lease_until: T0 + 60_000 }]);
    });

    it('updates a leased job for the node holding the lease only', async () => {
      const job = waitingJob();
      await stores.jobs.insert([job]);
      await stores.jobs.claim('node-1', 1, T0, T0 + 1_000);
      await stores.jobs.claim('node-2', 1, T0 + 2_000, T0 + 30_000);
      expect(await stores.jobs.update(job._id, { status: 'completed', progress: 100 }, 'node-1')).toBe(false);
      expect((await stores.jobs.get(job._id))?.status).toBe('processing');
      expect(await stores.jobs.update(job._id, { progress: 50 }, 'node-2')).toBe(true);
      expect(await stores.jobs.update(job._id, { progress: 60 })).toBe(true);
      expect((await stores.jobs.get(job._id))?.progress).toBe(60);
    });

    it('renews the leases a node still holds and names them', async () => {
      const [a, b, c] = [waitingJob({ created_at: T0 }), waitingJob({ created_at: T0 + 1 }), waitingJob({ created_at: T0 + 2 })];
      await stores.jobs.insert([a, b, c]);
      await stores.jobs.claim('node-1', 2, T0, T0 + 1_000);
      await stores.jobs.claim('node-2', 1, T0, T0 + 1_000);
      await stores.jobs.update(b._id, { status: 'completed' }, 'node-1');
      expect(await stores.jobs.renew('node-1', [a._id, b._id, c._id, 'no-such-job'], T0 + 60_000)).toEqual([a._id]);
      expect((await stores.jobs.get(a._id))?.lease_until).toBe(T0 + 60_000);
      expect((await stores.jobs.get(c._id))?.lease_until).toBe(T0 + 1_000);
      expect(await stores.jobs.renew('node-1', [], T0 + 60_000)).toEqual([]);
    });

    if (name === 'postgres') {
      it('hands each waiting job to one node only when three nodes claim at once', async () => {
        const nodes = [stores, await open(), await open()];
        const waiting = Array.from({ length: 30 }, (_, i) => waitingJob({ created_at: T0 + i }));
        await stores.jobs.insert(waiting);
        const claims = await Promise.all(Array.from({ length: 15 }, (_, i) => nodes[i % 3].jobs.claim(`node-${i % 3}`, 3, T0, T0 + 30_000)));
        const claimed = claims.flatMap(ids);
        expect([...claimed].sort()).toEqual(sortedIds(waiting));
      });
    }
  });

  describe('job secrets', () => {
    it('keeps the sealed secrets of jobs apart from their records, erases them by id, and keeps them over a reopening', async () => {
      const [a, b] = [waitingJob({ has_secrets: true }), waitingJob({ has_secrets: true })];
      await stores.jobSecrets.put([
        { id: a._id, sealed: 'v1.sealed-a' },
        { id: b._id, sealed: 'v1.sealed-b' },
      ]);
      await stores.jobs.insert([a, b]);
      expect(await stores.jobSecrets.get(a._id)).toBe('v1.sealed-a');
      expect(await stores.jobSecrets.get('no-such-job')).toBeNull();
      expect(JSON.stringify(await stores.jobs.get(a._id))).not.toContain('v1.sealed');
      await stores.jobSecrets.remove([a._id]);
      expect(await stores.jobSecrets.get(a._id)).toBeNull();
      const reopened = await open();
      expect(await reopened.jobSecrets.get(b._id)).toBe('v1.sealed-b');
    });

    it('sweeps the secrets of jobs that have ended or are gone, and keeps those of jobs waiting or running', async () => {
      const [waiting, running, ended] = [waitingJob({ has_secrets: true }), waitingJob({ has_secrets: true, status: 'processing' }), jobRecord({ has_secrets: true })];
      await stores.jobSecrets.put([waiting, running, ended].map((job) => ({ id: job._id, sealed: `v1.${job._id}` })));
      await stores.jobs.insert([waiting, running, ended]);
      expect(await stores.jobSecrets.sweep()).toBe(1);
      expect(await stores.jobSecrets.get(ended._id)).toBeNull();
      expect(await stores.jobSecrets.get(waiting._id)).toBe(`v1.${waiting._id}`);
      expect(await stores.jobSecrets.get(running._id)).toBe(`v1.${running._id}`);
      await stores.jobs.remove([waiting._id]);
      if (name === 'nedb') {
        // One process per directory: at start a secret without its job is left over.
        expect(await stores.jobSecrets.sweep()).toBe(1);
        expect(await stores.jobSecrets.get(waiting._id)).toBeNull();
      }
    });
  });

  if (name === 'postgres') {
    it("leaves no copy of an erased secret in the database's files, in no table", async () => {
      // Other jobs wait with their secrets before and after it, in the same page of the table.
      const [before, job, after] = [waitingJob({ has_secrets: true }), waitingJob({ has_secrets: true }), waitingJob({ has_secrets: true })];
      const sealed = `v1.${crypto.randomBytes(48).toString('base64url')}`;
      await stores.jobSecrets.put([{ id: before._id, sealed: `v1.${crypto.randomBytes(48).toString('base64url')}` }]);
      await stores.jobSecrets.put([{ id: job._id, sealed }]);
      await stores.jobSecrets.put([{ id: after._id, sealed: `v1.${crypto.randomBytes(48).toString('base64url')}` }]);
      await stores.jobs.insert([before, job, after]);
      const client = new pg.Client({ connectionString: store.url });
      await client.connect();
      try {
        /** The files of every relation of this database (tables, indexes, TOAST), as they are on disk. */
        const onDisk = async () => {
          await client.query('CHECKPOINT');
          const { rows } = await client.query<{ file: string }>(
            `SELECT current_setting('data_directory') || '/' || pg_relation_filepath(c.oid) AS file FROM pg_class c WHERE pg_relation_filepath(c.oid) IS NOT NULL`,
          );
          const found: string[] = [];
          for (const { file } of rows) {
            const data = await fs.readFile(file).catch(() => Buffer.alloc(0));
            if (data.includes(sealed)) found.push(file);
          }
          return found;
        };
        expect((await onDisk()).length, 'the secret is on disk while the job waits').toBeGreaterThan(0);
        await stores.jobs.update(job._id, { status: 'completed', completed_at: T0 });
        await stores.jobSecrets.remove([job._id]);
        expect(await onDisk()).toEqual([]);
        expect(await stores.jobSecrets.get(before._id)).not.toBeNull();
        expect(await stores.jobSecrets.get(after._id)).not.toBeNull();
      } finally {
        await client.end();
      }
    });
  }

  describe('accounts', () => {
    it('stores an account under a new 16-character id and reads it back', async () => {
      const fields = newAccount();
      const account = await stores.accounts.insert(fields);
      expect(account._id).toMatch(/^[A-Za-z0-9]{16}$/);
      expect(account).toEqual({ ...fields, _id: account._id });
      expect(await stores.accounts.get(account._id)).toEqual(account);
      expect((await stores.accounts.insert(newAccount()))._id).not.toBe(account._id);
      expect(await stores.accounts.get('no-such-account')).toBeNull();
    });

    it('lists every account, oldest first', async () => {
      const late = await stores.accounts.insert(newAccount({ created_at: T0 + 2 }));
      const early = await stores.accounts.insert(newAccount({ created_at: T0 }));
      const middle = await stores.accounts.insert(newAccount({ created_at: T0 + 1 }));
      expect(ids(await stores.accounts.list())).toEqual([early._id, middle._id, late._id]);
    });

    it('finds an account by its e-mail', async () => {
      const account = await stores.accounts.insert(newAccount({ email: 'ops@example.com' }));
      await stores.accounts.insert(newAccount());
      expect(await stores.accounts.byEmail('ops@example.com')).toEqual(account);
      expect(await stores.accounts.byEmail('nobody@example.com')).toBeNull();
    });

    it('updates the fields given, then removes the account', async () => {
      const account = await stores.accounts.insert(newAccount());
      const change = { email: 'new@example.com', daily_limit: 5, previous_webhook_secret: 'whsec_old', previous_webhook_secret_until: T0 };
      await stores.accounts.update(account._id, change);
      expect(await stores.accounts.get(account._id)).toEqual({ ...account, ...change });
      expect((await stores.accounts.byEmail('new@example.com'))?._id).toBe(account._id);
      expect(await stores.accounts.byEmail(account.email)).toBeNull();
      await stores.accounts.remove(account._id);
      expect(await stores.accounts.get(account._id)).toBeNull();
      expect(await stores.accounts.list()).toEqual([]);
    });

    it('keeps e-mail addresses unique, also against inserts at once', async () => {
      const results = await Promise.allSettled(Array.from({ length: 5 }, () => stores.accounts.insert(newAccount({ email: 'same@example.com' }))));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      for (const r of results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')) expect(r.reason).toBeInstanceOf(EmailTakenError);
      const other = await stores.accounts.insert(newAccount({ email: 'other@example.com' }));
      await expect(stores.accounts.update(other._id, { email: 'same@example.com' })).rejects.toBeInstanceOf(EmailTakenError);
      expect((await stores.accounts.get(other._id))?.email).toBe('other@example.com');
    });
  });

  describe('keys', () => {
    it('stores a key under a new 16-character id and finds it by its hash', async () => {
      const fields = newKey();
      const key = await stores.keys.insert(fields);
      expect(key._id).toMatch(/^[A-Za-z0-9]{16}$/);
      expect(key).toEqual({ ...fields, _id: key._id });
      expect(await stores.keys.get(key._id)).toEqual(key);
      expect(await stores.keys.byHash(fields.hash)).toEqual([key]);
      expect(await stores.keys.byHash('0'.repeat(64))).toEqual([]);
    });

    it("lists an account's keys, oldest first", async () => {
      const second = await stores.keys.insert(newKey({ created_at: T0 + 1 }));
      const first = await stores.keys.insert(newKey({ created_at: T0 }));
      await stores.keys.insert(newKey({ account_id: 'other' }));
      expect(ids(await stores.keys.byAccount('acc'))).toEqual([first._id, second._id]);
      expect(await stores.keys.byAccount('nobody')).toEqual([]);
    });

    it('updates a key, revokes every key of one account, and removes a key', async () => {
      const [a, b, other] = [await stores.keys.insert(newKey()), await stores.keys.insert(newKey()), await stores.keys.insert(newKey({ account_id: 'other' }))];
      await stores.keys.update(a._id, { name: 'renamed', last_used_at: T0, ip_whitelist: [] });
      expect(await stores.keys.get(a._id)).toEqual({ ...a, name: 'renamed', last_used_at: T0, ip_whitelist: [] });
      await stores.keys.revokeAll('acc');
      expect((await stores.keys.byAccount('acc')).map((k) => k.revoked)).toEqual([true, true]);
      expect((await stores.keys.get(other._id))?.revoked).toBe(false);
      await stores.keys.remove(b._id);
      expect(await stores.keys.get(b._id)).toBeNull();
      expect(await stores.keys.byHash(b.hash)).toEqual([]);
    });
  });

  describe('usage', () => {
    const today = { day: '2026-03-10', month: '2026-03' };
    const limits = { daily: 3, monthly: 100 };

    it('admits calls while the day stays within its limit, and counts only those admitted', async () => {
      expect(await stores.usage.admit('acc', today, 2, limits)).toEqual({ admitted: true, today: 0, month: 0 });
      expect(await stores.usage.admit('acc', today, 2, limits)).toEqual({ admitted: false, today: 2, month: 2 });
      expect(await stores.usage.admit('acc', today, 1, limits)).toEqual({ admitted: true, today: 2, month: 2 });
      expect(await stores.usage.admit('acc', today, 1, limits)).toEqual({ admitted: false, today: 3, month: 3 });
      expect(await stores.usage.admit('other', today, 1, limits)).toEqual({ admitted: true, today: 0, month: 0 });
      expect(await stores.usage.month('acc', '2026-03')).toEqual([{ account_id: 'acc', day: '2026-03-10', count: 3 }]);
    });

    it('refuses a call that would pass the monthly limit, counting the other days of the month', async () => {
      await stores.usage.add('acc', { day: '2026-03-01', month: '2026-03' }, 8);
      await stores.usage.add('acc', { day: '2026-02-28', month: '2026-02' }, 50);
      expect(await stores.usage.admit('acc', today, 2, { daily: 5, monthly: 10 })).toEqual({ admitted: true, today: 0, month: 8 });
      expect(await stores.usage.admit('acc', today, 1, { daily: 5, monthly: 10 })).toEqual({ admitted: false, today: 2, month: 10 });
    });

    it('admits exactly the daily limit out of 50 admissions at once', async () => {
      const answers = await Promise.all(Array.from({ length: 50 }, () => stores.usage.admit('acc', today, 1, { daily: 20, monthly: 1_000 })));
      expect(answers.filter((a) => a.admitted)).toHaveLength(20);
      expect(answers.map((a) => a.today).sort((x, y) => x - y)).toEqual([...Array.from({ length: 20 }, (_, i) => i), ...Array<number>(30).fill(20)]);
      expect(await stores.usage.month('acc', today.month)).toEqual([{ account_id: 'acc', day: today.day, count: 20 }]);
    });

    it('admits exactly the monthly limit out of 50 admissions at once', async () => {
      await stores.usage.add('acc', { day: '2026-03-02', month: '2026-03' }, 12);
      const answers = await Promise.all(Array.from({ length: 50 }, () => stores.usage.admit('acc', today, 1, { daily: 1_000, monthly: 20 })));
      expect(answers.filter((a) => a.admitted)).toHaveLength(8);
      expect(byDay(await stores.usage.month('acc', today.month))).toEqual([
        { account_id: 'acc', day: '2026-03-02', count: 12 },
        { account_id: 'acc', day: today.day, count: 8 },
      ]);
    });

    if (name === 'postgres') {
      // Only PostgreSQL is opened twice on the same data: two openings are two nodes of a cluster.
      it('admits exactly the daily limit out of 60 admissions spread over three nodes', async () => {
        const nodes = [stores, await open(), await open()];
        const answers = await Promise.all(
          Array.from({ length: 60 }, (_, i) => nodes[i % 3].usage.admit('acc', today, 1, { daily: 25, monthly: 1_000 })),
        );
        expect(answers.filter((a) => a.admitted)).toHaveLength(25);
        expect(await nodes[1].usage.month('acc', today.month)).toEqual([{ account_id: 'acc', day: today.day, count: 25 }]);
      });
    }

    it('adds calls to a day and takes refunds off it', async () => {
      await stores.usage.add('acc', today, 3);
      await stores.usage.add('acc', today, 2);
      await stores.usage.add('acc', today, -1);
      expect(await stores.usage.month('acc', today.month)).toEqual([{ account_id: 'acc', day: today.day, count: 4 }]);
      expect(await stores.usage.admit('acc', today, 1, { daily: 5, monthly: 5 })).toEqual({ admitted: true, today: 4, month: 4 });
    });

    it("gives an account's days of one month", async () => {
      await stores.usage.add('acc', { day: '2026-02-28', month: '2026-02' }, 1);
      await stores.usage.add('acc', { day: '2026-03-01', month: '2026-03' }, 2);
      await stores.usage.add('acc', { day: '2026-03-31', month: '2026-03' }, 3);
      await stores.usage.add('other', { day: '2026-03-05', month: '2026-03' }, 4);
      expect(byDay(await stores.usage.month('acc', '2026-03'))).toEqual([
        { account_id: 'acc', day: '2026-03-01', count: 2 },
        { account_id: 'acc', day: '2026-03-31', count: 3 },
      ]);
      expect(await stores.usage.month('acc', '2026-04')).toEqual([]);
    });

    it('gives the days from one day on, of one account or of all', async () => {
      await stores.usage.add('acc', { day: '2026-02-27', month: '2026-02' }, 1);
      await stores.usage.add('acc', { day: '2026-02-28', month: '2026-02' }, 2);
      await stores.usage.add('acc', { day: '2026-03-01', month: '2026-03' }, 3);
      await stores.usage.add('other', { day: '2026-03-01', month: '2026-03' }, 4);
      expect(byDay(await stores.usage.since('acc', '2026-02-28'))).toEqual([
        { account_id: 'acc', day: '2026-02-28', count: 2 },
        { account_id: 'acc', day: '2026-03-01', count: 3 },
      ]);
      expect(byDay(await stores.usage.since(undefined, '2026-03-01'))).toEqual([
        { account_id: 'acc', day: '2026-03-01', count: 3 },
        { account_id: 'other', day: '2026-03-01', count: 4 },
      ]);
    });
  });

  describe('hourly ends', () => {
    const hour = Date.UTC(2026, 2, 10, 9);

    it('counts job ends per hour and gives the hours from one on, in order', async () => {
      await stores.stats.countEnd(hour + HOUR, 'completed');
      await stores.stats.countEnd(hour, 'completed');
      await stores.stats.countEnd(hour, 'failed');
      await stores.stats.countEnd(hour, 'completed');
      await stores.stats.countEnd(hour - HOUR, 'failed');
      expect(await stores.stats.hoursSince(hour)).toEqual([
        { hour, completed: 2, failed: 1 },
        { hour: hour + HOUR, completed: 1, failed: 0 },
      ]);
      expect(await stores.stats.hoursSince(hour + 2 * HOUR)).toEqual([]);
    });

    it('forgets the hours before one', async () => {
      for (const h of [hour - 2 * HOUR, hour - HOUR, hour]) await stores.stats.countEnd(h, 'failed');
      await stores.stats.prune(hour - HOUR);
      expect(await stores.stats.hoursSince(0)).toEqual([
        { hour: hour - HOUR, completed: 0, failed: 1 },
        { hour, completed: 0, failed: 1 },
      ]);
    });
  });

  describe('settings', () => {
    it('load nothing before a save, then what the last save held, whole', async () => {
      expect(await stores.settings.load()).toBeNull();
      await stores.settings.save({ concurrency: 4, egress_allow: ['10.1.0.0/16'], public_base_url: null });
      expect(await stores.settings.load()).toEqual({ concurrency: 4, egress_allow: ['10.1.0.0/16'], public_base_url: null });
      await stores.settings.save({ concurrency: 2, history_days: 30 });
      expect(await stores.settings.load()).toEqual({ concurrency: 2, history_days: 30 });
    });
  });

  describe('webhook deliveries', () => {
    it('stores a delivery and reads it back whole', async () => {
      const doc = deliveryDoc({ body: '{"type":"screenshot.failed","data":{"error":"\\u00e9"}}', type: 'screenshot.failed' });
      await stores.deliveries.insert(doc);
      expect(await stores.deliveries.get(doc._id)).toEqual(doc);
      expect(await stores.deliveries.get('no-such-delivery')).toBeNull();
    });

    it('stores a delivery once: a second insert with its id stores nothing and says so', async () => {
      const doc = deliveryDoc();
      expect(await stores.deliveries.insert(doc)).toBe(true);
      expect(await stores.deliveries.insert({ ...doc, body: '{"type":"screenshot.completed","data":{}}' })).toBe(false);
      expect(await stores.deliveries.get(doc._id)).toEqual(doc);
      const [a, b] = await Promise.all([stores.deliveries.insert({ ...doc, _id: `${doc._id}x` }), stores.deliveries.insert({ ...doc, _id: `${doc._id}x` })]);
      expect([a, b].sort()).toEqual([false, true]);
    });

    it('gives the deliveries waiting for an attempt', async () => {
      const waiting = [deliveryDoc(), deliveryDoc({ scheduled_attempts: 2 })];
      for (const doc of [...waiting, deliveryDoc({ status: 'succeeded', next_attempt_at: null, completed_at: T0 }), deliveryDoc({ status: 'failed' })]) {
        await stores.deliveries.insert(doc);
      }
      expect(sortedIds(await stores.deliveries.pending())).toEqual(sortedIds(waiting));
    });

    it('lists deliveries newest first, of one job or all, up to the limit', async () => {
      const docs = [0, 1, 2, 3].map((i) => deliveryDoc({ job_id: i % 2 === 0 ? 'even' : 'odd', created_at: T0 + i }));
      for (const doc of docs) await stores.deliveries.insert(doc);
      expect(ids(await stores.deliveries.list({ limit: 10 }))).toEqual(ids([...docs].reverse()));
      expect(ids(await stores.deliveries.list({ limit: 2 }))).toEqual([docs[3]._id, docs[2]._id]);
      expect(ids(await stores.deliveries.list({ job_id: 'even', limit: 10 }))).toEqual([docs[2]._id, docs[0]._id]);
      expect(await stores.deliveries.list({ job_id: 'none', limit: 10 })).toEqual([]);
    });

    it('lists deliveries made in one millisecond by id, descending', async () => {
      const docs = ['msg_b', 'msg_a', 'msg_c'].map((_id) => deliveryDoc({ _id, created_at: T0 }));
      for (const doc of docs) await stores.deliveries.insert(doc);
      await stores.deliveries.insert(deliveryDoc({ _id: 'msg_0', created_at: T0 + 1 }));
      expect(ids(await stores.deliveries.list({ limit: 10 }))).toEqual(['msg_0', 'msg_c', 'msg_b', 'msg_a']);
      expect(ids(await stores.deliveries.list({ limit: 2 }))).toEqual(['msg_0', 'msg_c']);
    });

    it('appends attempts in order and sets the state they lead to, in one write', async () => {
      const doc = deliveryDoc();
      await stores.deliveries.insert(doc);
      const first = { at: T0, status_code: 500, error: 'HTTP 500', duration_ms: 40, manual: false };
      const second = { at: T0 + 5_000, status_code: null, error: 'timed out', duration_ms: 10_000, manual: true };
      const third = { at: T0 + 60_000, status_code: 204, error: null, duration_ms: 12, manual: false };
      const afterFirst = await stores.deliveries.recordAttempt(doc._id, first, { status: 'pending', next_attempt_at: T0 + 60_000, completed_at: null, scheduled_attempts: 1 });
      const unreserved = { reserved_by: null, reserved_until: null };
      expect(afterFirst).toEqual({ ...doc, ...unreserved, attempts: [first], next_attempt_at: T0 + 60_000, scheduled_attempts: 1 });
      await stores.deliveries.recordAttempt(doc._id, second, { status: 'pending', next_attempt_at: T0 + 60_000, completed_at: null, scheduled_attempts: 1 });
      const done = { status: 'succeeded', next_attempt_at: null, completed_at: T0 + 60_012, scheduled_attempts: 2 } as const;
      expect(await stores.deliveries.recordAttempt(doc._id, third, done)).toEqual({ ...doc, ...done, ...unreserved, attempts: [first, second, third] });
      expect(await stores.deliveries.get(doc._id)).toEqual({ ...doc, ...done, ...unreserved, attempts: [first, second, third] });
      expect(await stores.deliveries.pending()).toEqual([]);
    });

    it('answers null to an attempt of a delivery that is not there', async () => {
      const attempt = { at: T0, status_code: 204, error: null, duration_ms: 12, manual: false };
      const next = { status: 'succeeded', next_attempt_at: null, completed_at: T0, scheduled_attempts: 1 } as const;
      expect(await stores.deliveries.recordAttempt('no-such-delivery', attempt, next)).toBeNull();
    });

    it('keeps every attempt of 20 recorded at once', async () => {
      const doc = deliveryDoc();
      await stores.deliveries.insert(doc);
      const attempts = Array.from({ length: 20 }, (_, i) => ({ at: T0 + i, status_code: 500, error: null, duration_ms: i, manual: true }));
      await Promise.all(attempts.map((a) => stores.deliveries.recordAttempt(doc._id, a, { status: 'pending', next_attempt_at: T0, completed_at: null, scheduled_attempts: 0 })));
      const stored = (await stores.deliveries.get(doc._id))!.attempts;
      expect([...stored].sort((a, b) => a.at - b.at)).toEqual(attempts);
    });

    it('reserves a waiting delivery for one node until the reservation runs out', async () => {
      const doc = deliveryDoc();
      const finished = deliveryDoc({ status: 'succeeded', next_attempt_at: null, completed_at: T0 });
      await stores.deliveries.insert(doc);
      await stores.deliveries.insert(finished);
      expect(await stores.deliveries.reserve(doc._id, 'node-1', T0, T0 + 10_000)).toBe(true);
      expect(await stores.deliveries.get(doc._id)).toEqual({ ...doc, reserved_by: 'node-1', reserved_until: T0 + 10_000 });
      expect(await stores.deliveries.reserve(doc._id, 'node-2', T0 + 9_999, T0 + 20_000)).toBe(false);
      expect(await stores.deliveries.reserve(doc._id, 'node-1', T0 + 5_000, T0 + 15_000)).toBe(true);
      expect(await stores.deliveries.reserve(doc._id, 'node-2', T0 + 15_001, T0 + 30_000)).toBe(true);
      expect((await stores.deliveries.get(doc._id))?.reserved_by).toBe('node-2');
      expect(await stores.deliveries.reserve(finished._id, 'node-1', T0, T0 + 10_000)).toBe(false);
      expect(await stores.deliveries.reserve('no-such-delivery', 'node-1', T0, T0 + 10_000)).toBe(false);
    });

    it('lets one node of many reserving a delivery at once have it', async () => {
      const doc = deliveryDoc();
      await stores.deliveries.insert(doc);
      const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => stores.deliveries.reserve(doc._id, `node-${i}`, T0, T0 + 10_000)));
      expect(answers.filter(Boolean)).toHaveLength(1);
      expect((await stores.deliveries.get(doc._id))?.reserved_by).toBe(`node-${answers.indexOf(true)}`);
    });

    it('gives the waiting deliveries due by a time that no live reservation holds, earliest first, up to a limit', async () => {
      const [late, early, middle] = [deliveryDoc({ next_attempt_at: T0 }), deliveryDoc({ next_attempt_at: T0 - 2_000 }), deliveryDoc({ next_attempt_at: T0 - 1_000 })];
      const reserved = deliveryDoc({ next_attempt_at: T0 - 3_000 });
      const lapsed = deliveryDoc({ next_attempt_at: T0 - 4_000 });
      for (const doc of [late, early, middle, reserved, lapsed, deliveryDoc({ next_attempt_at: T0 + 1 }), deliveryDoc({ status: 'failed', next_attempt_at: null })]) {
        await stores.deliveries.insert(doc);
      }
      await stores.deliveries.reserve(reserved._id, 'node-1', T0 - 10_000, T0 + 5_000);
      await stores.deliveries.reserve(lapsed._id, 'node-1', T0 - 10_000, T0 - 1);
      expect(ids(await stores.deliveries.due(T0, 10))).toEqual([lapsed._id, early._id, middle._id, late._id]);
      expect(ids(await stores.deliveries.due(T0, 2))).toEqual([lapsed._id, early._id]);
      const attempt = { at: T0, status_code: 503, error: 'HTTP 503', duration_ms: 5, manual: false };
      await stores.deliveries.recordAttempt(reserved._id, attempt, { status: 'pending', next_attempt_at: T0 - 500, completed_at: null, scheduled_attempts: 1 });
      expect(ids(await stores.deliveries.due(T0, 10))).toEqual([lapsed._id, early._id, middle._id, reserved._id, late._id]);
    });

    it('counts deliveries by state, every state named', async () => {
      expect(await stores.deliveries.countByStatus()).toEqual({ pending: 0, succeeded: 0, failed: 0 });
      for (const status of ['pending', 'pending', 'failed'] as const) await stores.deliveries.insert(deliveryDoc({ status }));
      expect(await stores.deliveries.countByStatus()).toEqual({ pending: 2, succeeded: 0, failed: 1 });
    });

    it('removes the finished deliveries created before a cutoff, never one still waiting', async () => {
      const gone = [deliveryDoc({ status: 'succeeded', created_at: T0 - 2 }), deliveryDoc({ status: 'failed', created_at: T0 - 1 })];
      const kept = [deliveryDoc({ status: 'pending', created_at: T0 - 5 }), deliveryDoc({ status: 'succeeded', created_at: T0 })];
      for (const doc of [...gone, ...kept]) await stores.deliveries.insert(doc);
      expect(await stores.deliveries.removeFinishedBefore(T0)).toBe(2);
      expect(sortedIds(await stores.deliveries.list({ limit: 10 }))).toEqual(sortedIds(kept));
      expect(await stores.deliveries.removeFinishedBefore(T0)).toBe(0);
    });
  });

  describe('shared values', () => {
    it('keep the first value set under a name', async () => {
      expect(await stores.shared.getOrSet('admin_token', 'first')).toBe('first');
      expect(await stores.shared.getOrSet('admin_token', 'second')).toBe('first');
      expect(await stores.shared.getOrSet('job_secrets_key', 'key')).toBe('key');
    });

    if (name === 'postgres') {
      it('give three nodes setting one name at once the same value', async () => {
        const nodes = [stores, await open(), await open()];
        const values = await Promise.all(nodes.map((node, i) => node.shared.getOrSet('admin_token', `token-${i}`)));
        expect(new Set(values).size).toBe(1);
      });
    }
  });

  it('reports every part usable', async () => {
    const health = await stores.health();
    expect(Object.keys(health).length).toBeGreaterThan(0);
    expect(Object.values(health)).toEqual(Object.keys(health).map(() => 'ok'));
  });

  it('keeps what every store holds across a compaction, a close and a new opening', async () => {
    const job = jobRecord({ created_at: T0 });
    const removed = jobRecord({ created_at: T0 - 1 });
    await stores.jobs.insert([job, removed, waitingJob({ created_at: T0 + 1 })]);
    await stores.jobs.update(job._id, { expired: true, image_file: null });
    await stores.jobs.remove([removed._id]);
    const account = await stores.accounts.insert(newAccount());
    const key = await stores.keys.insert(newKey({ account_id: account._id }));
    await stores.usage.add(account._id, { day: '2026-03-10', month: '2026-03' }, 7);
    await stores.stats.countEnd(Date.UTC(2026, 2, 10, 9), 'completed');
    await stores.settings.save({ retention_days: 3 });
    await stores.shared.getOrSet('admin_token', 'kept');
    const delivery = deliveryDoc({ job_id: job._id });
    await stores.deliveries.insert(delivery);
    const attempt = { at: T0, status_code: 200, error: null, duration_ms: 3, manual: false };
    await stores.deliveries.recordAttempt(delivery._id, attempt, { status: 'succeeded', next_attempt_at: null, completed_at: T0, scheduled_attempts: 1 });

    const jobsBefore: JobRecord[] = await stores.jobs.list({ limit: 10 });
    await stores.compact();
    await stores.close();
    const again = await open();

    expect(again.backend).toBe(name);
    expect(await again.jobs.list({ limit: 10 })).toEqual(jobsBefore);
    expect(await again.jobs.get(job._id)).toEqual({ ...job, expired: true, image_file: null });
    expect(await again.jobs.get(removed._id)).toBeNull();
    expect(await again.accounts.list()).toEqual([account]);
    expect(await again.keys.byHash(key.hash)).toEqual([key]);
    expect(await again.usage.month(account._id, '2026-03')).toEqual([{ account_id: account._id, day: '2026-03-10', count: 7 }]);
    expect(await again.stats.hoursSince(0)).toEqual([{ hour: Date.UTC(2026, 2, 10, 9), completed: 1, failed: 0 }]);
    expect(await again.settings.load()).toEqual({ retention_days: 3 });
    expect(await again.shared.getOrSet('admin_token', 'other')).toBe('kept');
    expect(await again.deliveries.get(delivery._id)).toMatchObject({ status: 'succeeded', attempts: [attempt] });
  });
});
