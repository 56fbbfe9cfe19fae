// image_width / image_height resize a picture after its capture (image-size.ts): the size it is
// resized to is bounded as every picture's is (bitmapSize()), the work is not started after the
// capture's deadline and is stopped at it, on real pictures encoded by sharp.
import { performance } from 'node:perf_hooks';

import sharp from 'sharp';
import { describe, expect, it } from 'vitest';

import type { CaptureOptions } from '../../server/capture/capture-options.js';
import { CaptureError, type ImageFormat } from '../../server/capture/engine.js';
import { resizedSize, resizeImage } from '../../server/capture/options/image-size.js';
import type { EncodedImage } from '../../server/capture/outputs/image-encoder.js';
import { MAX_CAPTURE_PIXELS } from '../../server/capture/pipeline/capture-clip.js';

/** A picture of that size, green with a red left half, as the capture hands it to the resize (encoded as `format`). */
async function picture(width: number, height: number, format: ImageFormat = 'png'): Promise<EncodedImage> {
  const red = await sharp({ create: { width: Math.ceil(width / 2), height, channels: 3, background: '#f00' } }).png().toBuffer();
  const image = sharp({ create: { width, height, channels: 3, background: '#0f0' } }).composite([{ input: red, left: 0, top: 0 }]);
  const data = await (format === 'png' ? image.png({ compressionLevel: 1 }) : format === 'jpeg' ? image.jpeg() : image.webp()).toBuffer();
  return { data, width, height };
}

/** Runs `work` while sampling the process's resident memory; gives its result, the time it took and the largest growth seen. */
async function measured<T>(work: () => Promise<T>): Promise<{ value: T; ms: number; rssGrowth: number }> {
  const before = process.memoryUsage.rss();
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 20);
  const started = performance.now();
  try {
    const value = await work();
    peak = Math.max(peak, process.memoryUsage.rss());
    return { value, ms: performance.now() - started, rssGrowth: peak - before };
  } finally {
    clearInterval(sampler);
  }
}

const inAMinute = () => Date.now() + 60_000;
const GiB = 2 ** 30;

describe('the size of a resized picture', () => {
  it('follows the aspect ratio from the side asked, and is the box when both are', () => {
    expect(resizedSize({ width: 1920, height: 1080 }, { width: 480 }, 'png')).toEqual({ width: 480, height: 270 });
    expect(resizedSize({ width: 1920, height: 1080 }, { height: 540 }, 'jpeg')).toEqual({ width: 960, height: 540 });
    expect(resizedSize({ width: 1920, height: 1080 }, { width: 400, height: 400 }, 'webp')).toEqual({ width: 400, height: 400 });
  });

  it('scales a 30,000 × 10 picture asked 600 px tall (1,800,000 × 600) down to what the bound keeps, keeping its aspect ratio', () => {
    const png = resizedSize({ width: 30_000, height: 10 }, { height: 600 }, 'png');
    expect(png).toEqual({ width: 250_000, height: 83 });
    expect(png.width * png.height).toBeLessThanOrEqual(MAX_CAPTURE_PIXELS);
    expect(resizedSize({ width: 30_000, height: 10 }, { height: 600 }, 'jpeg')).toEqual({ width: 65_500, height: 21 });
    expect(resizedSize({ width: 30_000, height: 10 }, { height: 600 }, 'webp')).toEqual({ width: 16_383, height: 5 });
    // A tall, thin picture asked wide: 3840 × 4,608,000 would pass every bound.
    const tall = resizedSize({ width: 10, height: 12_000 }, { width: 3840 }, 'png');
    expect(tall.height).toBeLessThanOrEqual(1 << 18);
    expect(tall.width * tall.height).toBeLessThanOrEqual(MAX_CAPTURE_PIXELS);
    expect(tall.height / tall.width).toBeCloseTo(1200, -2);
  });
});

describe('resizeImage', () => {
  const asked = (options: CaptureOptions) => options;

  it('resizes a 30,000 × 10 picture asked 600 px tall within the bound, in seconds, without the process growing by a gigabyte', async () => {
    // The element as each format captures it: a WebP is cut at 16383 pixels wide.
    for (const [format, width] of [['png', 30_000], ['jpeg', 30_000], ['webp', 16_383]] as const) {
      const image = await picture(width, 10, format);
      const { value: resized, ms, rssGrowth } = await measured(() => resizeImage(image, format, undefined, asked({ imageHeight: 600 }), inAMinute()));
      console.log(`${format}: ${resized.width} x ${resized.height} in ${Math.round(ms)} ms, resident memory +${Math.round(rssGrowth / 2 ** 20)} MiB`);
      expect(resized.width * resized.height).toBeLessThanOrEqual(MAX_CAPTURE_PIXELS);
      expect(resized).toMatchObject(resizedSize(image, { height: 600 }, format));
      const meta = await sharp(resized.data, { limitInputPixels: false }).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual([format, resized.width, resized.height]);
      expect(ms).toBeLessThan(15_000);
      expect(rssGrowth).toBeLessThan(GiB);
    }
  }, 120_000);

  it('does not start once the capture deadline has passed', async () => {
    const image = await picture(2000, 2000);
    const started = performance.now();
    await expect(resizeImage(image, 'png', undefined, asked({ imageWidth: 3840 }), Date.now() - 1)).rejects.toThrow(CaptureError);
    expect(performance.now() - started).toBeLessThan(200);
  });

  it('stops a resize still running at the capture deadline', async () => {
    // 2000 × 12,000 asked 3840 wide: 3840 × 23,040 pixels, ten seconds and more of work here.
    const image = await picture(2000, 12_000);
    const started = performance.now();
    await expect(resizeImage(image, 'png', undefined, asked({ imageWidth: 3840 }), Date.now() + 1000)).rejects.toThrow(/timeout/);
    expect(performance.now() - started).toBeLessThan(3000);
  }, 60_000);
});
