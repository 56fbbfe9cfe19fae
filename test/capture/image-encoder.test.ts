import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';

import { CaptureError } from '../../server/capture/engine.js';
import { encodeScreenshot } from '../../server/capture/outputs/image-encoder.js';

const WIDTH = 1200;

/** A photograph stand-in: smooth blurred noise with grain, which PNG's row filters suit. */
async function photoLike(height: number): Promise<Buffer> {
  const noise = Buffer.alloc(WIDTH * height * 3);
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff) * 255;
  for (let i = 0; i < noise.length; i++) noise[i] = random();
  const smooth = await sharp(noise, { raw: { width: WIDTH, height, channels: 3 } }).blur(20).normalise().raw().toBuffer();
  for (let i = 0; i < smooth.length; i++) smooth[i] = Math.max(0, Math.min(255, smooth[i]! + ((random() % 9) - 4)));
  return smooth;
}

/** A text page stand-in: white with short dark runs of varying grey, which filters do not help. */
function textLike(height: number): Buffer {
  const pixels = Buffer.alloc(WIDTH * height * 3, 255);
  let seed = 11;
  const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  for (let line = 10; line + 14 < height; line += 24) {
    for (let x = 20; x < WIDTH - 40; x += 7 + Math.floor(random() * 4)) {
      const grey = Math.floor(random() * 180);
      for (let dy = 0; dy < 14; dy++) {
        if (random() < 0.45) continue;
        const offset = ((line + dy) * WIDTH + x) * 3;
        pixels.fill(grey, offset, offset + 3 * (1 + Math.floor(random() * 3)));
      }
    }
  }
  return pixels;
}

/** The quickly compressed PNG Chromium hands over with optimizeForSpeed. */
const fastPng = (raw: Buffer, height: number) =>
  sharp(raw, { raw: { width: WIDTH, height, channels: 3 } }).png({ compressionLevel: 1 }).toBuffer();

const pngWith = (raw: Buffer, height: number, adaptiveFiltering: boolean) =>
  sharp(raw, { raw: { width: WIDTH, height, channels: 3 } }).png({ compressionLevel: 9, adaptiveFiltering }).toBuffer();

describe('encodeScreenshot', () => {
  const images: Record<string, { raw: Buffer; height: number }> = {};
  beforeAll(async () => {
    images.photo = { raw: await photoLike(2000), height: 2000 };
    images.text = { raw: textLike(2000), height: 2000 };
    images.shortPhoto = { raw: await photoLike(300), height: 300 };
  });

  it('keeps every pixel of the screenshot in the PNG it writes', async () => {
    const { raw, height } = images.photo!;
    const encoded = await encodeScreenshot(await fastPng(raw, height), 'png');
    expect([encoded.width, encoded.height]).toEqual([WIDTH, height]);
    const decoded = await sharp(encoded.data).raw().toBuffer();
    expect(decoded.equals(raw)).toBe(true);
  });

  for (const name of ['photo', 'text', 'shortPhoto']) {
    it(`picks the smaller PNG setting for a ${name} image (within 2 %)`, async () => {
      const { raw, height } = images[name]!;
      const encoded = await encodeScreenshot(await fastPng(raw, height), 'png');
      const [plain, filtered] = await Promise.all([pngWith(raw, height, false), pngWith(raw, height, true)]);
      expect(encoded.data.length).toBeLessThanOrEqual(Math.min(plain.length, filtered.length) * 1.02);
    });
  }

  it('writes jpeg and webp at the requested quality', async () => {
    const { raw, height } = images.photo!;
    const png = await fastPng(raw, height);
    const low = await encodeScreenshot(png, 'jpeg', 40);
    const high = await encodeScreenshot(png, 'jpeg', 95);
    expect((await sharp(low.data).metadata()).format).toBe('jpeg');
    expect(high.data.length).toBeGreaterThan(low.data.length);
    const webp = await encodeScreenshot(png, 'webp');
    expect((await sharp(webp.data).metadata()).format).toBe('webp');
    expect([webp.width, webp.height]).toEqual([WIDTH, height]);
  });
});

describe('the longest side a format takes', () => {
  /** A one-colour PNG of that size, as Chromium hands it over. */
  const plain = (width: number, height: number) => sharp({ create: { width, height, channels: 3, background: '#0f0' } }).png({ compressionLevel: 1 }).toBuffer();

  it('fails a JPEG taller than 65,500 pixels before encoding it, saying so', async () => {
    const encoding = encodeScreenshot(await plain(2, 65_501), 'jpeg');
    await expect(encoding).rejects.toBeInstanceOf(CaptureError);
    await expect(encoding).rejects.toThrow('The picture is 2 × 65501 pixels: a JPEG image is at most 65500 pixels a side; capture a smaller part, or use png');
  });

  it('fails a WebP wider than 16,383 pixels before encoding it, saying so', async () => {
    await expect(encodeScreenshot(await plain(16_384, 2), 'webp')).rejects.toThrow('a WebP image is at most 16383 pixels a side');
  });

  it('encodes a JPEG 65,500 pixels tall', async () => {
    const encoded = await encodeScreenshot(await plain(2, 65_500), 'jpeg');
    expect([encoded.width, encoded.height]).toEqual([2, 65_500]);
  });
});
