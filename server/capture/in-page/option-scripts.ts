// Functions that run inside the captured page for the capture options (sent as source text by
// evaluate() in page-driver.ts). Like page-scripts.ts they stay self-contained: no imports, no
// closures over module scope. A selector the page's querySelector refuses is reported as
// 'invalid' (or, for injectStyles, the selector itself) so the job can say which.

/**
 * Resolves true once an element matching `selector` is visible (it has a box, and neither
 * `visibility: hidden` nor `display: none` on the way up), false after `timeoutMs`.
 */
export function waitForVisible({ selector, timeoutMs }: { selector: string; timeoutMs: number }): Promise<boolean | 'invalid'> {
  const visible = () => {
    for (const element of Array.from(document.querySelectorAll(selector))) {
      const rect = element.getBoundingClientRect();
      const style = getComputedStyle(element);
      if (rect.width > 0 && rect.height > 0 && style.visibility !== 'hidden' && style.display !== 'none') return true;
    }
    return false;
  };
  try {
    if (visible()) return Promise.resolve(true);
  } catch {
    return Promise.resolve('invalid');
  }
  return new Promise((resolve) => {
    const deadline = performance.now() + timeoutMs;
    const poll = () => {
      if (visible()) return resolve(true);
      if (performance.now() >= deadline) return resolve(false);
      setTimeout(poll, 50);
    };
    setTimeout(poll, 50);
  });
}

/** The viewport point at the centre of the first element matching `selector`, scrolled into view. */
export function clickPoint({ selector }: { selector: string }): { x: number; y: number } | null | 'invalid' {
  let element: Element | null;
  try {
    element = document.querySelector(selector);
  } catch {
    return 'invalid';
  }
  if (!element) return null;
  element.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  const rect = element.getBoundingClientRect();
  return { x: rect.left + rect.width / 2, y: rect.top + rect.height / 2 };
}

/** The first element matching `selector`, as a rectangle of the page in CSS px (scroll offsets added). */
export function elementRect({ selector }: { selector: string }): { x: number; y: number; width: number; height: number } | null | 'invalid' {
  let element: Element | null;
  try {
    element = document.querySelector(selector);
  } catch {
    return 'invalid';
  }
  if (!element) return null;
  const rect = element.getBoundingClientRect();
  return { x: rect.left + window.scrollX, y: rect.top + window.scrollY, width: rect.width, height: rect.height };
}

export interface StyleRequest {
  /** CSS from the request's `styles`. */
  css: string;
  /** Selectors whose elements get `visibility: hidden`. */
  hide: string[];
  /** Selectors whose elements are painted over by an opaque box (a monitor's masks). */
  mask: string[];
  /** Animations jump to their end, running transitions too, and new ones are off (`reduced_motion`). */
  freezeMotion: boolean;
}

/**
 * Adds one style element at the end of the document's head (so it wins over the page's own
 * rules of the same weight): the hiding rules, the frozen motion, then the request's CSS.
 * Returns the first hide selector the page cannot parse, or null.
 */
export function injectStyles({ css, hide, mask, freezeMotion }: StyleRequest): string | null {
  for (const selector of [...hide, ...mask]) {
    try {
      document.querySelector(selector);
    } catch {
      return selector;
    }
  }
  const rules: string[] = hide.map((selector) => `${selector} { visibility: hidden !important; }`);
  if (freezeMotion) {
    rules.push(
      '*, *::before, *::after { animation-delay: -1ms !important; animation-duration: 1ms !important; ' +
        'animation-iteration-count: 1 !important; transition-duration: 0s !important; transition-delay: 0s !important; ' +
        'scroll-behavior: auto !important; caret-color: transparent !important; }',
    );
  }
  if (css) rules.push(css);
  const style = document.createElement('style');
  style.setAttribute('data-screenshot-appliance', '');
  style.textContent = rules.join('\n');
  (document.head ?? document.documentElement).appendChild(style);
  // Masks: an opaque box over each matching element's border box, in document coordinates, above
  // everything, so what the element shows (a clock, an ad) is the same in every picture.
  const scrollX = window.scrollX;
  const scrollY = window.scrollY;
  for (const selector of mask) {
    for (const element of Array.from(document.querySelectorAll(selector))) {
      const box = element.getBoundingClientRect();
      if (box.width === 0 || box.height === 0) continue;
      const cover = document.createElement('div');
      cover.setAttribute('data-screenshot-appliance-mask', '');
      cover.style.cssText =
        `position:absolute;left:${box.left + scrollX}px;top:${box.top + scrollY}px;width:${box.width}px;height:${box.height}px;` +
        'background:#808080;z-index:2147483647;pointer-events:none;margin:0;padding:0;border:0;';
      document.documentElement.appendChild(cover);
    }
  }
  // One forced layout so measurements taken next see the new rules.
  void document.documentElement.getBoundingClientRect();
  // A transition already running (a fade-in started at load) keeps its duration when the rule
  // above arrives; it is brought to its end instead.
  if (freezeMotion) {
    for (const animation of document.getAnimations()) if (animation instanceof CSSTransition) animation.finish();
  }
  return null;
}
