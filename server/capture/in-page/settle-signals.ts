// The page-side half of the wait for a settled page (pipeline/settle.ts): functions that run
// inside the captured page (sent as source text by evaluate() in page-driver.ts, or installed as
// an init script). They must stay self-contained: no imports, no closures over module scope.

/**
 * An init script for every document: notes when the document last changed (a node added or
 * removed, an attribute or a text changed), when a script last asked for an animation frame from
 * within one (an animation loop drawn by script: a canvas, a style changed every frame), and the
 * work a script has put off for a moment: timeouts of up to a second set outside a timeout (an
 * app that draws its rows from a timer once its data came, a step that waits before the next
 * request) and frames asked for outside a frame, not drawn yet. A timeout set by a timeout (a
 * refresh loop, a clock), one whose callback a timeout already ran (a poll re-armed once its
 * answer came), a frame asked for by a frame (an animation loop) and intervals are not counted:
 * they never end. Nothing of what the page sees changes: requestAnimationFrame,
 * cancelAnimationFrame, setTimeout and clearTimeout are wrapped in proxies of the native
 * functions, so they still look native. Read by pageActivity through a registered symbol on the
 * window.
 */
export function watchDocumentChanges(): void {
  const mark = Symbol.for('screenshot-appliance.last-change');
  const seen = { count: 0, last: 0, loop: -1e9 };
  const observer = new MutationObserver(() => {
    seen.count++;
    seen.last = performance.now();
  });
  observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  let inFrame = false;
  // Frames asked for outside a frame and not drawn yet.
  const framesAsked = new Set<unknown>();
  const descriptor = Object.getOwnPropertyDescriptor(window, 'requestAnimationFrame');
  if (descriptor && typeof descriptor.value === 'function') {
    const native = descriptor.value as typeof window.requestAnimationFrame;
    const proxy = new Proxy(native, {
      apply(target, self, args: unknown[]) {
        if (inFrame) seen.loop = performance.now();
        const callback = args[0];
        if (typeof callback !== 'function') return Reflect.apply(target, self, args);
        const id: unknown = Reflect.apply(target, self, [
          (time: number) => {
            framesAsked.delete(id);
            inFrame = true;
            try {
              return (callback as (time: number) => unknown)(time);
            } finally {
              inFrame = false;
            }
          },
        ]);
        // A frame asked for from a frame is an animation loop's, which never ends: not waited for.
        if (!inFrame) framesAsked.add(id);
        return id;
      },
    });
    Object.defineProperty(window, 'requestAnimationFrame', { ...descriptor, value: proxy });
  }
  // Timeouts put off work for a moment: id → when it is due.
  const putOff = new Map<unknown, number>();
  // Callbacks a timeout has run: one set again is a loop (a poll re-armed once its answer came), not work put off.
  const ran = new WeakSet<object>();
  let inTimeout = false;
  const wrap = (name: 'setTimeout' | 'clearTimeout' | 'cancelAnimationFrame', apply: (target: (...args: unknown[]) => unknown, self: unknown, args: unknown[]) => unknown) => {
    const own = Object.getOwnPropertyDescriptor(window, name);
    if (!own || typeof own.value !== 'function') return;
    Object.defineProperty(window, name, { ...own, value: new Proxy(own.value as (...args: unknown[]) => unknown, { apply }) });
  };
  wrap('setTimeout', (target, self, args) => {
    const [callback, delay, ...rest] = args;
    if (typeof callback !== 'function') return Reflect.apply(target, self, args);
    const ms = Number(delay) || 0;
    const counted = !inTimeout && ms <= 1000 && !ran.has(callback);
    const id = Reflect.apply(target, self, [
      (...params: unknown[]) => {
        putOff.delete(id);
        ran.add(callback);
        const outer = inTimeout;
        inTimeout = true;
        try {
          return (callback as (...params: unknown[]) => unknown)(...params);
        } finally {
          inTimeout = outer;
        }
      },
      delay,
      ...rest,
    ]);
    if (counted) putOff.set(id, performance.now() + ms);
    return id;
  });
  wrap('clearTimeout', (target, self, args) => {
    putOff.delete(args[0]);
    return Reflect.apply(target, self, args);
  });
  wrap('cancelAnimationFrame', (target, self, args) => {
    framesAsked.delete(args[0]);
    return Reflect.apply(target, self, args);
  });
  const read = () => {
    const now = performance.now();
    let timeouts = 0;
    // A timeout long overdue belongs to a page too busy to run it, or to a window that runs none: not waited for.
    for (const [id, due] of putOff) if (now - due > 1000) putOff.delete(id);
    else timeouts++;
    return { count: seen.count, sinceMs: now - seen.last, sinceLoopMs: now - seen.loop, timeouts, frames: framesAsked.size };
  };
  Object.defineProperty(window, mark, { value: read, configurable: true, enumerable: false });
}

/** What the page tells of its own activity, for the wait for a settled page. */
export interface PageActivity {
  /** Web fonts of the document, and of every frame of the same origin, are loaded. */
  fontsReady: boolean;
  /**
   * How many times the document has changed (watchDocumentChanges: batches of changes), how
   * long ago it last did, how long ago a script last asked for a frame from within one, in ms,
   * how many timeouts put work off for a moment (up to a second, set outside a timeout), and how
   * many frames a script asked for (outside a frame) that have not been drawn yet.
   */
  changes: { count: number; sinceMs: number; sinceLoopMs: number; timeouts: number; frames: number };
  /**
   * Something in the viewport may change the picture without changing the document: a canvas,
   * a video, a frame, an embed or object, an animation (CSS or script) that will end, or a
   * script drawing frame after frame.
   */
  drawsItself: boolean;
  /** The viewport, in CSS px of the document. */
  viewport: { x: number; y: number; width: number; height: number };
}

/** Reads PageActivity. */
export function pageActivity(): PageActivity {
  const fontsLoaded = (doc: Document) => !doc.fonts || doc.fonts.status === 'loaded';
  let fontsReady = fontsLoaded(document);
  for (let i = 0; fontsReady && i < window.frames.length; i++) {
    try {
      const doc = window.frames[i]!.document;
      if (doc) fontsReady = fontsLoaded(doc);
    } catch {
      // A frame of another origin keeps its fonts to itself.
    }
  }
  const watched = (window as unknown as Record<symbol, (() => PageActivity['changes']) | undefined>)[Symbol.for('screenshot-appliance.last-change')];
  const changes = typeof watched === 'function' ? watched() : { count: 0, sinceMs: 1e9, sinceLoopMs: 1e9, timeouts: 0, frames: 0 };
  const vv = window.visualViewport;
  const viewport = {
    x: vv ? vv.pageLeft : window.scrollX,
    y: vv ? vv.pageTop : window.scrollY,
    width: vv ? vv.width : window.innerWidth,
    height: vv ? vv.height : window.innerHeight,
  };
  // A script drawing frame after frame (the loop asked for a frame within the last few frames).
  let drawsItself = changes.sinceLoopMs < 100;
  const inView = (element: Element) => {
    const r = element.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && r.bottom > 0 && r.right > 0 && r.top < viewport.height && r.left < viewport.width;
  };
  for (const element of drawsItself ? [] : Array.from(document.querySelectorAll('canvas, video, iframe, embed, object'))) {
    if (inView(element)) {
      drawsItself = true;
      break;
    }
  }
  if (!drawsItself && typeof document.getAnimations === 'function') {
    for (const animation of document.getAnimations()) {
      const timing = animation.effect ? animation.effect.getComputedTiming() : null;
      if (animation.playState === 'running' && timing && timing.endTime !== Infinity) {
        drawsItself = true;
        break;
      }
    }
  }
  return { fontsReady, changes, drawsItself, viewport };
}
