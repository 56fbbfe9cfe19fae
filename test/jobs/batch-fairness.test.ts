import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { FakeCaptureEngine } from '../helpers/fake-capture-engine.js';
import { startTestServer, type TestServer, waitForJob } from '../helpers/test-server.js';

// A batch in the fair queue, on a real server and store with a scripted engine at the capture
// seam: the order jobs start in is what is measured, and a fake capture takes no time.

/** Queue room 20, so one account's share (half, the default) is 10 jobs. */
const QUEUE_LIMIT = 20;

let server: TestServer;
/** The first two captures wait for release(); every later one is a page captured at once. */
const engine = new FakeCaptureEngine('held', 'held');

beforeAll(async () => {
  // One capture slot, so the order the jobs run in is the order of the queue.
  server = await startTestServer({ concurrency: 1, browsers: 1, queueLimit: QUEUE_LIMIT, ratePerSecond: 10_000 }, { engine });
});
afterAll(async () => {
  await server?.close();
});

describe('a batch in the fair queue', () => {
  it("admits a batch of 200, ten times its account's share, and lets another account's single job start within one job's turn", async () => {
    const a = await server.account();
    const b = await server.account();
    const items = Array.from({ length: 200 }, (_, i) => ({ url: `http://127.0.0.1:9/a/${i}` }));
    const res = await server.v1('POST', '/batches', a.key, { items });
    expect(res.status).toBe(201);
    const { batch_id: id } = await res.json();
    await expect.poll(() => engine.holding()).toBe(1);
    // The batch holds only a few places: its account may still queue its own single jobs.
    expect(server.srv.services.queue.accountDepth(a.accountId)).toBeLessThanOrEqual(2);
    const single = await server.v1('POST', '/screenshot', b.key, { url: 'http://127.0.0.1:9/b' });
    expect(single.status).toBe(201);
    const { job_id: jobId } = await single.json();
    engine.release();
    // The next capture to start is B's: behind the one of A's that was running, ahead of A's 199 others.
    await expect.poll(() => engine.requests.length).toBe(2);
    expect(engine.requests.map((r) => r.url)).toEqual(['http://127.0.0.1:9/a/0', 'http://127.0.0.1:9/b']);
    engine.release();
    expect((await waitForJob(server, b.key, jobId)).status).toBe('completed');
    await expect.poll(async () => (await (await server.v1('GET', `/batches/${id}`, a.key)).json()).status, { timeout: 60_000 }).toBe('completed');
    const done = await (await server.v1('GET', `/batches/${id}?per_page=1000`, a.key)).json();
    expect(done.counts).toEqual({ pending: 0, processing: 0, completed: 200, failed: 0 });
    expect(done.jobs).toHaveLength(200);
    // A's items ran in their order.
    expect(engine.requests.filter((r) => r.url.includes('/a/')).map((r) => r.url)).toEqual(items.map((item) => item.url));
  });
});
