// Scripts the ElectronEngine runs in the captured page, as source text for
// executeJavaScriptInIsolatedWorld. They must stay self-contained expressions. The scroll and
// measure scripts are the Chromium engine's own functions (server/capture/page-scripts.ts),
// serialised with a timer standing in for frames a hidden window may not render.
import { scrollThroughPage, settleAndMeasure } from '../server/capture/page-scripts.js';

/** One rendered frame, or 100 ms if no frame comes. */
export const NEXT_FRAME =
  'new Promise((resolve) => { requestAnimationFrame(() => setTimeout(resolve, 0)); setTimeout(resolve, 100); })';

/** Frames a hidden window may never render count as done after this long. */
const FRAME_FALLBACK_MS = 100;

/**
 * The Chromium engine's scroll-through (server/capture/page-scripts.ts) as source text, with
 * the frame fallback a hidden window needs.
 */
export function scrollThroughPageScript(options: { maxMs: number; maxHeight: number }): string {
  const args = { maxMs: Number(options.maxMs), maxHeight: Number(options.maxHeight), frameFallbackMs: FRAME_FALLBACK_MS };
  return `(${scrollThroughPage.toString()})(${JSON.stringify(args)})`;
}

/** The Chromium engine's settle-and-measure as source text: a PageGeometry. */
export const MEASURE_PAGE_SCRIPT = `(${settleAndMeasure.toString()})(${JSON.stringify({ frameFallbackMs: FRAME_FALLBACK_MS })})`;

/** The serialised page with its doctype, as Playwright's page.content() gives it. */
export const PAGE_SOURCE_SCRIPT = `(() =>
  (document.doctype ? new XMLSerializer().serializeToString(document.doctype) : '') +
  (document.documentElement ? document.documentElement.outerHTML : ''))()`;
