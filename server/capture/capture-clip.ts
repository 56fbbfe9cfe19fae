import type { ImageFormat } from './engine.js';
import type { PageGeometry } from './page-scripts.js';

/** CDP's Page.Viewport: a rectangle in CSS pixels of the page and the scale applied to it. */
export interface Clip {
  x: number;
  y: number;
  width: number;
  height: number;
  scale: number;
}

/** Encoders' largest side in pixels: libwebp stops at 16383, JPEG at 65535. */
const MAX_IMAGE_SIDE: Record<ImageFormat, number> = { png: 1 << 20, jpeg: 65_535, webp: 16_383, pdf: 1 << 20 };

/**
 * The most device pixels one capture may have: 150 million (11520 × 13020, the API's widest
 * viewport, 3840 CSS px, at the mobile preset's 3×). Every viewport the API accepts fits (3840 ×
 * 4320 at 3× is 149.3 M), so in practice only full pages are cut. Measured with Chromium 14x on
 * the 2-core, 24 GB build machine under a load average of 9: 150 M px took 14 s and peaked at
 * 2.7 GiB in the GPU process, 0.8 GiB in the browser and 0.65 GiB in the page's renderer; 268 M
 * px (2^28) took 20-43 s, past the default 30 s capture time-out, with 3.7 + 1.2 GiB; 566 M px
 * (a 16384 px full page at that width, the request that crashed browsers) fails outright
 * ("Unable to capture screenshot": Chromium's bitmaps stop at 2 GiB).
 */
export const MAX_CAPTURE_PIXELS = 150_000_000;

/** Bytes per pixel of the bitmap Chromium renders a capture into (RGBA). */
const BITMAP_BYTES_PER_PIXEL = 4;

/**
 * The area to capture in CSS pixels of the page, whether it was cut, and the size in bytes of the
 * bitmap it renders to. A full page is cut in height at `maxHeight`, at what the encoder can
 * write, and at MAX_CAPTURE_PIXELS; a viewport only at MAX_CAPTURE_PIXELS. A zoomed-out mobile
 * page (no viewport meta tag) adds its pinch-zoom scale, so the image keeps the viewport's width.
 * The capture pipeline takes every clip from here, so both engines keep within the same bound.
 *
 * `clipDpr` is the device pixel ratio the clip's scale must carry itself: none (1) when the
 * screenshot's session emulates the device, as both engines' do; `dpr` for one that does not.
 */
export function clipFor(
  geometry: PageGeometry,
  request: { fullPage: boolean; maxHeight: number; format: ImageFormat },
  dpr: number,
  clipDpr = 1,
): { clip: Clip; truncated: boolean; bitmapBytes: number } {
  const zoom = geometry.scale > 0 ? geometry.scale : 1;
  const scale = clipDpr * zoom;
  // Heights below are in CSS pixels of the viewport, the unit of `maxHeight`.
  const deviceWidth = Math.max(1, Math.ceil(geometry.viewportWidth * zoom * dpr));
  const pixelCap = Math.floor(MAX_CAPTURE_PIXELS / deviceWidth / dpr);
  const cap = request.fullPage ? Math.min(request.maxHeight, Math.floor(MAX_IMAGE_SIDE[request.format] / dpr), pixelCap) : pixelCap;
  const maxHeight = Math.max(1, cap);
  const wanted = request.fullPage ? geometry.fullHeight * zoom : geometry.viewportHeight * zoom;
  const truncated = wanted > maxHeight;
  const height = truncated ? maxHeight : wanted;
  const origin = request.fullPage ? { x: 0, y: 0 } : { x: geometry.viewportX, y: geometry.viewportY };
  // Uncut, the page's own height is kept as it is, not divided back out of the zoom.
  const pageHeight = request.fullPage ? geometry.fullHeight : geometry.viewportHeight;
  return {
    clip: { ...origin, width: geometry.viewportWidth, height: truncated ? height / zoom : pageHeight, scale },
    truncated,
    bitmapBytes: deviceWidth * Math.ceil(height * dpr) * BITMAP_BYTES_PER_PIXEL,
  };
}

/**
 * The clip for a rectangle of the page (a `clip` option, or the element a `selector` matched),
 * in CSS pixels: cut in height at what the encoder can write and at MAX_CAPTURE_PIXELS, like a
 * full page, and said so in `truncated`. `dpr` and `clipDpr` as in clipFor().
 */
export function clipForRect(
  rect: { x: number; y: number; width: number; height: number },
  format: ImageFormat,
  dpr: number,
  clipDpr = 1,
): { clip: Clip; truncated: boolean; bitmapBytes: number } {
  const deviceWidth = Math.max(1, Math.ceil(rect.width * dpr));
  const cap = Math.max(1, Math.min(Math.floor(MAX_IMAGE_SIDE[format] / dpr), Math.floor(MAX_CAPTURE_PIXELS / deviceWidth / dpr)));
  const truncated = rect.height > cap;
  const height = truncated ? cap : rect.height;
  return {
    clip: { x: rect.x, y: rect.y, width: rect.width, height, scale: clipDpr },
    truncated,
    bitmapBytes: deviceWidth * Math.ceil(height * dpr) * BITMAP_BYTES_PER_PIXEL,
  };
}
