import fs from 'node:fs/promises';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type FixtureServer, startFixtureServer } from '../fixtures/fixture-server.js';
import { startTestServer, type TestServer, waitForJob } from '../helpers/test-server.js';

// Byte ranges of screenshot_url with the files in a directory (test/api/s3-files.test.ts does
// the same over object storage).

let fixtures: FixtureServer;
let server: TestServer;
let screenshotUrl: string;
let stored: Buffer;

beforeAll(async () => {
  fixtures = await startFixtureServer();
  server = await startTestServer({ browsers: 1 });
  const { key } = await server.account();
  const res = await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/small.html` });
  const job = await waitForJob(server, key, ((await res.json()) as { job_id: string }).job_id);
  screenshotUrl = job.screenshot_url;
  stored = await fs.readFile(path.join(server.dataDir, 'files', new URL(screenshotUrl).pathname.split('/').pop()!));
}, 60_000);

afterAll(async () => {
  await server?.close();
  await fixtures?.close();
});

describe('screenshot_url with the files in a directory', () => {
  it('says it takes byte ranges and answers one with 206 and its Content-Range', async () => {
    const whole = await fetch(screenshotUrl);
    expect(whole.headers.get('accept-ranges')).toBe('bytes');
    expect(Buffer.from(await whole.arrayBuffer())).toEqual(stored);
    for (const [range, start, end] of [
      ['bytes=0-99', 0, 99],
      ['bytes=100-', 100, stored.length - 1],
      ['bytes=-7', stored.length - 7, stored.length - 1],
      [`bytes=10-${stored.length + 500}`, 10, stored.length - 1],
    ] as const) {
      const res = await fetch(screenshotUrl, { headers: { range } });
      expect(res.status, range).toBe(206);
      expect(res.headers.get('content-range'), range).toBe(`bytes ${start}-${end}/${stored.length}`);
      expect(Number(res.headers.get('content-length')), range).toBe(end - start + 1);
      expect(Buffer.from(await res.arrayBuffer()), range).toEqual(stored.subarray(start, end + 1));
    }
  });

  it('answers 416 for a range past the end, and the whole image for ranges it does not take', async () => {
    for (const range of [`bytes=${stored.length}-`, 'bytes=-0']) {
      const res = await fetch(screenshotUrl, { headers: { range } });
      expect(res.status, range).toBe(416);
      expect(res.headers.get('content-range'), range).toBe(`bytes */${stored.length}`);
    }
    for (const range of ['bytes=0-1,5-9', 'items=0-1', 'bytes=9-2', 'bytes=x-']) {
      const res = await fetch(screenshotUrl, { headers: { range } });
      expect(res.status, range).toBe(200);
      expect(Buffer.from(await res.arrayBuffer()), range).toEqual(stored);
    }
  });

  it('answers 304 for its ETag before looking at a range', async () => {
    const etag = (await fetch(screenshotUrl)).headers.get('etag')!;
    expect((await fetch(screenshotUrl, { headers: { 'if-none-match': etag, range: 'bytes=0-9' } })).status).toBe(304);
  });
});
