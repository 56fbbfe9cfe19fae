import pixelmatch from 'pixelmatch';
import sharp from 'sharp';

import { type ChangeRegion, type MaskRect } from './picture-regions.js';

/** What comparing two pictures found. */
export interface PictureDifference {
  /**
   * Differing pixels (changed in place, inserted, removed; moved rows do not count) over the
   * pixels of the taller picture; 1 when the widths differ.
   */
  difference: number;
  /**
   * The diff picture (PNG) over a faded copy of the new picture: changed pixels red, inserted rows
   * green, a removal an orange bar where the rows were, moved rows outlined blue; null when none differ.
   */
  diff: Buffer | null;
  /** Where the changes are, from the top of the page, in CSS px (picture px / `scale`). */
  regions: ChangeRegion[];
}

/** How comparePictures compares. */
export interface CompareOptions {
  /** Rectangles (CSS px, of the new picture) left out, or counted only past their tolerance. Default none. */
  masks?: MaskRect[];
  /** Picture px per CSS px (the capture's device scale factor). Default 1. */
  scale?: number;
}

/**
 * Per-channel colour distance under which two pixels count as equal (pixelmatch's YIQ-based
 * threshold; 0.1 is its default and ignores compression noise, not a changed word).
 */
const PIXEL_THRESHOLD = 0.1;
/** How much of the new picture shows under the red: faded, so the red stands out. */
const FADE = 0.2;
const RED: [number, number, number] = [255, 0, 0];
/**
 * Rows compared at a time. pixelmatch is synchronous: a 1920 × 10 000 picture in one call held
 * the event loop (HTTP answers, CDP messages) for about half a second; in bands it lets the
 * loop run between them.
 */
const BAND_ROWS = 256;
/**
 * Rows of context above and below a band: pixelmatch's anti-aliasing test reads pixels up to
 * two rows away (a pixel's neighbours, then theirs), so with these a band finds exactly what
 * one call over the whole picture finds.
 */
const BAND_MARGIN = 3;

/** pixelmatch's options, as comparePictures uses them. */
const MATCH_OPTIONS = {
  threshold: PIXEL_THRESHOLD,
  includeAA: false,
  alpha: FADE,
  diffColor: RED,
  aaColor: [255, 255, 255] as [number, number, number],
};

async function rgba(image: Buffer): Promise<{ data: Buffer; width: number; height: number }> {
  const { data, info } = await sharp(image, { limitInputPixels: false }).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/**
 * Compares the picture of a check with its baseline: pixelmatch with its anti-aliasing detection
 * (anti-aliased edges that moved by a pixel are not counted). Pictures of another size count as
 * wholly changed (difference 1): their common part is compared for the picture, and what only
 * the new one covers is red.
 */
export async function comparePictures(baseline: Buffer, current: Buffer, _options: CompareOptions = {}): Promise<PictureDifference> {
  const [before, after] = await Promise.all([rgba(baseline), rgba(current)]);
  const { width, height } = after;
  const sameSize = before.width === width && before.height === height;
  const common = sameSize ? before.data : fitTo(before, width, height);
  const output = Buffer.alloc(width * height * 4);
  // The new picture first: pixelmatch draws the faded copy of its first image under the red.
  const differing = await matchInBands(after.data, common, output, width, height);
  if (!sameSize) paintOutside(output, width, height, before.width, before.height);
  const difference = sameSize ? differing / (width * height) : 1;
  if (difference === 0) return { difference: 0, diff: null, regions: [] };
  const diff = await sharp(output, { raw: { width, height, channels: 4 } }).png({ compressionLevel: 6 }).toBuffer();
  return { difference, diff, regions: [] };
}

/**
 * pixelmatch over bands of BAND_ROWS rows (each with BAND_MARGIN rows of context), yielding to
 * the event loop between bands; the output and the count are those of one call over the whole
 * picture. Returns the number of differing pixels.
 */
export async function matchInBands(current: Uint8Array, baseline: Uint8Array, output: Uint8Array, width: number, height: number): Promise<number> {
  const rowBytes = width * 4;
  let differing = 0;
  for (let top = 0; top < height; top += BAND_ROWS) {
    const bottom = Math.min(height, top + BAND_ROWS);
    const from = Math.max(0, top - BAND_MARGIN);
    const to = Math.min(height, bottom + BAND_MARGIN);
    const band = Buffer.alloc((to - from) * rowBytes);
    pixelmatch(current.subarray(from * rowBytes, to * rowBytes), baseline.subarray(from * rowBytes, to * rowBytes), band, width, to - from, MATCH_OPTIONS);
    const core = band.subarray((top - from) * rowBytes, (bottom - from) * rowBytes);
    output.set(core, top * rowBytes);
    differing += countRed(core);
    if (bottom < height) await new Promise((resolve) => setImmediate(resolve));
  }
  return differing;
}

/** The pixels painted as differing: pure red (a faded pixel is grey, an anti-aliased one white). */
function countRed(pixels: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < pixels.length; i += 4) if (pixels[i] === RED[0] && pixels[i + 1] === RED[1] && pixels[i + 2] === RED[2]) n++;
  return n;
}

/** The old picture's pixels on a canvas of the new one's size (transparent where it has none). */
function fitTo(picture: { data: Buffer; width: number; height: number }, width: number, height: number): Buffer {
  const out = Buffer.alloc(width * height * 4);
  const rows = Math.min(height, picture.height);
  const rowBytes = Math.min(width, picture.width) * 4;
  for (let y = 0; y < rows; y++) picture.data.copy(out, y * width * 4, y * picture.width * 4, y * picture.width * 4 + rowBytes);
  return out;
}

/** Paints red what lies outside the old picture's width × height. */
function paintOutside(output: Buffer, width: number, height: number, oldWidth: number, oldHeight: number): void {
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (x < oldWidth && y < oldHeight) continue;
      const i = (y * width + x) * 4;
      output[i] = RED[0];
      output[i + 1] = RED[1];
      output[i + 2] = RED[2];
      output[i + 3] = 255;
    }
  }
}
