import sharp from 'sharp';

import type { CanvasInPicture } from '../in-page/warning-probe.js';
import { pngSize } from './png-size.js';

// The Node-side half of the blank-chart check: the canvases the probe found are looked for in the
// picture Chromium rendered, not read in the page (a WebGL canvas reads back blank there, and a
// cross-origin one throws), so a chart counts as drawn when the picture shows it drawn.

/** Pixels left out at each edge of a canvas's rectangle, where it meets the page's anti-aliased border. */
const INSET = 2;

/**
 * The names of the canvases that are all one colour in `png` (the PNG of the picture, the
 * canvases' rectangles given as shares of its width and height). The rows from the top of the
 * highest canvas to the bottom of the lowest are decoded once, off the event loop. A picture
 * sharp cannot read has no blank canvas: a warning never fails the job.
 */
export async function blankCanvases(png: Buffer, canvases: CanvasInPicture[]): Promise<string[]> {
  if (canvases.length === 0) return [];
  try {
    const { width, height } = pngSize(png);
    const rects = canvases
      .map((c) => ({
        name: c.name,
        left: Math.ceil(c.left * width) + INSET,
        top: Math.ceil(c.top * height) + INSET,
        right: Math.floor(c.right * width) - INSET,
        bottom: Math.floor(c.bottom * height) - INSET,
      }))
      .filter((r) => r.right - r.left >= 2 && r.bottom - r.top >= 2);
    if (rects.length === 0) return [];
    const top = Math.min(...rects.map((r) => r.top));
    const bottom = Math.max(...rects.map((r) => r.bottom));
    const band = sharp(png, { limitInputPixels: false, sequentialRead: true }).extract({ left: 0, top, width, height: bottom - top });
    const { data, info } = await band.raw().toBuffer({ resolveWithObject: true });
    const rowBytes = info.width * info.channels;
    return rects
      .filter((r) => {
        const pixel = data.subarray((r.top - top) * rowBytes + r.left * info.channels, (r.top - top) * rowBytes + (r.left + 1) * info.channels);
        const row = Buffer.alloc((r.right - r.left) * info.channels, pixel);
        for (let y = r.top; y < r.bottom; y++) {
          const at = (y - top) * rowBytes + r.left * info.channels;
          if (row.compare(data, at, at + row.length) !== 0) return false;
        }
        return true;
      })
      .map((r) => r.name);
  } catch {
    return [];
  }
}
