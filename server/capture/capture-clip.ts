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
const MAX_IMAGE_SIDE: Record<ImageFormat, number> = { png: 1 << 20, jpeg: 65_535, webp: 16_383 };

/**
 * The area to capture in CSS pixels of the page, and whether a full page was cut. A zoomed-out
 * mobile page (no viewport meta tag) adds its pinch-zoom scale, so the image keeps the
 * viewport's width. The height cap also keeps within what the encoder can write at `dpr`.
 *
 * `clipDpr` is the device pixel ratio the clip's scale must carry itself: the Chromium engine's
 * CDP session does not share playwright's device-metrics override, so it passes `dpr`; the
 * Electron debugger emulates the device on its own, so the clip carries none (1).
 */
export function clipFor(
  geometry: PageGeometry,
  request: { fullPage: boolean; maxHeight: number; format: ImageFormat },
  dpr: number,
  clipDpr = 1,
): { clip: Clip; truncated: boolean } {
  const zoom = geometry.scale > 0 ? geometry.scale : 1;
  const scale = clipDpr * zoom;
  if (!request.fullPage) {
    return {
      clip: {
        x: geometry.viewportX,
        y: geometry.viewportY,
        width: geometry.viewportWidth,
        height: geometry.viewportHeight,
        scale,
      },
      truncated: false,
    };
  }
  // Heights below are in CSS pixels of the viewport, the unit of `maxHeight`.
  const maxHeight = Math.max(1, Math.min(request.maxHeight, Math.floor(MAX_IMAGE_SIDE[request.format] / dpr)));
  const fullHeight = geometry.fullHeight * zoom;
  const height = Math.min(fullHeight, maxHeight);
  return {
    clip: { x: 0, y: 0, width: geometry.viewportWidth, height: height / zoom, scale },
    truncated: fullHeight > maxHeight,
  };
}
