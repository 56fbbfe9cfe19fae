import { CaptureError } from '../capture-errors.js';
import { nextFrame, sourceLength } from '../in-page/page-scripts.js';
import type { Clip } from './capture-clip.js';
import { evaluate, type PageDriver } from './page-driver.js';

/**
 * A PNG from Page.captureScreenshot. For a PNG result Chromium's own encoding is kept as it is:
 * measured on 2-core machines with Chromium 156, capturing with `optimizeForSpeed` and
 * re-encoding with sharp cost more CPU per capture (146/947/350 ms against 67/606/97 ms on the
 * benchmark's three pages) than it saved, for files 0.81–0.93 of the size. For JPEG and WebP
 * the PNG only feeds the encoder, so it is taken with `optimizeForSpeed` (`fast`). Retried when
 * Chromium answers "Unable to capture screenshot", which it does now and then right after a
 * layout change, until the next frame (or `frameFallbackMs`, for a window that renders none).
 */
export async function screenshot(
  driver: PageDriver,
  clip: Clip,
  options: { beyondViewport: boolean; fast: boolean; frameFallbackMs: number },
): Promise<Buffer> {
  for (let attempt = 1; ; attempt++) {
    try {
      const { data } = await driver.send('Page.captureScreenshot', {
        format: 'png',
        optimizeForSpeed: options.fast,
        captureBeyondViewport: options.beyondViewport,
        clip,
      });
      return Buffer.from(data, 'base64');
    } catch (err) {
      if (attempt >= 3 || !/Unable to capture screenshot/i.test(String(err))) throw err;
      await evaluate(driver, nextFrame, { frameFallbackMs: options.frameFallbackMs });
    }
  }
}

/**
 * The page's markup as Chromium serialises its document (DOM.getOuterHTML of the document node):
 * the doctype and the root element, as `page.content()` gives them, and any comment beside them;
 * null when it is longer than `maxBytes`. Its length is measured in the page first
 * (sourceLength), so a source over the bound never crosses (a page decides its size, and JSON's
 * escapes can make one character six); one that still comes back too large (a page that lied
 * about its length, or grew in between) is null too. On a fresh page getOuterHTML takes 8–9 ms
 * where `page.content()`, which first installs playwright's helper script in a world of its own,
 * takes 25–34 ms (the benchmark's small and 10,000 px pages), and about 20 ms less CPU.
 */
export async function documentSource(driver: PageDriver, maxBytes: number): Promise<string | null> {
  // A UTF-8 byte is at most one UTF-16 unit: a length over the bound is a size over it. A page
  // that broke the measuring is read all the same: PipeGuard and the check below bound it.
  const length = await evaluate(driver, sourceLength, null).catch(() => 0);
  if (length > maxBytes) return null;
  const { root } = await driver.send('DOM.getDocument', { depth: 0 });
  try {
    const { outerHTML } = await driver.send('DOM.getOuterHTML', { nodeId: root.nodeId });
    return Buffer.byteLength(outerHTML, 'utf8') <= maxBytes ? outerHTML : null;
  } catch (err) {
    if (err instanceof CaptureError) return null;
    throw err;
  }
}
