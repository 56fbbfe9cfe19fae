import { screen, type WebContents } from 'electron';
import type { ImageFormat } from '../server/capture/engine.js';
import { encodeScreenshot, type EncodedImage } from '../server/capture/image-encoder.js';
import type { PageGeometry } from '../server/capture/page-scripts.js';
import type { Preset } from '../server/capture/presets.js';
import type { JobWindow } from './job-window.js';

export interface ShotOptions {
  preset: Preset;
  viewport: { width: number; height: number };
  format: ImageFormat;
  quality: number;
}

export interface Shot {
  image: EncodedImage;
  truncated: boolean;
}

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

// Our scripts run in their own JavaScript world: the page shares the DOM with them but cannot
// replace the functions they call (scrollTo, XMLSerializer, setTimeout).
const CAPTURE_WORLD_ID = 1001;

// One rendered frame. A hidden window may not run animation frames, so a timer stands in.
const NEXT_FRAME = 'new Promise((resolve) => { requestAnimationFrame(() => setTimeout(resolve, 0)); setTimeout(resolve, 100); })';

function inCaptureWorld<T>(contents: WebContents, code: string): Promise<T> {
  return contents.executeJavaScriptInIsolatedWorld(CAPTURE_WORLD_ID, [{ code }]) as Promise<T>;
}

/**
 * Scrolls down one screen at a time to the bottom (or `maxHeight`) so scroll handlers and
 * IntersectionObserver load lazy content, gives content that grows at the bottom two frames,
 * stops after `maxMs` wherever it is, and returns to the top (as the Chromium engine does).
 */
export async function scrollThroughPage(contents: WebContents, options: { maxMs: number; maxHeight: number }): Promise<void> {
  await inCaptureWorld(
    contents,
    `(async () => {
      const deadline = performance.now() + ${Number(options.maxMs)};
      const frame = () => ${NEXT_FRAME};
      const bottom = () => {
        const root = document.documentElement;
        const height = Math.max(root ? root.scrollHeight : 0, document.body ? document.body.scrollHeight : 0);
        return Math.max(0, Math.min(height, ${Number(options.maxHeight)}) - window.innerHeight);
      };
      let y = 0;
      while (performance.now() < deadline) {
        if (y >= bottom()) {
          await frame();
          await frame();
          if (y >= bottom()) break;
        }
        y = Math.min(y + window.innerHeight, bottom());
        window.scrollTo({ top: y, left: 0, behavior: 'instant' });
        await frame();
      }
      window.scrollTo({ top: 0, left: 0, behavior: 'instant' });
      await frame();
    })()`,
  );
}

/**
 * Waits for web fonts and one frame (the raw screenshot command right after load sometimes
 * fails without), then measures the visual viewport and the document.
 */
export function measurePage(contents: WebContents): Promise<PageGeometry> {
  return inCaptureWorld<PageGeometry>(
    contents,
    `(async () => {
      await document.fonts.ready;
      await ${NEXT_FRAME};
      const root = document.documentElement;
      const body = document.body;
      const vv = window.visualViewport;
      return {
        viewportX: vv ? vv.pageLeft : window.scrollX,
        viewportY: vv ? vv.pageTop : window.scrollY,
        viewportWidth: vv ? vv.width : window.innerWidth,
        viewportHeight: vv ? vv.height : window.innerHeight,
        scale: vv ? vv.scale : 1,
        fullHeight: Math.max(
          root ? root.scrollHeight : 0, root ? root.offsetHeight : 0, root ? root.clientHeight : 0,
          body ? body.scrollHeight : 0, body ? body.offsetHeight : 0, body ? body.clientHeight : 0,
        ),
      };
    })()`,
  );
}

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

/**
 * The visible viewport. `capturePage` copies the window's surface at the display's scale
 * factor, so it gives the preset's device pixels only when the two agree (a 1× desktop preset
 * on a 1× display) and the page is not zoomed; otherwise, or when the window was clamped to
 * the screen, the debugger renders the viewport at the preset's scale.
 */
export async function captureViewport(job: JobWindow, options: ShotOptions): Promise<Shot> {
  const { preset, viewport } = options;
  const geometry = await measurePage(job.contents);
  const displayScale = screen.getDisplayMatching(job.window.getBounds()).scaleFactor;
  if (displayScale === preset.deviceScaleFactor && geometry.scale === 1) {
    const native = await job.contents.capturePage();
    if (!native.isEmpty()) {
      const image = await encodeScreenshot(native.toPNG(), options.format, options.quality);
      const expected = { width: viewport.width * preset.deviceScaleFactor, height: viewport.height * preset.deviceScaleFactor };
      if (image.width === expected.width && image.height === expected.height) return { image, truncated: false };
    }
  }
  const { clip } = clipFor(geometry, { fullPage: false, maxHeight: viewport.height, format: options.format }, preset.deviceScaleFactor);
  return { image: await debuggerCapture(job, clip, false, options), truncated: false };
}

/**
 * The whole page, beyond the window, up to `maxHeight` CSS pixels (`truncated` when cut), in
 * one debugger call with `captureBeyondViewport`. Scroll first (scrollThroughPage) for lazy content.
 */
export async function captureFullPage(job: JobWindow, options: ShotOptions, maxHeight: number): Promise<Shot> {
  const geometry = await measurePage(job.contents);
  const { clip, truncated } = clipFor(
    geometry,
    { fullPage: true, maxHeight, format: options.format },
    options.preset.deviceScaleFactor,
  );
  return { image: await debuggerCapture(job, clip, true, options), truncated };
}

/**
 * Page.captureScreenshot as a quickly compressed PNG (`optimizeForSpeed`), re-encoded by the
 * shared encoder on libvips threads, as the Chromium engine does. Retried when Chromium answers
 * "Unable to capture screenshot", which it does now and then right after a layout change.
 */
async function debuggerCapture(job: JobWindow, clip: Clip, beyondViewport: boolean, options: ShotOptions): Promise<EncodedImage> {
  for (let attempt = 1; ; attempt++) {
    try {
      const { data } = (await job.contents.debugger.sendCommand('Page.captureScreenshot', {
        format: 'png',
        optimizeForSpeed: true,
        fromSurface: true,
        captureBeyondViewport: beyondViewport,
        clip,
      })) as { data: string };
      return await encodeScreenshot(Buffer.from(data, 'base64'), options.format, options.quality);
    } catch (err) {
      if (attempt >= 3 || !/Unable to capture screenshot/i.test(String(err))) throw err;
      await inCaptureWorld(job.contents, NEXT_FRAME);
    }
  }
}

/** The page's serialised HTML with its doctype, as Playwright's page.content() gives it. */
export function readPageSource(contents: WebContents): Promise<string> {
  return inCaptureWorld<string>(
    contents,
    `(() => (document.doctype ? new XMLSerializer().serializeToString(document.doctype) : '') +
      (document.documentElement ? document.documentElement.outerHTML : ''))()`,
  );
}
