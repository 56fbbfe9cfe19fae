import type { ImageFormat } from '../server/capture/engine.js';
import type { PageGeometry } from '../server/capture/page-scripts.js';

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
 * The area to capture in CSS pixels of the page, and whether a full page was cut. The
 * debugger's own device emulation multiplies by the device pixel ratio, so the clip's scale
 * is only the pinch zoom of a zoomed-out mobile page (no viewport meta tag), which keeps the
 * image at the viewport's width. The height cap also keeps within what the encoder can write.
 */
export function clipFor(
  geometry: PageGeometry,
  request: { fullPage: boolean; maxHeight: number; format: ImageFormat },
  dpr: number,
): { clip: Clip; truncated: boolean } {
  const zoom = geometry.scale > 0 ? geometry.scale : 1;
  if (!request.fullPage) {
    return {
      clip: {
        x: geometry.viewportX,
        y: geometry.viewportY,
        width: geometry.viewportWidth,
        height: geometry.viewportHeight,
        scale: zoom,
      },
      truncated: false,
    };
  }
  // Heights below are in CSS pixels of the viewport, the unit of `maxHeight`.
  const maxHeight = Math.max(1, Math.min(request.maxHeight, Math.floor(MAX_IMAGE_SIDE[request.format] / dpr)));
  const fullHeight = geometry.fullHeight * zoom;
  const height = Math.min(fullHeight, maxHeight);
  return {
    clip: { x: 0, y: 0, width: geometry.viewportWidth, height: height / zoom, scale: zoom },
    truncated: fullHeight > maxHeight,
  };
}
