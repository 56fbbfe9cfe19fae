import { CaptureError } from '../capture-errors.js';
import type { ImageFormat } from '../image-format.js';
import type { PageGeometry } from '../in-page/page-scripts.js';

/** CDP's Page.Viewport: a rectangle in CSS pixels of the page and the scale applied to it. */
export interface Clip {
  x: number;
  y: number;
  width: number;
  height: number;
  scale: number;
}

/**
 * The largest side of an image in device pixels: libwebp stops at 16383, libjpeg at 65500 (its
 * JPEG_MAX_DIMENSION, below the format's 65535), and Chromium itself paints a capture only so
 * far: past about 520,000 device pixels it leaves the rest of a wide one white (measured with
 * Chromium 14x, desktop and mobile), so PNG keeps to 2^18. The encoder checks it again before
 * encoding (image-encoder.ts).
 */
export const MAX_IMAGE_SIDE: Record<ImageFormat, number> = { png: 1 << 18, jpeg: 65_500, webp: 16_383, pdf: 1 << 18 };

/**
 * The most device pixels one capture may have: 150 million (11520 × 13020, the API's widest
 * viewport, 3840 CSS px, at the mobile preset's 3×). Every viewport the API accepts fits (3840 ×
 * 4320 at 3× is 149.3 M), so in practice only full pages, clips and elements are cut. Measured with Chromium 14x on
 * the 2-core, 24 GB build machine under a load average of 9: 150 M px took 14 s and peaked at
 * 2.7 GiB in the GPU process, 0.8 GiB in the browser and 0.65 GiB in the page's renderer; 268 M
 * px (2^28) took 20-43 s, past the default 30 s capture time-out, with 3.7 + 1.2 GiB; 566 M px
 * (a 16384 px full page at that width, the request that crashed browsers) fails outright
 * ("Unable to capture screenshot": Chromium's bitmaps stop at 2 GiB).
 */
export const MAX_CAPTURE_PIXELS = 150_000_000;

/** Bytes per pixel of the bitmap Chromium renders a capture into (RGBA). */
const BITMAP_BYTES_PER_PIXEL = 4;

/** The longest side both sides of a square within MAX_CAPTURE_PIXELS may have: 12247. */
const SQUARE_SIDE = Math.floor(Math.sqrt(MAX_CAPTURE_PIXELS));

/** The bitmap a capture renders, as bitmapSize() decides it. */
export interface Bitmap {
  /** The area captured, in the unit of the size asked for (CSS px), after any cut. */
  cssWidth: number;
  cssHeight: number;
  /** Its size in device pixels: the CSS size × the scale, rounded as Chromium rounds it. */
  width: number;
  height: number;
  /** Whether it was cut. */
  truncated: boolean;
  /** Bytes of the RGBA bitmap Chromium renders it into. */
  bytes: number;
}

/**
 * The one decision of how large a capture's bitmap may be, for every way to ask for one (the
 * viewport, a full page, a `clip`, the element of a `selector`; the preset's or the `scale`
 * option's device pixel ratio; the picture `image_width` or `image_height` resize it to, in
 * image-size.ts): `css` (CSS px) at `scale` device pixels per CSS px is cut to
 * the longest side an image may have (MAX_IMAGE_SIDE: what Chromium paints, WebP's 16383, JPEG's
 * 65500), to `maxCssHeight` when one is given (a full page's height cap), and to
 * MAX_CAPTURE_PIXELS in all. That last cut takes
 * the longer side first and no shorter than the other, so a tall page is cut at the bottom and
 * a wide element at the right; when both sides are past 12247 device pixels, the image is cut
 * to a square of 12247. A side that is cut ends on a whole device pixel; one that is not stays
 * as asked. The result is at least one device pixel a side.
 *
 * Throws a CaptureError when there is nothing to capture: a size or scale that is not a
 * positive number (0, negative, NaN; an infinite size is cut like any huge one).
 */
export function bitmapSize(css: { width: number; height: number }, scale: number, limits: { format: ImageFormat; maxCssHeight?: number }): Bitmap {
  if (!(scale > 0) || !Number.isFinite(scale)) throw new CaptureError(`Nothing to capture at a scale of ${scale}`);
  if (!(css.width > 0) || !(css.height > 0)) throw new CaptureError(`Nothing to capture: the area is ${css.width} × ${css.height} CSS px`);
  const side = MAX_IMAGE_SIDE[limits.format];
  // Device pixels as Chromium renders a clip (rounded), at least one; Infinity stays Infinity.
  const asked = (length: number) => Math.max(1, Math.round(length * scale));
  const heightCap = limits.maxCssHeight === undefined ? side : Math.min(side, asked(limits.maxCssHeight));
  const [width, height] = withinArea(Math.min(asked(css.width), side), Math.min(asked(css.height), heightCap));
  const cutWidth = width < asked(css.width);
  const cutHeight = height < asked(css.height);
  return {
    cssWidth: cutWidth ? width / scale : Math.max(css.width, 1 / scale),
    cssHeight: cutHeight ? height / scale : Math.max(css.height, 1 / scale),
    width,
    height,
    truncated: cutWidth || cutHeight,
    bytes: width * height * BITMAP_BYTES_PER_PIXEL,
  };
}

/** Device pixels cut to MAX_CAPTURE_PIXELS: the longer side first, to no shorter than the other; past that, a square. */
function withinArea(width: number, height: number): [number, number] {
  if (width * height <= MAX_CAPTURE_PIXELS) return [width, height];
  const shorter = Math.min(width, height);
  if (shorter > SQUARE_SIDE) return [SQUARE_SIDE, SQUARE_SIDE];
  const longer = Math.floor(MAX_CAPTURE_PIXELS / shorter);
  return width >= height ? [longer, height] : [width, longer];
}

/** What a cut picture kept of what was asked, in CSS px: the truncated warning says it. */
export interface Cut {
  /** What was cut: the page (a full page or the viewport), the element of a `selector`, or a `clip`. */
  of: 'page' | 'element' | 'clip';
  asked: { width: number; height: number };
  kept: { width: number; height: number };
}

/** The clip of a capture, whether it was cut and how (`cut`, null when it was not), and its bitmap's size in bytes. */
export interface CaptureClip {
  clip: Clip;
  truncated: boolean;
  cut: Cut | null;
  bitmapBytes: number;
}

function captureClip(origin: { x: number; y: number }, of: Cut['of'], asked: { width: number; height: number }, bitmap: Bitmap, scale: number): CaptureClip {
  const kept = { width: bitmap.cssWidth, height: bitmap.cssHeight };
  return {
    clip: { ...origin, ...kept, scale },
    truncated: bitmap.truncated,
    cut: bitmap.truncated ? { of, asked, kept } : null,
    bitmapBytes: bitmap.bytes,
  };
}

/**
 * The area to capture in CSS pixels of the page, whether it was cut, and the size in bytes of the
 * bitmap it renders to, as bitmapSize() decides for the viewport, or for the full page cut in
 * height at `maxHeight` (CSS px of the viewport). A zoomed-out mobile page (no viewport meta
 * tag) adds its pinch-zoom scale, so the image keeps the viewport's width. The capture pipeline
 * takes every clip from here or from clipForRect(), so both engines keep within the same bound.
 *
 * `clipDpr` is the device pixel ratio the clip's scale must carry itself: none (1) when the
 * screenshot's session emulates the device, as both engines' do; `dpr` for one that does not.
 */
export function clipFor(
  geometry: PageGeometry,
  request: { fullPage: boolean; maxHeight: number; format: ImageFormat },
  dpr: number,
  clipDpr = 1,
): CaptureClip {
  const zoom = geometry.scale > 0 ? geometry.scale : 1;
  const asked = { width: geometry.viewportWidth, height: request.fullPage ? geometry.fullHeight : geometry.viewportHeight };
  const bitmap = bitmapSize(asked, dpr * zoom, {
    format: request.format,
    maxCssHeight: request.fullPage ? request.maxHeight / zoom : undefined,
  });
  const origin = request.fullPage ? { x: 0, y: 0 } : { x: geometry.viewportX, y: geometry.viewportY };
  return captureClip(origin, 'page', asked, bitmap, clipDpr * zoom);
}

/**
 * The clip for a rectangle of the page (`of`: a `clip` option, or the element a `selector`
 * matched), in CSS pixels, as bitmapSize() decides: cut in width and height, and said so in
 * `truncated` and `cut`. `dpr` and `clipDpr` as in clipFor().
 */
export function clipForRect(
  rect: { x: number; y: number; width: number; height: number },
  format: ImageFormat,
  dpr: number,
  clipDpr = 1,
  of: 'element' | 'clip' = 'clip',
): CaptureClip {
  const { x, y, width, height } = rect;
  return captureClip({ x, y }, of, { width, height }, bitmapSize(rect, dpr, { format }), clipDpr);
}
