import sharp from 'sharp';

import { pictureOutOfTime, pictureTooLarge } from '../capture-failures.js';
import type { ImageFormat } from '../image-format.js';
import { MAX_CAPTURE_PIXELS, MAX_IMAGE_SIDE } from '../pipeline/capture-clip.js';
import { pngSize } from './png-size.js';

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
 * The most pixels the encoder decodes: a capture's bitmap (MAX_CAPTURE_PIXELS) with a device
 * pixel more a side, as Chromium may round a fractional clip outwards.
 */
export const MAX_DECODED_PIXELS = MAX_CAPTURE_PIXELS + 2 * MAX_IMAGE_SIDE.png + 1;

/**
 * Re-encodes a screenshot taken as a quickly compressed PNG (CDP `optimizeForSpeed`) into
 * `format`. The work runs on libvips threads, off the browser's single encoding thread and off
 * the event loop. PNG keeps the exact pixels and comes out smaller than Chromium's own PNG.
 */
export async function encodeScreenshot(fastPng: Buffer, format: ImageFormat, quality = DEFAULT_QUALITY, deadline?: number): Promise<EncodedImage> {
  const { width = 0, height = 0 } = await sharp(fastPng, { limitInputPixels: MAX_DECODED_PIXELS }).metadata();
  return encodePicture(sharp(fastPng, { limitInputPixels: MAX_DECODED_PIXELS }), { width, height }, format, quality, deadline);
}

/**
 * A picture (`input`, `size` device px as it comes out of it) encoded as `format`: see encodeScreenshot().
 * A side longer than the format takes (MAX_IMAGE_SIDE: JPEG 65500, WebP 16383) fails with a
 * CaptureError before any encoding. With a `deadline` (a Date.now() time), nothing starts after
 * it and libvips stops what is still running at it (sharp's timeout, to the next whole second):
 * the capture's time-out has failed the job by then, and its picture must not hold the process.
 */
export async function encodePicture(
  input: sharp.Sharp,
  size: { width: number; height: number },
  format: ImageFormat,
  quality = DEFAULT_QUALITY,
  deadline?: number,
): Promise<EncodedImage> {
  const side = MAX_IMAGE_SIDE[format];
  if (size.width > side || size.height > side) throw pictureTooLarge(size, format, side);
  const bounded = (image: sharp.Sharp) => withinDeadline(image, deadline);
  if (format === 'jpeg') return finish(bounded(input.jpeg({ quality })));
  if (format === 'webp') return finish(bounded(input.webp({ quality })));
  const { data, info } = await bounded(input.raw()).toBuffer({ resolveWithObject: true });
  const raw = { width: info.width, height: info.height, channels: info.channels };
  const rowBytes = raw.width * raw.channels;

  if (raw.height <= SAMPLE_STRIPS * SAMPLE_STRIP_ROWS) {
    const encoded = await Promise.all(
      PNG_CANDIDATES.map((options) => finish(bounded(fromRaw(data, raw).png({ ...options, compressionLevel: FINAL_LEVEL })))),
    );
    return smallest(encoded);
  }
  const sample = sampleRows(data, rowBytes, raw.height);
  const sampleRaw = { ...raw, height: sample.length / rowBytes };
  const sizes = await Promise.all(
    PNG_CANDIDATES.map((options) =>
      bounded(fromRaw(sample, sampleRaw).png({ ...options, compressionLevel: SAMPLE_LEVEL }))
        .toBuffer()
        .then((b) => b.length),
    ),
  );
  const best = PNG_CANDIDATES[sizes.indexOf(Math.min(...sizes))]!;
  return finish(bounded(fromRaw(data, raw).png({ ...best, compressionLevel: FINAL_LEVEL })));
}

/** `image` stopped by libvips at `deadline`; a CaptureError, without starting it, once that has passed. */
export function withinDeadline(image: sharp.Sharp, deadline: number | undefined): sharp.Sharp {
  if (deadline === undefined) return image;
  const left = deadline - Date.now();
  if (left <= 0) throw pictureOutOfTime();
  return image.timeout({ seconds: Math.min(3600, Math.ceil(left / 1000)) });
}

function fromRaw(data: Buffer, raw: { width: number; height: number; channels: 1 | 2 | 3 | 4 }): sharp.Sharp {
  return sharp(data, { raw, limitInputPixels: MAX_DECODED_PIXELS });
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
  if (format === 'png') return { data: png, ...pngSize(png) };
  return encodeScreenshot(png, format, quality);
}
