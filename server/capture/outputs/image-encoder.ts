import sharp from 'sharp';

import type { ImageFormat } from '../engine.js';

/** Quality for jpeg and webp when the request names none (CaptureRequest's default). */
export const DEFAULT_QUALITY = 80;

export interface EncodedImage {
  data: Buffer;
  /** Size in device pixels, as encoded. */
  width: number;
  height: number;
}

type PngOptions = sharp.PngOptions;

// Screenshots split into two kinds: text and flat gradients compress best unfiltered at zlib's
// top level, photographs and large flat areas with PNG's per-row adaptive filters. Neither
// setting alone stays below Chromium's own PNG size on every page (measured: 0.81–1.31 of it),
// so a sample of rows decides, and the winner encodes the whole image at zlib level 9 (lower
// levels came out larger than Chromium's PNG on some pages). The sample is compressed at level
// 1: it picks the same winner as level 9 on every page we measured, at a fraction of the cost.
const PNG_CANDIDATES: PngOptions[] = [{ adaptiveFiltering: false }, { adaptiveFiltering: true }];
const FINAL_LEVEL = 9;
const SAMPLE_LEVEL = 1;
const SAMPLE_STRIPS = 8;
const SAMPLE_STRIP_ROWS = 24;

/**
 * Re-encodes a screenshot taken as a quickly compressed PNG (CDP `optimizeForSpeed`) into
 * `format`. The work runs on libvips threads, off the browser's single encoding thread and off
 * the event loop. PNG keeps the exact pixels and comes out smaller than Chromium's own PNG.
 */
export async function encodeScreenshot(fastPng: Buffer, format: ImageFormat, quality = DEFAULT_QUALITY): Promise<EncodedImage> {
  const input = sharp(fastPng, { limitInputPixels: false });
  if (format === 'jpeg') return finish(input.jpeg({ quality }));
  if (format === 'webp') return finish(input.webp({ quality }));
  const { data, info } = await input.raw().toBuffer({ resolveWithObject: true });
  const raw = { width: info.width, height: info.height, channels: info.channels };
  const rowBytes = raw.width * raw.channels;

  if (raw.height <= SAMPLE_STRIPS * SAMPLE_STRIP_ROWS) {
    const encoded = await Promise.all(
      PNG_CANDIDATES.map((options) => finish(fromRaw(data, raw).png({ ...options, compressionLevel: FINAL_LEVEL }))),
    );
    return smallest(encoded);
  }
  const sample = sampleRows(data, rowBytes, raw.height);
  const sampleRaw = { ...raw, height: sample.length / rowBytes };
  const sizes = await Promise.all(
    PNG_CANDIDATES.map((options) =>
      fromRaw(sample, sampleRaw)
        .png({ ...options, compressionLevel: SAMPLE_LEVEL })
        .toBuffer()
        .then((b) => b.length),
    ),
  );
  const best = PNG_CANDIDATES[sizes.indexOf(Math.min(...sizes))]!;
  return finish(fromRaw(data, raw).png({ ...best, compressionLevel: FINAL_LEVEL }));
}

function fromRaw(data: Buffer, raw: { width: number; height: number; channels: 1 | 2 | 3 | 4 }): sharp.Sharp {
  return sharp(data, { raw, limitInputPixels: false });
}

/** Evenly spaced bands of rows, so the sample sees the header, the middle and the footer. */
function sampleRows(data: Buffer, rowBytes: number, height: number): Buffer {
  const bands: Buffer[] = [];
  const gap = (height - SAMPLE_STRIP_ROWS) / (SAMPLE_STRIPS - 1);
  for (let i = 0; i < SAMPLE_STRIPS; i++) {
    const top = Math.round(i * gap);
    bands.push(data.subarray(top * rowBytes, (top + SAMPLE_STRIP_ROWS) * rowBytes));
  }
  return Buffer.concat(bands);
}

async function finish(image: sharp.Sharp): Promise<EncodedImage> {
  const { data, info } = await image.toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

function smallest(images: EncodedImage[]): EncodedImage {
  return images.reduce((a, b) => (b.data.length < a.data.length ? b : a));
}

/**
 * The image a capture returns from the PNG Chromium rendered: a PNG kept as it is (see
 * screenshot() in page-screenshot.ts), JPEG and WebP encoded on libvips threads.
 */
export async function captureImage(png: Buffer, format: ImageFormat, quality = DEFAULT_QUALITY): Promise<EncodedImage> {
  // Chromium's PNG: its size from the IHDR chunk.
  if (format === 'png') return { data: png, width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
  return encodeScreenshot(png, format, quality);
}
