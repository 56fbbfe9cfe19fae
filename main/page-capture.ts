import { screen, type WebContents } from 'electron';
import type { ImageFormat } from '../server/capture/engine.js';
import { encodeScreenshot, type EncodedImage } from '../server/capture/image-encoder.js';
import type { PageGeometry } from '../server/capture/page-scripts.js';
import type { Preset } from '../server/capture/presets.js';
import { clipFor, type Clip } from '../server/capture/capture-clip.js';
import type { JobWindow } from './job-window.js';
import { MEASURE_PAGE_SCRIPT, NEXT_FRAME, PAGE_SOURCE_SCRIPT, scrollThroughPageScript } from './page-scripts.js';

// Our scripts run in their own JavaScript world: the page shares the DOM with them but cannot
// replace the functions they call (scrollTo, XMLSerializer, setTimeout).
const CAPTURE_WORLD_ID = 1001;

function inCaptureWorld<T>(contents: WebContents, code: string): Promise<T> {
  return contents.executeJavaScriptInIsolatedWorld(CAPTURE_WORLD_ID, [{ code }]) as Promise<T>;
}

/** Scrolls through the page for lazy content, then back to the top (see page-scripts.ts). */
export async function scrollThroughPage(contents: WebContents, options: { maxMs: number; maxHeight: number }): Promise<void> {
  await inCaptureWorld(contents, scrollThroughPageScript(options));
}

/** Waits for fonts and a frame, then measures the visual viewport and the document. */
export function measurePage(contents: WebContents): Promise<PageGeometry> {
  return inCaptureWorld<PageGeometry>(contents, MEASURE_PAGE_SCRIPT);
}

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
  return inCaptureWorld<string>(contents, PAGE_SOURCE_SCRIPT);
}
