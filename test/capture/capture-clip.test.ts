import { describe, expect, it } from 'vitest';

import { CaptureError } from '../../server/capture/engine.js';
import type { PageGeometry } from '../../server/capture/in-page/page-scripts.js';
import { bitmapSize, clipFor, clipForRect, MAX_CAPTURE_PIXELS } from '../../server/capture/pipeline/capture-clip.js';

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
      cut: null,
      bitmapBytes: 1170 * 2532 * 4,
    });
  });

  it('captures a full page from the top and cuts it at maxHeight', () => {
    expect(clipFor(geometry, { fullPage: true, maxHeight: 16_384, format: 'png' }, 3)).toEqual({
      clip: { x: 0, y: 0, width: 390, height: 5000, scale: 1 },
      truncated: false,
      cut: null,
      bitmapBytes: 1170 * 15000 * 4,
    });
    expect(clipFor(geometry, { fullPage: true, maxHeight: 2000, format: 'png' }, 3)).toEqual({
      clip: { x: 0, y: 0, width: 390, height: 2000, scale: 1 },
      truncated: true,
      cut: { of: 'page', asked: { width: 390, height: 5000 }, kept: { width: 390, height: 2000 } },
      bitmapBytes: 1170 * 6000 * 4,
    });
  });

  it('keeps a webp full page within the encoder limit at the device pixel ratio', () => {
    const { clip, truncated } = clipFor(geometry, { fullPage: true, maxHeight: 16_384, format: 'webp' }, 4);
    expect(clip.height).toBe(16_383 / 4);
    expect(truncated).toBe(true);
  });

  it('keeps a zoomed-out page at the viewport width by scaling with the zoom', () => {
    const zoomed = { ...geometry, viewportY: 0, viewportWidth: 980, viewportHeight: 2121, scale: 390 / 980 };
    const { clip } = clipFor(zoomed, { fullPage: false, maxHeight: 16_384, format: 'png' }, 3);
    expect(clip.width * clip.scale).toBeCloseTo(390);
  });
});

describe('bitmapSize, the one decision of a capture bitmap', () => {
  const png = { format: 'png' as const };

  it.each([
    ['a width of 0', { width: 0, height: 100 }, 1],
    ['a negative height', { width: 100, height: -5 }, 1],
    ['a NaN width', { width: Number.NaN, height: 100 }, 1],
    ['a NaN height', { width: 100, height: Number.NaN }, 1],
    ['a scale of 0', { width: 100, height: 100 }, 0],
    ['a negative scale', { width: 100, height: 100 }, -3],
    ['a NaN scale', { width: 100, height: 100 }, Number.NaN],
    ['an infinite scale', { width: 100, height: 100 }, Number.POSITIVE_INFINITY],
  ])('refuses %s with a CaptureError, as nothing to capture', (_case, css, scale) => {
    expect(() => bitmapSize(css, scale, png)).toThrow(CaptureError);
    expect(() => bitmapSize(css, scale, png)).toThrow(/Nothing to capture/);
  });

  it('keeps what fits as asked: device pixels are CSS px × scale, rounded as Chromium rounds a clip', () => {
    expect(bitmapSize({ width: 390, height: 844 }, 3, png)).toEqual({
      cssWidth: 390,
      cssHeight: 844,
      width: 1170,
      height: 2532,
      truncated: false,
      bytes: 1170 * 2532 * 4,
    });
    // Chromium gave 302 × 30 device pixels for a 100.5 × 10.1 clip at 3x.
    expect(bitmapSize({ width: 100.5, height: 10.1 }, 3, png)).toMatchObject({ cssWidth: 100.5, cssHeight: 10.1, width: 302, height: 30, truncated: false });
  });

  it('gives a side smaller than a device pixel one device pixel', () => {
    expect(bitmapSize({ width: 0.1, height: 10 }, 1, png)).toMatchObject({ cssWidth: 1, width: 1, height: 10, truncated: false });
  });

  it('keeps an image of exactly MAX_CAPTURE_PIXELS and cuts one device row more', () => {
    expect(bitmapSize({ width: 10_000, height: 15_000 }, 1, png)).toMatchObject({ width: 10_000, height: 15_000, truncated: false });
    expect(bitmapSize({ width: 10_000, height: 15_001 }, 1, png)).toMatchObject({ width: 10_000, height: 15_000, cssHeight: 15_000, truncated: true });
    expect(bitmapSize({ width: 15_001, height: 10_000 }, 1, png)).toMatchObject({ width: 15_000, height: 10_000, cssWidth: 15_000, truncated: true });
  });

  it("keeps a side of exactly the encoder's limit and cuts one pixel more (WebP 16383)", () => {
    const webp = { format: 'webp' as const };
    expect(bitmapSize({ width: 16_383, height: 100 }, 1, webp)).toMatchObject({ width: 16_383, truncated: false });
    expect(bitmapSize({ width: 16_384, height: 100 }, 1, webp)).toMatchObject({ width: 16_383, cssWidth: 16_383, truncated: true });
    expect(bitmapSize({ width: 100, height: 16_384 }, 1, webp)).toMatchObject({ height: 16_383, truncated: true });
  });

  it('cuts a clip that fits at 2x when the scale takes it past the bound at 3x', () => {
    const webp = { format: 'webp' as const };
    expect(bitmapSize({ width: 6000, height: 100 }, 2, webp)).toMatchObject({ width: 12_000, truncated: false });
    expect(bitmapSize({ width: 6000, height: 100 }, 3, webp)).toMatchObject({ width: 16_383, cssWidth: 16_383 / 3, height: 300, truncated: true });
    const big = { width: 10_000, height: 14_000 };
    expect(bitmapSize(big, 1, png).truncated).toBe(false);
    const scaled = bitmapSize(big, 3, png);
    expect(scaled.truncated).toBe(true);
    expect(scaled.width * scaled.height).toBeLessThanOrEqual(MAX_CAPTURE_PIXELS);
  });

  it('cuts a wide element at its right to MAX_CAPTURE_PIXELS, keeping its height', () => {
    const bitmap = bitmapSize({ width: 100_000, height: 3000 }, 1, png);
    expect(bitmap).toEqual({ cssWidth: 50_000, cssHeight: 3000, width: 50_000, height: 3000, truncated: true, bytes: 50_000 * 3000 * 4 });
  });

  it('cuts a 33,000,000 px wide element at 3x to the longest side Chromium paints, keeping its height', () => {
    const bitmap = bitmapSize({ width: 33_000_000, height: 100 }, 3, png);
    expect(bitmap).toMatchObject({ width: 1 << 18, height: 300, cssHeight: 100, truncated: true });
    expect(bitmap.cssWidth * 3).toBe(bitmap.width);
    expect(bitmap.bytes).toBe(bitmap.width * 300 * 4);
  });

  it('cuts a side too long to paint or encode, even when its area is small', () => {
    // One CSS px tall: 3 device rows; the width alone passes the longest side.
    expect(bitmapSize({ width: 33_000_000, height: 1 }, 3, png)).toMatchObject({ width: 1 << 18, height: 3, truncated: true });
    expect(bitmapSize({ width: 1, height: 33_000_000 }, 3, png)).toMatchObject({ width: 3, height: 1 << 18, truncated: true });
    // libjpeg's longest side is 65500, below the format's 65535.
    expect(bitmapSize({ width: Number.POSITIVE_INFINITY, height: 1 }, 1, { format: 'jpeg' })).toMatchObject({ width: 65_500, height: 1, truncated: true });
  });

  it('cuts a square past the bound to a square of 12247 device pixels', () => {
    const huge = bitmapSize({ width: 16_384, height: 16_384 }, 3, png);
    expect(huge).toMatchObject({ width: 12_247, height: 12_247, truncated: true });
    expect(huge.width * huge.height).toBeLessThanOrEqual(MAX_CAPTURE_PIXELS);
    const endless = bitmapSize({ width: Number.POSITIVE_INFINITY, height: Number.POSITIVE_INFINITY }, 1, png);
    expect(endless).toMatchObject({ width: 12_247, height: 12_247, truncated: true });
  });

  it('cuts at maxCssHeight, and counts it in CSS px', () => {
    expect(bitmapSize({ width: 390, height: 20_000 }, 3, { format: 'png', maxCssHeight: 16_384 })).toMatchObject({
      cssHeight: 16_384,
      height: 49_152,
      truncated: true,
    });
    expect(bitmapSize({ width: 390, height: 16_384 }, 3, { format: 'png', maxCssHeight: 16_384 }).truncated).toBe(false);
  });
});

describe('clipForRect (clip and selector)', () => {
  it.each([
    ['the Chromium engine (the clip carries the device pixel ratio)', 3],
    ['the Electron engine (the debugger emulates it)', 1],
  ])('cuts a 33,000,000 px wide element on mobile in width to MAX_CAPTURE_PIXELS for %s, and says so', (_engine, clipDpr) => {
    const { clip, truncated, bitmapBytes } = clipForRect({ x: 0, y: 40, width: 33_000_000, height: 100 }, 'png', 3, clipDpr);
    expect(truncated).toBe(true);
    expect(clip).toMatchObject({ x: 0, y: 40, height: 100, scale: clipDpr });
    expect(devicePixels(clip, 3, clipDpr)).toBeLessThanOrEqual(MAX_CAPTURE_PIXELS);
    expect(bitmapBytes).toBeLessThanOrEqual(MAX_CAPTURE_PIXELS * 4);
  });

  it("says what it cut of a selector's element: its width, kept to the longest side, its height whole", () => {
    const { cut } = clipForRect({ x: 0, y: 40, width: 30_000, height: 40 }, 'webp', 1, 1, 'element');
    expect(cut).toEqual({ of: 'element', asked: { width: 30_000, height: 40 }, kept: { width: 16_383, height: 40 } });
  });

  it('keeps a rectangle that fits as it is', () => {
    expect(clipForRect({ x: 350, y: 1550, width: 100, height: 50 }, 'png', 1, 1)).toEqual({
      clip: { x: 350, y: 1550, width: 100, height: 50, scale: 1 },
      truncated: false,
      cut: null,
      bitmapBytes: 100 * 50 * 4,
    });
  });
});
