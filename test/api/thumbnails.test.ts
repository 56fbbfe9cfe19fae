import fs from 'node:fs';

import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type FixtureServer, startFixtureServer } from '../fixtures/fixture-server.js';
import { startTestServer, type TestServer, waitForJob } from '../helpers/test-server.js';

// The job list's thumbnails: small WebPs made when a capture is stored (or from the image when
// first asked for), served under the image's capability name.

let fixtures: FixtureServer;
let server: TestServer;
let key: string;

beforeAll(async () => {
  fixtures = await startFixtureServer();
  server = await startTestServer();
  ({ key } = await server.account());
}, 60_000);

afterAll(async () => {
  await server?.close();
  await fixtures?.close();
});

async function capture(body: Record<string, unknown>): Promise<Array<{ job_id: string }>> {
  const res = await server.v1('POST', '/screenshot', key, body);
  expect(res.status).toBe(201);
  const created = (await res.json()) as { jobs: Array<{ job_id: string }> };
  await Promise.all(created.jobs.map((j) => waitForJob(server, key, j.job_id)));
  return created.jobs;
}

describe('thumbnails', () => {
  it('are 320 px wide WebPs small enough for 50 list rows to stay under 1 MB, for every device and full pages', async () => {
    await capture({ url: `${fixtures.url}/tall.html?h=6000`, devices: ['all'], full_page: true });
    await capture({ url: `${fixtures.url}/images.html?n=40`, devices: ['desktop'] });
    const list = await server.admin('GET', '/jobs?limit=50');
    const completed = (list.body.jobs as Array<{ status: string; thumbnail_url?: string; screenshot_url: string }>).filter((j) => j.status === 'completed');
    expect(completed.length).toBe(4);
    let largest = 0;
    for (const job of completed) {
      expect(job.thumbnail_url).toBe(`${job.screenshot_url}/thumbnail`);
      const res = await fetch(job.thumbnail_url!);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/webp');
      const bytes = Buffer.from(await res.arrayBuffer());
      const meta = await sharp(bytes).metadata();
      expect(meta.format).toBe('webp');
      expect(meta.width).toBe(320);
      expect(meta.height).toBeLessThanOrEqual(480);
      largest = Math.max(largest, bytes.length);
    }
    // The panel's list shows at most 50 rows.
    expect(largest * 50).toBeLessThan(1_000_000);
  });

  it('are made from the image for jobs stored without one', async () => {
    const [job] = await capture({ url: `${fixtures.url}/small.html` });
    const admin = await server.admin('GET', `/jobs/${job!.job_id}`);
    const name = new URL(admin.body.screenshot_url as string).pathname.split('/').pop()!;
    const file = `${server.dataDir}/thumbnails/${name.replace(/\.png$/, '.webp')}`;
    expect(fs.existsSync(file)).toBe(true);
    fs.rmSync(file);
    const res = await fetch(admin.body.thumbnail_url as string);
    expect(res.status).toBe(200);
    expect((await sharp(Buffer.from(await res.arrayBuffer())).metadata()).width).toBe(320);
    expect(fs.existsSync(file), 'kept for the next time').toBe(true);
  });

  it('do not exist for a PDF or an unknown name', async () => {
    const [job] = await capture({ url: `${fixtures.url}/small.html`, format: 'pdf' });
    const admin = await server.admin('GET', `/jobs/${job!.job_id}`);
    expect(admin.body.thumbnail_url).toBeUndefined();
    expect((await fetch(`${admin.body.screenshot_url as string}/thumbnail`)).status).toBe(404);
    expect((await fetch(`${server.url}/v1/files/${'a'.repeat(24)}.png/thumbnail`)).status).toBe(404);
  });
});
