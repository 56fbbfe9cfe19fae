import { describe, expect, it } from 'vitest';

import { clipFor, MAX_CAPTURE_PIXELS } from '../../server/capture/capture-clip.js';
import type { PageGeometry } from '../../server/capture/page-scripts.js';

/** Device pixels of the image a clip gives at `dpr`. */
const devicePixels = (clip: { width: number; height: number; scale: number }, dpr: number, clipDpr: number) =>
  Math.ceil((clip.width * clip.scale * dpr) / clipDpr) * Math.ceil((clip.height * clip.scale * dpr) / clipDpr);

describe('capture clip pixel bound', () => {
  // The request: a 3840 CSS px wide viewport at the mobile preset's 3x, on a tall page.
  const wide: PageGeometry = { viewportX: 0, viewportY: 0, viewportWidth: 3840, viewportHeight: 844, scale: 1, fullHeight: 60_000 };

  it.each([
    ['the Chromium engine (the clip carries the device pixel ratio)', 3],
    ['the Electron engine (the debugger emulates it)', 1],
  ])('cuts a full page to MAX_CAPTURE_PIXELS device pixels in height for %s, and says so', (_engine, clipDpr) => {
    const { clip, truncated, bitmapBytes } = clipFor(wide, { fullPage: true, maxHeight: 16_384, format: 'png' }, 3, clipDpr);
    expect(truncated).toBe(true);
    expect(clip.width).toBe(3840);
    expect(devicePixels(clip, 3, clipDpr)).toBeLessThanOrEqual(MAX_CAPTURE_PIXELS);
    // Cut no more than needed: one more CSS pixel row would pass the bound.
    expect(11520 * (clip.height + 1) * 3).toBeGreaterThan(MAX_CAPTURE_PIXELS);
    expect(bitmapBytes).toBe(11520 * clip.height * 3 * 4);
  });

  it('leaves the presets at the default height cap uncut', () => {
    for (const [width, dpr] of [[1920, 1], [1024, 2], [390, 3]]) {
      const page = { ...wide, viewportWidth: width, fullHeight: 16_384 };
      expect(clipFor(page, { fullPage: true, maxHeight: 16_384, format: 'png' }, dpr).truncated).toBe(false);
    }
  });

  it('fits the largest viewport the API accepts (3840 x 4320 at 3x) without cutting it', () => {
    const viewport = { ...wide, viewportHeight: 4320 };
    const { clip, truncated } = clipFor(viewport, { fullPage: false, maxHeight: 16_384, format: 'png' }, 3, 3);
    expect(truncated).toBe(false);
    expect(clip.height).toBe(4320);
  });

  it('cuts a viewport larger than the bound too', () => {
    const huge = { ...wide, viewportHeight: 20_000 };
    const { clip, truncated } = clipFor(huge, { fullPage: false, maxHeight: 16_384, format: 'png' }, 3, 3);
    expect(truncated).toBe(true);
    expect(devicePixels(clip, 3, 3)).toBeLessThanOrEqual(MAX_CAPTURE_PIXELS);
  });

  it('bounds a zoomed-out page by its device pixels, not its CSS pixels', () => {
    const zoomed = { ...wide, viewportWidth: 9800, scale: 3840 / 9800, fullHeight: 150_000 };
    const { clip, truncated } = clipFor(zoomed, { fullPage: true, maxHeight: 100_000, format: 'png' }, 3, 3);
    expect(truncated).toBe(true);
    expect(devicePixels(clip, 3, 3)).toBeLessThanOrEqual(MAX_CAPTURE_PIXELS);
  });
});

describe('capture clip', () => {
  const geometry: PageGeometry = {
    viewportX: 0,
    viewportY: 300,
    viewportWidth: 390,
    viewportHeight: 844,
    scale: 1,
    fullHeight: 5000,
  };

  it('captures the viewport where the page is scrolled to', () => {
    expect(clipFor(geometry, { fullPage: false, maxHeight: 16_384, format: 'png' }, 3)).toEqual({
      clip: { x: 0, y: 300, width: 390, height: 844, scale: 1 },
      truncated: false,
      bitmapBytes: 1170 * 2532 * 4,
    });
  });

  it('captures a full page from the top and cuts it at maxHeight', () => {
    expect(clipFor(geometry, { fullPage: true, maxHeight: 16_384, format: 'png' }, 3)).toEqual({
      clip: { x: 0, y: 0, width: 390, height: 5000, scale: 1 },
      truncated: false,
      bitmapBytes: 1170 * 15000 * 4,
    });
    expect(clipFor(geometry, { fullPage: true, maxHeight: 2000, format: 'png' }, 3)).toEqual({
      clip: { x: 0, y: 0, width: 390, height: 2000, scale: 1 },
      truncated: true,
      bitmapBytes: 1170 * 6000 * 4,
    });
  });

  it('keeps a webp full page within the encoder limit at the device pixel ratio', () => {
    const { clip, truncated } = clipFor(geometry, { fullPage: true, maxHeight: 16_384, format: 'webp' }, 4);
    expect(clip.height).toBe(Math.floor(16_383 / 4));
    expect(truncated).toBe(true);
  });

  it('keeps a zoomed-out page at the viewport width by scaling with the zoom', () => {
    const zoomed = { ...geometry, viewportY: 0, viewportWidth: 980, viewportHeight: 2121, scale: 390 / 980 };
    const { clip } = clipFor(zoomed, { fullPage: false, maxHeight: 16_384, format: 'png' }, 3);
    expect(clip.width * clip.scale).toBeCloseTo(390);
  });
});
