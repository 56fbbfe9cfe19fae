import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { MAX_CAPTURE_PIXELS } from '../../server/capture/pipeline/capture-clip.js';
import { type FixtureServer, startFixtureServer } from '../fixtures/fixture-server.js';
import { startTestServer, type TestServer, waitForJob } from '../helpers/test-server.js';

// image_width / image_height (the picture resized after the capture) and omit_background (a
// transparent background where the page paints none), through the API on a real server and
// real Chromium, checked on the pixels of the image served. /opt/colors.html has no background
// of its own and a red 200×100 block at its top left corner.

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

async function post(body: Record<string, unknown>): Promise<Response> {
  for (;;) {
    const res = await server.v1('POST', '/screenshot', key, { url: `${fixtures.url}/opt/colors.html`, ...body });
    if (res.status !== 429) return res;
    await new Promise((resolve) => setTimeout(resolve, Number(res.headers.get('retry-after') ?? 1) * 1000));
  }
}

/** The completed job's image, decoded to RGBA. */
async function captured(body: Record<string, unknown>): Promise<{ jobId: string; width: number; height: number; rgba: (x: number, y: number) => number[]; format?: string }> {
  const res = await post(body);
  expect(res.status).toBe(201);
  const { job_id: jobId } = (await res.json()) as { job_id: string };
  const job = await waitForJob(server, key, jobId);
  expect(job).toMatchObject({ status: 'completed' });
  const image = Buffer.from(await (await fetch(job.screenshot_url)).arrayBuffer());
  const { format } = await sharp(image).metadata();
  const { data, info } = await sharp(image).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const rgba = (x: number, y: number) => [...data.subarray((y * info.width + x) * 4, (y * info.width + x) * 4 + 4)];
  return { jobId, width: info.width, height: info.height, rgba, format };
}

const near = (actual: number[], expected: number[]) => actual.every((c, i) => Math.abs(c - expected[i]!) <= 8);

describe('image_width, image_height and omit_background', () => {
  const refusals: Array<[string, Record<string, unknown>, string]> = [
    ['image_width below 16', { image_width: 15 }, 'image_width'],
    ['image_width above 3840', { image_width: 3841 }, 'image_width'],
    ['image_height below 16', { image_height: 0 }, 'image_height'],
    ['a fractional image_height', { image_height: 100.5 }, 'image_height'],
    ['image_width given as text', { image_width: '300' }, 'image_width'],
    ['image_width with format pdf', { image_width: 300, format: 'pdf' }, 'image_width'],
    ['image_height with format pdf', { image_height: 300, format: 'pdf' }, 'image_height'],
    ['omit_background with format jpeg', { omit_background: true, format: 'jpeg' }, 'omit_background'],
    ['omit_background with format pdf', { omit_background: true, format: 'pdf' }, 'omit_background'],
    ['omit_background given as text', { omit_background: 'true' }, 'omit_background'],
  ];
  for (const [what, body, field] of refusals) {
    it(`answers 400 naming ${field} for ${what}`, async () => {
      const res = await post(body);
      expect(res.status).toBe(400);
      const answer = (await res.json()) as { error: string; message: string };
      expect(answer.error).toBe('Bad request');
      expect(answer.message).toContain(field);
    });
  }

  it('resizes to image_width, the height following the aspect ratio; the admin API shows the option', async () => {
    const shot = await captured({ image_width: 480 });
    // 1920×1080 → 480×270; the red block (200×100 CSS px) is a quarter as large.
    expect([shot.width, shot.height]).toEqual([480, 270]);
    expect(near(shot.rgba(20, 10), [255, 0, 0, 255])).toBe(true);
    expect(near(shot.rgba(60, 10), [255, 255, 255, 255])).toBe(true);
    const admin = await server.admin('GET', `/jobs/${shot.jobId}`);
    expect(admin.body.options).toEqual({ image_width: 480 });
  }, 60_000);

  it('resizes to image_height in webp and jpeg, the width following', async () => {
    for (const format of ['webp', 'jpeg']) {
      const shot = await captured({ image_height: 540, format });
      expect([shot.width, shot.height, shot.format]).toEqual([960, 540, format]);
    }
  }, 60_000);

  it('fits the picture inside image_width × image_height, centred, margins transparent in png and white in jpeg', async () => {
    const png = await captured({ image_width: 400, image_height: 400 });
    expect([png.width, png.height]).toEqual([400, 400]);
    // 1920×1080 fitted in 400×400 is 400×225, from y 87 (or 88) to 312.
    expect(png.rgba(200, 40)[3]).toBe(0);
    expect(png.rgba(200, 360)[3]).toBe(0);
    expect(near(png.rgba(10, 95), [255, 0, 0, 255])).toBe(true);
    expect(near(png.rgba(200, 200), [255, 255, 255, 255])).toBe(true);
    const jpeg = await captured({ image_width: 400, image_height: 400, format: 'jpeg' });
    expect([jpeg.width, jpeg.height]).toEqual([400, 400]);
    expect(near(jpeg.rgba(200, 40), [255, 255, 255, 255])).toBe(true);
  }, 60_000);

  it('omit_background leaves alpha 0 where the page paints nothing and 255 where it paints, in png and webp', async () => {
    for (const format of ['png', 'webp']) {
      const shot = await captured({ omit_background: true, format });
      expect([shot.width, shot.height]).toEqual([1920, 1080]);
      expect(shot.rgba(1000, 500)[3]).toBe(0);
      expect(near(shot.rgba(50, 50), [255, 0, 0, 255])).toBe(true);
    }
  }, 60_000);

  it('without omit_background the page is opaque white where it paints nothing', async () => {
    const shot = await captured({});
    expect(shot.rgba(1000, 500)).toEqual([255, 255, 255, 255]);
  }, 60_000);

  it('omit_background and a size together: a transparent, resized png', async () => {
    const shot = await captured({ omit_background: true, image_width: 960 });
    expect([shot.width, shot.height]).toEqual([960, 540]);
    expect(shot.rgba(500, 250)[3]).toBe(0);
    expect(near(shot.rgba(25, 25), [255, 0, 0, 255])).toBe(true);
  }, 60_000);

  it('resizes a 30,000 × 10 px element asked 600 px tall within the image bound, in seconds, the server growing by less than a gigabyte', async () => {
    // Asked as it is, the picture would be 1,800,000 × 600 pixels (1.08 G).
    const before = process.memoryUsage.rss();
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage.rss());
    }, 50);
    const started = Date.now();
    try {
      const shot = await captured({ url: `${fixtures.url}/opt/wide.html?w=30000&h=10`, selector: '#wide', image_height: 600 });
      const ms = Date.now() - started;
      console.log(`${shot.width} x ${shot.height} in ${ms} ms, resident memory +${Math.round((peak - before) / 2 ** 20)} MiB`);
      // Scaled down, keeping the element's aspect ratio, to fit what the bound keeps: 250,000 × 83.
      expect([shot.width, shot.height]).toEqual([250_000, 83]);
      expect(shot.width * shot.height).toBeLessThanOrEqual(MAX_CAPTURE_PIXELS);
      expect(ms).toBeLessThan(25_000);
      expect(peak - before).toBeLessThan(2 ** 30);
    } finally {
      clearInterval(sampler);
    }
  }, 90_000);
});
