import fs from 'node:fs/promises';

import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { MAX_RUNS_AFTER_A_STOP } from '../../server/jobs/job-run.js';
import { type FixtureServer, startFixtureServer } from '../fixtures/fixture-server.js';
import { account, admin, ClusterNodes, v1 } from '../helpers/cluster-nodes.js';
import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp-dir.js';

// Nodes of one cluster started one after another, each killed while it runs the same job: what
// a page that kills its process does to a cluster whose nodes take a dead node's jobs.

/** A node that dies loses its jobs to the next this many seconds later. */
const LEASE_SECONDS = 2;

let postgres: TestPostgres;
let database: string;
let fixtures: FixtureServer;
let filesDir: string;
let cluster: ClusterNodes;

beforeAll(async () => {
  postgres = await startPostgres();
  database = await postgres.createDatabase();
  fixtures = await startFixtureServer();
  filesDir = await tempDir('sa-stopped-nodes-');
  cluster = new ClusterNodes({ database, files: filesDir, leaseSeconds: LEASE_SECONDS });
}, 120_000);

afterAll(async () => {
  fixtures?.release('killer');
  await cluster?.stop();
  await fixtures?.close();
  await postgres?.stop();
  await fs.rm(filesDir, { recursive: true, force: true });
}, 60_000);

describe('a job under way on every node that is killed', () => {
  it(`is taken over ${MAX_RUNS_AFTER_A_STOP} times, then fails saying it stopped the service, and the next job completes`, async () => {
    const db = new pg.Client({ connectionString: database });
    await db.connect();
    try {
      let node = await cluster.start();
      const { key } = await account(node);
      const post = async (body: unknown) => {
        const res = await v1(node, key, 'POST', '/screenshot', body);
        expect(res.status).toBe(201);
        return ((await res.json()) as { job_id: string }).job_id;
      };
      // Its page never ends loading: the job is under way whenever its node is killed.
      const killer = await post({ url: `${fixtures.url}/embed-image.html?src=/held%3Fname%3Dkiller` });
      // Which node runs the job, and how many runs have begun: a node is killed once its run has
      // begun (its start stored), not between its claim and that write, which no run counts.
      const running = async () => {
        const row = (await db.query(`SELECT doc->>'lease_owner' AS owner, doc->>'starts' AS starts FROM jobs WHERE id = $1 AND status = 'processing'`, [killer])).rows[0];
        return row ? `${row.owner} run ${row.starts}` : 'not running';
      };

      for (let run = 1; run <= MAX_RUNS_AFTER_A_STOP + 1; run++) {
        await expect.poll(running, { timeout: 60_000, interval: 100 }).toBe(`${node.name} run ${run}`);
        node.child.kill('SIGKILL');
        await node.exited;
        node = await cluster.start();
      }
      const job = async () => (await admin(node, 'GET', `/jobs/${killer}`)).body as { status: string; error?: string };
      await expect.poll(async () => (await job()).status, { timeout: 30_000, interval: 250 }).toBe('failed');
      expect((await job()).error).toBe(`The service stopped ${MAX_RUNS_AFTER_A_STOP + 1} times while capturing this page; it is not tried again`);

      const next = await post({ url: `${fixtures.url}/small.html?after=killer` });
      await expect.poll(async () => (await admin(node, 'GET', `/jobs/${next}`)).body.status, { timeout: 60_000, interval: 250 }).toBe('completed');
    } finally {
      await db.end();
    }
  }, 300_000);
});
