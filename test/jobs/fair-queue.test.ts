import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type FixtureServer, startFixtureServer } from '../fixtures/fixture-server.js';
import { startTestServer, type TestServer, waitForJob } from '../helpers/test-server.js';

/** Queue room 20, so one account's share (half, the default) is 10 jobs. */
const QUEUE_LIMIT = 20;
const SHARE = 10;

let fixtures: FixtureServer;
let server: TestServer;

beforeAll(async () => {
  fixtures = await startFixtureServer();
  // One capture slot, so the order the jobs run in is the order of the queue.
  server = await startTestServer({ concurrency: 1, browsers: 1, queueLimit: QUEUE_LIMIT, ratePerSecond: 10_000 });
});
afterAll(async () => {
  await server?.close();
  await fixtures?.close();
});

/** A page whose load waits 1.5 s for an image: each of its jobs holds the slot that long. */
const slowPage = (i: number) => `${fixtures.url}/embed-image.html?src=${encodeURIComponent(`/slow?ms=1500&i=${i}`)}`;
/** Denied by the egress policy (the test server allows 127.0.0.1 only): such a job fails as soon as it runs. */
const DENIED = 'http://127.0.0.2:1';
const post = (key: string, url: string) => server.v1('POST', '/screenshot', key, { url, width: 320, height: 240 });

describe('one account flooding the queue', () => {
  it("gets its own 503 with Retry-After past its share, while another account's job is still admitted", async () => {
    server.srv.services.queue.pause();
    try {
      const a = await server.account();
      const b = await server.account();
      // The queue is paused, so any job holds its place: these fail at once when it runs (127.0.0.2 is
      // denied), so the queue runs out quickly after.
      for (let i = 0; i < SHARE; i++) expect((await post(a.key, `${DENIED}/a${i}`)).status).toBe(201);
      const refused = await post(a.key, `${DENIED}/a${SHARE}`);
      expect(refused.status).toBe(503);
      expect(await refused.json()).toEqual({
        error: 'Service unavailable',
        message: expect.stringMatching(new RegExp(`^This account has ${SHARE} jobs waiting or running, its share of the capture queue \\(${SHARE} of ${QUEUE_LIMIT} jobs\\)`)),
      });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect((await post(b.key, `${DENIED}/b`)).status).toBe(201);
      // Only the whole queue being full refuses everyone, and says so.
      const c = await server.account();
      for (let i = 0; i < QUEUE_LIMIT - SHARE - 1; i++) expect((await post(c.key, `${DENIED}/c${i}`)).status).toBe(201);
      const full = await post(b.key, `${DENIED}/b`);
      expect(full.status).toBe(503);
      expect((await full.json()).message).toMatch(/^The capture queue is full/);
    } finally {
      server.srv.services.queue.resume();
    }
    // What was queued here runs out before the next case.
    await waitForQueue(server);
  }, 120_000);

  it("runs another account's single job within one slot's turn, done while the flood still waits, as its estimate said", async () => {
    const a = await server.account();
    const b = await server.account();
    server.srv.services.queue.pause();
    let flood: Array<{ job_id: string; estimated_time_seconds: number }>;
    let single: { job_id: string; estimated_time_seconds: number };
    try {
      flood = [];
      for (let i = 0; i < SHARE; i++) flood.push(await (await post(a.key, slowPage(100 + i))).json());
      single = await (await post(b.key, `${fixtures.url}/small.html`)).json();
    } finally {
      server.srv.services.queue.resume();
    }
    // Ahead of B's job is A's oldest only, as ahead of A's second: the estimate follows the fair order.
    expect(single.estimated_time_seconds).toBe(flood[1].estimated_time_seconds);
    expect(single.estimated_time_seconds).toBeLessThan(flood[SHARE - 1].estimated_time_seconds);

    const done = await waitForJob(server, b.key, single.job_id, 60_000);
    expect(done.status).toBe('completed');
    const jobs = server.srv.services.stores.jobs;
    const ended = (await jobs.get(single.job_id))!;
    const floodJobs = await Promise.all(flood.map((f) => jobs.get(f.job_id)));
    // One slot: at most A's one job in it when B queued (here: the first, once resumed) starts before B's.
    const startedBefore = floodJobs.filter((j) => j!.started_at !== null && j!.started_at < ended.started_at!);
    expect(startedBefore.map((j) => j!._id)).toEqual([flood[0].job_id]);
    // And B's job ended while most of A's were still waiting.
    const waitingAtEnd = floodJobs.filter((j) => j!.started_at === null || j!.started_at >= ended.completed_at!);
    expect(waitingAtEnd.length).toBeGreaterThanOrEqual(SHARE - 2);
  }, 120_000);
});

describe('the fair order across a restart', () => {
  it('runs the jobs re-queued at start in their turns, not first come first served', async () => {
    const first = await startTestServer({ concurrency: 1, browsers: 1, ratePerSecond: 10_000 });
    const dataDir = first.dataDir;
    first.srv.services.queue.pause();
    const a = await first.account();
    const b = await first.account();
    const flood: string[] = [];
    for (let i = 0; i < 4; i++) flood.push((await (await first.v1('POST', '/screenshot', a.key, { url: `${fixtures.url}/small.html?r=${i}`, width: 320, height: 240 })).json()).job_id);
    const single = (await (await first.v1('POST', '/screenshot', b.key, { url: `${fixtures.url}/small.html?r=b`, width: 320, height: 240 })).json()).job_id;
    // Stopped with every job still waiting; the directory stays for the next start.
    await first.srv.close();

    const second = await startTestServer({ dataDir, concurrency: 1, browsers: 1, ratePerSecond: 10_000 });
    try {
      const ended = await waitForJob(second, b.key, single, 60_000);
      expect(ended.status).toBe('completed');
      for (const id of flood) await waitForJob(second, a.key, id, 60_000);
      const jobs = second.srv.services.stores.jobs;
      const started = await Promise.all([...flood, single].map(async (id) => ({ id, at: (await jobs.get(id))!.started_at! })));
      const order = started.sort((x, y) => x.at - y.at).map((j) => j.id);
      // A's oldest first (turn 0, queued before B's), then B's (turn 0), then the rest of A's.
      expect(order).toEqual([flood[0], single, ...flood.slice(1)]);
    } finally {
      await second.close();
    }
  }, 120_000);
});

/** Until no job waits or runs. */
async function waitForQueue(s: TestServer): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (s.srv.services.queue.stats().pending + s.srv.services.queue.stats().running > 0) {
    if (Date.now() > deadline) throw new Error('the queue did not drain');
    await new Promise((r) => setTimeout(r, 200));
  }
}
