import crypto from 'node:crypto';

import type { CaptureRequest, CaptureResult } from '../server/capture/engine.js';
import { capturedPage, FakeCaptureEngine } from '../test/helpers/fake-capture-engine.js';
import { startTestServer } from '../test/helpers/test-server.js';

/**
 * The memory a batch's archive costs the server: a batch of 300 captures, each image 1 MiB (made
 * by a scripted engine, so no browser runs), then GET /v1/batches/{id}/archive read to its end
 * by a client in the same process that keeps none of it. The process's RSS is sampled every
 * 20 ms while the archive streams; an archive built in memory would add its whole size.
 *
 *   npm run bench:batches
 */
const ITEMS = Number(process.env.BATCH_BENCH_ITEMS ?? 300);
const IMAGE_BYTES = Number(process.env.BATCH_BENCH_IMAGE_BYTES ?? 1024 * 1024);
const MiB = 1024 * 1024;

/** Each capture a fresh image of IMAGE_BYTES random bytes (incompressible, as pictures are). */
class LargeImageEngine extends FakeCaptureEngine {
  override capture(_request: CaptureRequest): Promise<CaptureResult> {
    return Promise.resolve(capturedPage({ image: crypto.randomBytes(IMAGE_BYTES) }));
  }
}

const rss = () => process.memoryUsage().rss;
const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);

async function main(): Promise<void> {
  const server = await startTestServer({ concurrency: 4, browsers: 1, ratePerSecond: 10_000 }, { engine: new LargeImageEngine() });
  try {
    const { key } = await server.account();
    const items = Array.from({ length: ITEMS }, (_, i) => ({ url: `http://127.0.0.1:9/page/${i}` }));
    const created = await (await server.v1('POST', '/batches', key, { items })).json();
    for (;;) {
      const batch = await (await server.v1('GET', `/batches/${created.batch_id}`, key)).json();
      if (batch.status === 'completed') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    gc();
    const before = rss();
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rss())), 20);
    const started = performance.now();
    const res = await server.v1('GET', `/batches/${created.batch_id}/archive`, key);
    let bytes = 0;
    for await (const chunk of res.body!) bytes += (chunk as Uint8Array).length;
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    peak = Math.max(peak, rss());
    console.log(`batch of ${ITEMS} images of ${(IMAGE_BYTES / MiB).toFixed(1)} MiB: archive ${(bytes / MiB).toFixed(1)} MiB streamed in ${seconds.toFixed(1)} s`);
    console.log(`RSS before ${(before / MiB).toFixed(0)} MiB, peak while streaming ${(peak / MiB).toFixed(0)} MiB: +${((peak - before) / MiB).toFixed(0)} MiB (${(((peak - before) / bytes) * 100).toFixed(1)}% of the archive)`);
  } finally {
    await server.close();
  }
}

await main();
