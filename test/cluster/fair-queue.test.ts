import fs from 'node:fs/promises';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startPostgres, type TestPostgres } from '../helpers/postgres.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/test-server.js';

// Two nodes on one database: an account's share of the queue is counted in the database, so
// requests spread over both nodes are admitted up to the share and no further.

/** Queue room 20, so one account's share (half, the default) is 10 jobs. */
const QUEUE_LIMIT = 20;
const SHARE = 10;
/** Denied by the egress policy (the nodes allow 127.0.0.1 only); these jobs never run anyway: the queues are paused. */
const DENIED = 'http://127.0.0.2:1';

let postgres: TestPostgres;
let filesDir: string;
let nodes: TestServer[] = [];

beforeAll(async () => {
  postgres = await startPostgres();
  filesDir = await tempDir('sa-fair-files-');
  const databaseUrl = await postgres.createDatabase();
  for (let i = 0; i < 2; i++) {
    nodes.push(await startTestServer({ databaseUrl, filesDir, browsers: 1, queueLimit: QUEUE_LIMIT, ratePerSecond: 10_000 }));
  }
  // Nothing is claimed: the jobs stay waiting in the database.
  for (const node of nodes) node.srv.services.queue.pause();
}, 120_000);

afterAll(async () => {
  for (const node of nodes) await node.close();
  nodes = [];
  await postgres?.stop();
  if (filesDir) await fs.rm(filesDir, { recursive: true, force: true });
});

describe('the fair queue of a cluster', () => {
  it("admits one account's requests spread over two nodes up to its share, and another account's after it", async () => {
    const a = await nodes[0].account();
    const b = await nodes[0].account();
    const answers = await Promise.all(
      Array.from({ length: SHARE + 6 }, (_, i) => nodes[i % 2].v1('POST', '/screenshot', a.key, { url: `${DENIED}/a${i}` })),
    );
    const statuses = answers.map((res) => res.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(SHARE);
    expect(statuses.filter((s) => s === 503)).toHaveLength(6);
    const refused = answers.find((res) => res.status === 503)!;
    expect((await refused.json()).message).toMatch(/^This account has \d+ jobs waiting or running, its share of the capture queue \(10 of 20 jobs\)/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const estimates = await Promise.all(answers.filter((res) => res.status === 201).map(async (res) => (await res.json()).estimated_time_seconds as number));

    // B is still admitted, and its one job waits behind A's first only (its turn is A's first's).
    const single = await nodes[1].v1('POST', '/screenshot', b.key, { url: `${DENIED}/b` });
    expect(single.status).toBe(201);
    expect((await single.json()).estimated_time_seconds).toBeLessThan(Math.max(...estimates));
    const jobs = nodes[0].srv.services.stores.jobs;
    expect(await jobs.count({ account_id: a.accountId, status: ['pending'] })).toBe(SHARE);
    const waiting = await jobs.unfinished();
    const bJob = waiting.find((job) => job.account_id === b.accountId)!;
    expect(await jobs.countAhead(bJob)).toBe(1);
  }, 120_000);
});
