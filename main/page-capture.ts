import { screen, type WebContents } from 'electron';
import type { ImageFormat } from '../server/capture/engine.js';
import type { Preset } from '../server/capture/presets.js';
import type { Viewport } from './device-emulation.js';
import { encodedSize, encodeNativeImage } from './image-encoding.js';
import type { JobWindow } from './job-window.js';

export interface Shot {
  image: Buffer;
  /** Device pixels. */
  width: number;
  height: number;
  truncated: boolean;
}

export interface ShotOptions {
  preset: Preset;
  viewport: Viewport;
  format: ImageFormat;
  quality: number;
}

// Our scripts run in their own JavaScript world: the page shares the DOM with them but cannot
// replace the functions they call (scrollTo, XMLSerializer, setTimeout).
const CAPTURE_WORLD_ID = 1001;

// Lazy content and the raw capture both need a painted frame; a hidden window may not run
// animation frames, so the timer is the fallback.
const NEXT_FRAME = 'new Promise((resolve) => { requestAnimationFrame(() => resolve()); setTimeout(resolve, 100); })';

/** Scrolling steps at most; with the viewport as the step this covers any height cap. */
const MAX_SCROLL_STEPS = 400;

function inCaptureWorld<T>(contents: WebContents, code: string): Promise<T> {
  return contents.executeJavaScriptInIsolatedWorld(CAPTURE_WORLD_ID, [{ code }]) as Promise<T>;
}

/** Waits for web fonts and one frame, which the raw screenshot command needs right after load. */
export async function settle(contents: WebContents): Promise<void> {
  await inCaptureWorld(contents, `(async () => { await document.fonts.ready; await ${NEXT_FRAME}; })()`);
}

/**
 * Scrolls down one viewport at a time to the bottom (or the height cap) so lazy images and
 * infinite lists load, then back to the top. The bottom is re-read every step because
 * content that appears while scrolling makes the page taller.
 */
export async function scrollForLazyContent(contents: WebContents, maxHeight: number): Promise<void> {
  await inCaptureWorld(
    contents,
    `(async () => {
      const root = document.scrollingElement || document.documentElement;
      if (!root) return;
      let y = 0;
      for (let step = 0; step < ${MAX_SCROLL_STEPS}; step++) {
        const bottom = Math.min(root.scrollHeight, ${maxHeight}) - innerHeight;
        if (y >= bottom) break;
        y = Math.min(y + innerHeight, bottom);
        scrollTo(0, y);
        await ${NEXT_FRAME};
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
      scrollTo(0, 0);
      await ${NEXT_FRAME};
    })()`,
  );
}

/**
 * The visible viewport. `capturePage` copies the window's surface at the display's scale
 * factor, so it gives the preset's device pixels only when the two agree (a 1× desktop
 * preset on a 1× display); otherwise, or when the window was clamped to the screen, the
 * debugger renders the viewport at the preset's scale.
 */
export async function captureViewport(job: JobWindow, options: ShotOptions): Promise<Shot> {
  const { preset, viewport } = options;
  const expected = { width: viewport.width * preset.deviceScaleFactor, height: viewport.height * preset.deviceScaleFactor };
  const displayScale = screen.getDisplayMatching(job.window.getBounds()).scaleFactor;
  if (displayScale === preset.deviceScaleFactor) {
    await settle(job.contents);
    const native = await job.contents.capturePage();
    if (!native.isEmpty()) {
      const image = await encodeNativeImage(native, options.format, options.quality);
      const size = await encodedSize(image);
      if (size.width === expected.width && size.height === expected.height) return { image, ...size, truncated: false };
    }
  }
  return debuggerCapture(job.contents, options, null);
}

/**
 * The whole page, beyond the window, up to `maxHeight` CSS pixels (`truncated` when cut).
 * Scrolls first so lazy content is there, then measures and captures in one debugger call.
 */
export async function captureFullPage(job: JobWindow, options: ShotOptions, maxHeight: number): Promise<Shot> {
  await scrollForLazyContent(job.contents, maxHeight);
  const metrics = (await job.contents.debugger.sendCommand('Page.getLayoutMetrics')) as LayoutMetrics;
  const contentHeight = Math.ceil((metrics.cssContentSize ?? metrics.contentSize).height);
  const height = Math.min(Math.max(contentHeight, options.viewport.height), maxHeight);
  const shot = await debuggerCapture(job.contents, options, height);
  return { ...shot, truncated: contentHeight > maxHeight };
}

interface LayoutMetrics {
  contentSize: { width: number; height: number };
  cssContentSize?: { width: number; height: number };
}

/**
 * `Page.captureScreenshot` at the preset's scale (the debugger knows the device, see
 * emulateDevice). With `height` it captures the document from the top, beyond the viewport;
 * with null, the viewport where the page is scrolled to. It encodes png, jpeg and webp
 * itself, so the image needs no second pass.
 */
async function debuggerCapture(contents: WebContents, options: ShotOptions, height: number | null): Promise<Shot> {
  // The clip is in document coordinates.
  const [x, y] =
    height === null ? await inCaptureWorld<[number, number]>(contents, '[window.scrollX, window.scrollY]') : [0, 0];
  const params: Record<string, unknown> = {
    format: options.format,
    fromSurface: true,
    captureBeyondViewport: height !== null,
    clip: { x, y, width: options.viewport.width, height: height ?? options.viewport.height, scale: 1 },
  };
  if (options.format !== 'png') params.quality = options.quality;
  let result: { data: string };
  try {
    await settle(contents);
    result = (await contents.debugger.sendCommand('Page.captureScreenshot', params)) as { data: string };
  } catch (err) {
    // Chromium sometimes has no frame to copy yet ("Unable to capture screenshot"); one more
    // frame is enough.
    if (!/Unable to capture screenshot/i.test(String((err as Error)?.message))) throw err;
    await settle(contents);
    result = (await contents.debugger.sendCommand('Page.captureScreenshot', params)) as { data: string };
  }
  const image = Buffer.from(result.data, 'base64');
  return { image, ...(await encodedSize(image)), truncated: false };
}

/**
 * The page's serialised HTML with its doctype, or null when it is larger than `maxBytes`
 * (UTF-8), as CaptureResult.html promises.
 */
export async function readPageSource(contents: WebContents, maxBytes: number): Promise<string | null> {
  const html = await inCaptureWorld<string>(
    contents,
    `(() => (document.doctype ? new XMLSerializer().serializeToString(document.doctype) : '') +
      (document.documentElement ? document.documentElement.outerHTML : ''))()`,
  );
  return Buffer.byteLength(html, 'utf8') > maxBytes ? null : html;
}
