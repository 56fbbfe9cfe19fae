// Functions that run inside the captured page (sent as source text by evaluate() in
// page-driver.ts). They must stay self-contained: no imports, no closures over module scope,
// plain syntax.

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
  /**
   * Scroll only a page that may load content as it is scrolled into view; every other page
   * returns at once. A page qualifies when it is taller than the window and has native lazy
   * images or frames, any frame, embed or object (whose own scripts cannot be seen from here),
   * a scroll handler property on the window or the document, or scripts that observe
   * intersections or listen for scrolling, as watchLazyLoading() notes when it is installed as
   * an init script in the page's own world. @default false (always scroll)
   */
  onlyWhenLazy?: boolean;
  /**
   * The page's height where an earlier pass ended: scrolling starts from the screen that
   * showed its bottom, not from the top. @default 0
   */
  from?: number;
}

/**
 * An init script for the page's own world: notes, without changing what the page sees, when
 * the page observes an element's intersection with the viewport or listens for scroll events
 * on the window or the document — the two ways scripts load content as it scrolls into view.
 * The wrappers are proxies of the native functions, so they still look native to the page.
 */
export function watchLazyLoading(): void {
  // The same registered symbol as in scrollThroughPage: both functions must stay self-contained.
  const mark = Symbol.for('screenshot-appliance.loads-on-scroll');
  const note = () => {
    Object.defineProperty(window, mark, { value: true, configurable: true, enumerable: false });
  };
  const wrap = (owner: object, name: string, when: (self: unknown, args: unknown[]) => boolean) => {
    const descriptor = Object.getOwnPropertyDescriptor(owner, name);
    if (!descriptor || typeof descriptor.value !== 'function') return;
    const original = descriptor.value as (...args: unknown[]) => unknown;
    const proxy = new Proxy(original, {
      apply(target, self, args: unknown[]) {
        if (when(self, args)) note();
        return Reflect.apply(target, self, args);
      },
    });
    Object.defineProperty(owner, name, { ...descriptor, value: proxy });
  };
  if (typeof IntersectionObserver === 'function') wrap(IntersectionObserver.prototype, 'observe', () => true);
  if (typeof EventTarget === 'function') {
    wrap(
      EventTarget.prototype,
      'addEventListener',
      (self, args) =>
      // An unqualified addEventListener(...) call in a strict script passes no `this`: the window.
      (self === undefined || self === window || self === document) && args[0] === 'scroll',
    );
  }
}

/** What a pass of scrollThroughPage did. */
export interface ScrollPass {
  /** Screens scrolled to (0: the page was not scrolled). */
  steps: number;
  /**
   * How far down the page the pass saw, in CSS px, when it turned back to the top: content
   * below this (come since, as it returned) is for another pass.
   */
  reached: number;
}

/**
 * Scrolls down one screen at a time to the bottom (or `maxHeight`), giving each step one
 * rendered frame so IntersectionObserver and scroll handlers load lazy content, waits at the
 * bottom for content that grows, then returns to the top; when the top then shows other than it
 * did (a header pinned on the way down, its unpinning missed), it goes down and back once more.
 */
export async function scrollThroughPage({ maxMs, maxHeight, frameFallbackMs = 0, onlyWhenLazy = false, from = 0 }: ScrollOptions): Promise<ScrollPass> {
  const loadsOnScroll = () => {
    const root = document.documentElement;
    const height = Math.max(root ? root.scrollHeight : 0, document.body ? document.body.scrollHeight : 0);
    if (height <= window.innerHeight) return false;
    const marks = window as unknown as Record<symbol, unknown>;
    return (
      marks[Symbol.for('screenshot-appliance.loads-on-scroll')] === true ||
      typeof window.onscroll === 'function' ||
      typeof document.onscroll === 'function' ||
      document.querySelector('[loading="lazy" i], iframe, frame, object, embed') !== null
    );
  };
  if (onlyWhenLazy && !loadsOnScroll()) return { steps: 0, reached: 0 };
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
  /** What the first screen shows: the tags and classes at a few points, with their ancestors. */
  const firstScreen = () => {
    const seen: string[] = [];
    for (const fy of [0.02, 0.25, 0.5]) {
      for (const fx of [0.1, 0.5, 0.9]) {
        for (const el of document.elementsFromPoint(window.innerWidth * fx, window.innerHeight * fy)) seen.push(`${el.tagName}.${el.getAttribute('class') ?? ''}`);
      }
    }
    return seen.join(' ');
  };
  const atTop = window.scrollY === 0 ? firstScreen() : null;
  const began = performance.now();
  let y = Math.max(0, Math.min(from, maxHeight) - window.innerHeight);
  let steps = 0;
  if (y > 0) {
    // Back to where the last pass ended: what loads as the bottom comes into view loads again.
    window.scrollTo({ top: y, left: 0, behavior: 'instant' });
    steps++;
    await frame();
  }
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
  const reached = Math.min(y, bottom()) + window.innerHeight;
  window.scrollTo({ top: 0, left: 0, behavior: 'instant' });
  await frame();
  if (steps > 0 && atTop !== null && firstScreen() !== atTop) {
    // The page changed what the top shows on the way down (a header it pinned) and missed the
    // return: scripts that ignore changes for a while after making one (against flicker) drop
    // a scroll back within that while. Go down one screen and come back once it has passed.
    window.scrollTo({ top: Math.min(window.innerHeight, bottom()), left: 0, behavior: 'instant' });
    await frame();
    await frame();
    await new Promise((resolve) => setTimeout(resolve, Math.max(100, began + 250 - performance.now())));
    window.scrollTo({ top: 0, left: 0, behavior: 'instant' });
    await frame();
    await frame();
  }
  return { steps, reached };
}

/** The document's height in CSS pixels, as scrollThroughPage measures it. */
export function documentHeight(): number {
  const root = document.documentElement;
  return Math.max(root ? root.scrollHeight : 0, document.body ? document.body.scrollHeight : 0);
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

export interface SettleOptions {
  /** `frameFallbackMs` as in ScrollOptions. @default 0 */
  frameFallbackMs?: number;
  /**
   * Wait for one rendered frame before measuring. The Chromium engine does not: its
   * Page.captureScreenshot waits for a new frame itself and is retried after a frame on the
   * rare "Unable to capture screenshot" right after load (not seen once in the benchmark's
   * captures); the frame cost 16–19 ms of every capture. @default true
   */
  waitForFrame?: boolean;
}

/** Waits for web fonts (and by default one rendered frame), then measures the page. */
export async function settleAndMeasure({ frameFallbackMs = 0, waitForFrame = true }: SettleOptions = {}): Promise<PageGeometry> {
  await document.fonts.ready;
  if (waitForFrame) {
    await new Promise<void>((resolve) => {
      requestAnimationFrame(() => resolve());
      if (frameFallbackMs > 0) setTimeout(resolve, frameFallbackMs);
    });
  }
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

/**
 * Resolves after one rendered frame, or after `frameFallbackMs` when that is set and no frame
 * came first (a hidden window may render none).
 */
export function nextFrame({ frameFallbackMs = 0 }: { frameFallbackMs?: number }): Promise<void> {
  return new Promise<void>((resolve) => {
    requestAnimationFrame(() => setTimeout(resolve, 0));
    if (frameFallbackMs > 0) setTimeout(resolve, frameFallbackMs);
  });
}

/** What a completed job reports of the page it captured. */
export interface PageFacts {
  /** The document's address, after redirects. */
  url: string;
  /** `document.title` ('' when none). */
  title: string;
}

/** The captured document's address and title. */
export function pageFacts(): PageFacts {
  // A title is the page's to make as long as it likes; a warning or a status needs its start.
  return { url: location.href, title: document.title.slice(0, 4096) };
}

/**
 * The length in UTF-16 units of the document's markup as DOM.getOuterHTML serialises it, or a
 * little less (never more): the root element's, every comment's beside it, and the doctype's
 * name (its rare public and system ids left out). The page serialises its
 * elements itself, so nothing of it crosses but a number. No function a page may replace is
 * called but the serialiser itself.
 */
export function sourceLength(): number {
  let length = 0;
  const nodes = document.childNodes;
  for (let i = 0; i < nodes.length; i++) {
    const node = nodes[i];
    if (node.nodeType === Node.ELEMENT_NODE) length += (node as Element).outerHTML.length;
    else if (node.nodeType === Node.COMMENT_NODE) length += (node as Comment).data.length + 7;
    else if (node.nodeType === Node.DOCUMENT_TYPE_NODE) length += (node as DocumentType).name.length + 11;
  }
  return length;
}

/**
 * Renders content the page lets the browser skip while off screen (`content-visibility: auto`,
 * as documentation sites use): such sections keep their placeholder size
 * (`contain-intrinsic-size`) until scrolled near and are not painted in a full-page capture,
 * which then measures the placeholders' height and shows blank screens below the first ones.
 * Each element whose computed value is `auto`, in the document and its open shadow roots, is
 * made `visible`, so it lays out at its real size before the page is scrolled and measured;
 * `hidden` content stays hidden. The override is a paused Web Animation, not a style sheet or
 * a style attribute, so the document's markup (the job's page source) is left as the page made
 * it; an element whose `auto` is `!important` (which outranks animations) gets an inline
 * `!important` instead. Returns how many elements were made visible.
 */
export function renderSkippedContent(): number {
  const isAuto = (element: Element) => getComputedStyle(element).contentVisibility === 'auto';
  const found: Element[] = [];
  const roots: Array<Document | ShadowRoot> = [document];
  for (let root = roots.pop(); root; root = roots.pop()) {
    for (const element of Array.from(root.querySelectorAll('*'))) {
      if (isAuto(element)) found.push(element);
      if (element.shadowRoot) roots.push(element.shadowRoot);
    }
  }
  for (const element of found) {
    if (typeof element.animate === 'function') {
      const visible = { contentVisibility: 'visible' } as Keyframe;
      element.animate([visible, visible], { duration: 1e12, fill: 'both' }).pause();
    }
    if (isAuto(element) && (element instanceof HTMLElement || element instanceof SVGElement)) element.style.setProperty('content-visibility', 'visible', 'important');
  }
  return found.length;
}

/**
 * Lets a full page show an app whose document does not scroll but one main container does (a
 * web mail, a chat, a documentation viewer with its own scrolling pane): when the document fits
 * the window and an element that scrolls its overflow covers at least half of it, the largest
 * such element is given its content's height, and its ancestors let it grow (their height, their
 * maximum and their overflow), so the document is as tall as that content and the full page shows
 * all of it. Like renderSkippedContent the overrides are paused Web Animations, so the page
 * source is left as the page made it. Returns how many CSS pixels the container grew (0: none).
 */
export function expandScrollingContainer(): number {
  const root = document.documentElement;
  if (!root || !document.body) return 0;
  const viewportHeight = window.innerHeight;
  const viewportArea = window.innerWidth * viewportHeight;
  if (Math.max(root.scrollHeight, document.body.scrollHeight) > viewportHeight + 1) return 0;
  let best: HTMLElement | null = null;
  let bestArea = 0;
  for (const element of Array.from(document.body.querySelectorAll('*'))) {
    if (!(element instanceof HTMLElement) || element.scrollHeight <= element.clientHeight + 1) continue;
    const overflowY = getComputedStyle(element).overflowY;
    if (overflowY !== 'auto' && overflowY !== 'scroll') continue;
    const rect = element.getBoundingClientRect();
    const visible = Math.max(0, Math.min(rect.bottom, viewportHeight) - Math.max(rect.top, 0)) * Math.max(0, Math.min(rect.right, window.innerWidth) - Math.max(rect.left, 0));
    if (visible >= viewportArea / 2 && visible > bestArea) {
      best = element;
      bestArea = visible;
    }
  }
  if (!best) return 0;
  const grow = best.scrollHeight - best.clientHeight;
  const set = (element: Element, style: Record<string, string>) => {
    const frame = style as Keyframe;
    element.animate([frame, frame], { duration: 1e12, fill: 'both' }).pause();
  };
  const height = `${best.getBoundingClientRect().height + grow}px`;
  set(best, { height, minHeight: height, maxHeight: 'none', flexBasis: 'auto', flexShrink: '0', overflow: 'visible' });
  for (let element = best.parentElement; element; element = element.parentElement) {
    set(element, { height: 'auto', minHeight: '100%', maxHeight: 'none', overflow: 'visible' });
  }
  return grow;
}
