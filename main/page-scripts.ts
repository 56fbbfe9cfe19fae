// Scripts the ElectronEngine runs in the captured page, as source text for
// executeJavaScriptInIsolatedWorld. They must stay self-contained expressions. They mirror
// server/capture/page-scripts.ts, which the Chromium engine passes to page.evaluate, with one
// difference: a hidden window may not run animation frames, so a timer stands in for a frame.

/** One rendered frame, or 100 ms if no frame comes. */
export const NEXT_FRAME =
  'new Promise((resolve) => { requestAnimationFrame(() => setTimeout(resolve, 0)); setTimeout(resolve, 100); })';

/**
 * Scrolls down one screen at a time to the bottom (or `maxHeight` CSS pixels) so scroll
 * handlers and IntersectionObserver load lazy content, gives content that grows at the bottom
 * two frames, stops after `maxMs` wherever it is, and returns to the top.
 */
export function scrollThroughPageScript(options: { maxMs: number; maxHeight: number }): string {
  return `(async () => {
    const deadline = performance.now() + ${Number(options.maxMs)};
    const frame = () => ${NEXT_FRAME};
    const bottom = () => {
      const root = document.documentElement;
      const height = Math.max(root ? root.scrollHeight : 0, document.body ? document.body.scrollHeight : 0);
      return Math.max(0, Math.min(height, ${Number(options.maxHeight)}) - window.innerHeight);
    };
    let y = 0;
    let steps = 0;
    while (performance.now() < deadline) {
      if (y >= bottom()) {
        await frame();
        await frame();
        if (y >= bottom()) break;
      }
      y = Math.min(y + window.innerHeight, bottom());
      window.scrollTo({ top: y, left: 0, behavior: 'instant' });
      steps++;
      await frame();
    }
    window.scrollTo({ top: 0, left: 0, behavior: 'instant' });
    await frame();
    return steps;
  })()`;
}

/**
 * Waits for web fonts and one frame (the raw screenshot command right after load sometimes
 * fails without), then measures the visual viewport and the document: a PageGeometry.
 */
export const MEASURE_PAGE_SCRIPT = `(async () => {
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
})()`;

/** The serialised page with its doctype, as Playwright's page.content() gives it. */
export const PAGE_SOURCE_SCRIPT = `(() =>
  (document.doctype ? new XMLSerializer().serializeToString(document.doctype) : '') +
  (document.documentElement ? document.documentElement.outerHTML : ''))()`;
