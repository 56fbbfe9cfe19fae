// Functions that run inside the captured page (passed to page.evaluate). They must stay
// self-contained: no imports, no closures over module scope, plain syntax.

export interface ScrollOptions {
  /** Stop scrolling after this long, wherever we are. */
  maxMs: number;
  /** Do not scroll past this many CSS pixels (the full-page height cap). */
  maxHeight: number;
  /**
   * Count a frame as done after this long even if none was rendered: a hidden Electron window
   * may run no animation frames. @default 0 (wait for the frame)
   */
  frameFallbackMs?: number;
}

/**
 * Scrolls down one screen at a time to the bottom (or `maxHeight`), giving each step one
 * rendered frame so IntersectionObserver and scroll handlers load lazy content, waits at the
 * bottom for content that grows, then returns to the top.
 */
export async function scrollThroughPage({ maxMs, maxHeight, frameFallbackMs = 0 }: ScrollOptions): Promise<number> {
  const deadline = performance.now() + maxMs;
  const frame = () =>
    new Promise<void>((resolve) => {
      requestAnimationFrame(() => setTimeout(resolve, 0));
      if (frameFallbackMs > 0) setTimeout(resolve, frameFallbackMs);
    });
  const bottom = () => {
    const root = document.documentElement;
    const height = Math.max(root ? root.scrollHeight : 0, document.body ? document.body.scrollHeight : 0);
    return Math.max(0, Math.min(height, maxHeight) - window.innerHeight);
  };
  let y = 0;
  let steps = 0;
  while (performance.now() < deadline) {
    if (y >= bottom()) {
      // A page that appends content at the bottom gets two frames to do so.
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
}

export interface PageGeometry {
  /** Visible area in CSS pixels of the page and where it starts. */
  viewportX: number;
  viewportY: number;
  viewportWidth: number;
  viewportHeight: number;
  /** Pinch-zoom scale; below 1 when a mobile page without a viewport meta tag is zoomed out. */
  scale: number;
  /** The document's full height in CSS pixels. */
  fullHeight: number;
}

/**
 * Waits for web fonts and one rendered frame, then measures the page. Without the wait,
 * Page.captureScreenshot right after load sometimes fails with "Unable to capture screenshot".
 * `frameFallbackMs` as in ScrollOptions.
 */
export async function settleAndMeasure({ frameFallbackMs = 0 }: { frameFallbackMs?: number } = {}): Promise<PageGeometry> {
  await document.fonts.ready;
  await new Promise<void>((resolve) => {
    requestAnimationFrame(() => resolve());
    if (frameFallbackMs > 0) setTimeout(resolve, frameFallbackMs);
  });
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
      root ? root.scrollHeight : 0,
      root ? root.offsetHeight : 0,
      root ? root.clientHeight : 0,
      body ? body.scrollHeight : 0,
      body ? body.offsetHeight : 0,
      body ? body.clientHeight : 0,
    ),
  };
}
