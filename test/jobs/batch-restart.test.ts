import { afterAll, describe, expect, it } from 'vitest';

import { FakeCaptureEngine } from '../helpers/fake-capture-engine.js';
import { startTestServer, tempDir, type TestServer } from '../helpers/test-server.js';

// A batch across a stop and a start of the service on one data directory, with a scripted engine.

let second: TestServer | undefined;
afterAll(async () => {
  await second?.close();
});

describe('a batch across a restart', () => {
  it('is fed on from where it was by the next start, and completes', async () => {
    const dataDir = await tempDir();
    const first = await startTestServer({ dataDir, concurrency: 1, browsers: 1, ratePerSecond: 1000 }, { engine: new FakeCaptureEngine() });
    const { key } = await first.account();
    first.srv.services.queue.pause();
    const items = Array.from({ length: 12 }, (_, i) => ({ url: `http://127.0.0.1:9/r/${i}` }));
    const { batch_id: id } = await (await first.v1('POST', '/batches', key, { items })).json();
    expect((await (await first.v1('GET', `/batches/${id}`, key)).json()).jobs).toHaveLength(2);
    await first.srv.close();

    const engine = new FakeCaptureEngine();
    second = await startTestServer({ dataDir, concurrency: 1, browsers: 1, ratePerSecond: 1000 }, { engine });
    await expect.poll(async () => (await (await second!.v1('GET', `/batches/${id}`, key)).json()).status).toBe('completed');
    const batch = await (await second.v1('GET', `/batches/${id}`, key)).json();
    expect(batch.counts).toEqual({ pending: 0, processing: 0, completed: 12, failed: 0 });
    expect(engine.requests.map((r) => r.url)).toEqual(items.map((item) => item.url));
  });
});
