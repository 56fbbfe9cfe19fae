// The page-side half of a capture's warnings (capture-warnings.ts): a function that runs inside
// the captured page as the picture is taken (sent as source text by evaluate() in
// page-driver.ts). It must stay self-contained: no imports, no closures over module scope.

/** The part of the document the picture shows, in CSS pixels of the document. */
export interface ProbeArea {
  x: number;
  y: number;
  width: number;
  height: number;
  /** Whether to look for an overlay over the viewport (not for a PDF, which prints the document). */
  overlay: boolean;
  /** Addresses of images the capture blocked on purpose (block_ads, block_trackers): not counted. */
  blocked: string[];
}

/** What the page shows of itself at capture. */
export interface PageProbe {
  /**
   * Images in the area that failed to load, and those still loading; `shown`, all the images in
   * the area, and `missingShare`, the share (0–1) of their area in the picture that the missing
   * ones take (0 when they take none): a broken tracking pixel weighs nothing, a missing hero most.
   */
  images: { failed: number; loading: number; first: string | null; shown: number; missingShare: number };
  /** Families of web fonts that failed to load, and of those still loading. */
  fonts: { failed: string[]; loading: string[] };
  /**
   * The fixed element that hides the most of the page's content, and how much: `over`, the share
   * of the viewport's points (0–1) where fixed elements hide other content; `covered`, the share
   * where this one is the topmost element; `hidden`, the share of the points showing the page's
   * content (outside this element) at which it is on top.
   */
  overlay: { over: number; covered: number; hidden: number; element: string } | null;
  /** Loading states shown in the area (spinners, skeletons, "Loading…", charts without data): how many, the first few named. */
  placeholders: { count: number; first: string[] };
  /** Canvases in the area large enough to hold a chart, for the picture to be checked for blank ones. */
  canvases: CanvasInPicture[];
  /** The sign-in form that is the page's main content, named; null when there is none. */
  login: { form: string } | null;
}

/** A canvas of the page where the picture shows it: its name, and its rectangle as shares (0–1) of the picture's width and height. */
export interface CanvasInPicture {
  name: string;
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/** What a probe that could not run says: nothing (a page that broke the functions it calls still gets its picture). */
export const NOTHING_PROBED: PageProbe = {
  images: { failed: 0, loading: 0, first: null, shown: 0, missingShare: 0 },
  fonts: { failed: [], loading: [] },
  overlay: null,
  placeholders: { count: 0, first: [] },
  canvases: [],
  login: null,
};

/** Columns and rows of the grid of points the overlay is looked for at. */
const GRID = { columns: 16, rows: 12 };

/**
 * Looks at the page as it is captured:
 * - images: every `<img>` of the document that is rendered and meets `area`, and that is still
 *   loading (`complete` false) or finished without a picture (`naturalWidth` 0: failed or not an
 *   image); an `<img>` without any source, or whose address the capture blocked, is not counted.
 *   Every counted `<img>` in the area adds the part of its box the picture shows to the images'
 *   area, a missing one to the missing area too;
 * - fonts: the `FontFace`s of `document.fonts` whose status is `error` or `loading` (a face the
 *   page declares but never uses stays `unloaded` and is not counted);
 * - overlay: at a grid of points over the viewport, the topmost element and what is under it. A
 *   `position: fixed` element on top of other content of the page hides that content there; its
 *   share of the points that show the page's content (the content under it counted) says how
 *   much of what a reader would see it hides, even on a short page with little content. A fixed
 *   element with nothing but the page's background under it (an app shell holding the whole page,
 *   a header or sidebar beside the content) hides nothing;
 * - placeholders: loading states shown in the area: `aria-busy="true"`, indeterminate progress
 *   bars (`<progress>` without a value, `role="progressbar"` without `aria-valuenow`), elements
 *   with a class word of LOADING_WORDS or a class of LOADING_CLASSES, a waiting icon of LOADING_ICONS
 *   outside a button or link, an element whose whole text is "Loading…" (LOADING_TEXT), two or
 *   more large figures shown as a dash (BLANK_FIGURE: a gauge without its value), and `<svg>`
 *   charts with axes but no data marks. Each counts
 *   once, and not inside another one already counted;
 * - canvases: the rectangles of the canvases in the area of at least 60 × 40 CSS px, for Node to
 *   check the picture for blank ones (the page's own pixels are not read: a WebGL canvas reads
 *   back blank, a cross-origin one throws);
 * - login: a visible password field with a user-name field and a button in one form, which is the
 *   page's main content: its centre below the top eighth of the viewport and within its middle
 *   70 % across (not a header's or a sidebar's login box), at most 40 links outside it in the
 *   area, and at most 600 characters of visible text outside it, or twice its own.
 * Each part that throws (a page that broke a function it calls) finds nothing.
 */
export function probePage(args: ProbeArea & { grid: { columns: number; rows: number }; maxNodes: number }): PageProbe {
  const { x, y, width, height, grid, maxNodes } = args;
  const blocked = new Set(args.blocked);
  const sx = window.scrollX;
  const sy = window.scrollY;
  const root = document.documentElement;
  const body = document.body;
  const attempt = <T>(find: () => T, otherwise: T): T => {
    try {
      return find();
    } catch {
      return otherwise;
    }
  };
  // The attributes, not the properties: a form's `id` is its field named "id" when it has one.
  const nameOf = (e: Element) => {
    const id = e.getAttribute('id') ? `#${e.getAttribute('id')!.slice(0, 40)}` : '';
    const className = (e.getAttribute('class') ?? '').trim();
    const classes = !id && className ? `.${className.split(/\s+/).slice(0, 2).join('.').slice(0, 60)}` : '';
    return e.tagName.toLowerCase() + id + classes;
  };
  /** The element's box in the document when it is rendered, visible and meets the area; else null. */
  const shownBox = (e: Element, min = 1) => {
    const r = e.getBoundingClientRect();
    if (r.width < min || r.height < min) return null;
    const left = r.left + sx;
    const top = r.top + sy;
    if (left >= x + width || left + r.width <= x || top >= y + height || top + r.height <= y) return null;
    const visible = e.checkVisibility({ opacityProperty: true, visibilityProperty: true, checkOpacity: true, checkVisibilityCSS: true } as CheckVisibilityOptions);
    return visible ? { left, top, width: r.width, height: r.height, viewport: r } : null;
  };

  const images = { failed: 0, loading: 0, first: null as string | null, shown: 0, missingShare: 0 };
  let shownArea = 0;
  let missingArea = 0;
  for (const img of Array.from(document.images)) {
    const source = img.currentSrc || img.getAttribute('src') || img.getAttribute('srcset');
    if (!source || blocked.has(img.currentSrc) || blocked.has(img.src)) continue;
    if (img.getClientRects().length === 0 || getComputedStyle(img).visibility === 'hidden') continue;
    const r = img.getBoundingClientRect();
    const left = r.left + sx;
    const top = r.top + sy;
    if (left > x + width || left + r.width < x || top > y + height || top + r.height < y) continue;
    // The part of the image the picture shows.
    const area = Math.max(0, Math.min(left + r.width, x + width) - Math.max(left, x)) * Math.max(0, Math.min(top + r.height, y + height) - Math.max(top, y));
    images.shown++;
    shownArea += area;
    const loading = !img.complete;
    const failed = img.complete && img.naturalWidth === 0 && img.naturalHeight === 0;
    if (!loading && !failed) continue;
    missingArea += area;
    if (loading) images.loading++;
    else images.failed++;
    if (images.first === null) images.first = img.currentSrc || source;
  }
  images.missingShare = shownArea > 0 ? missingArea / shownArea : 0;

  const fonts = { failed: [] as string[], loading: [] as string[] };
  if (document.fonts) {
    document.fonts.forEach((face) => {
      const list = face.status === 'error' ? fonts.failed : face.status === 'loading' ? fonts.loading : null;
      const family = face.family.replace(/^["']|["']$/g, '');
      if (list && !list.includes(family)) list.push(family);
    });
  }

  const findOverlay = (): PageProbe['overlay'] => {
    if (!args.overlay || !body) return null;
    const viewWidth = root.clientWidth || window.innerWidth;
    const viewHeight = root.clientHeight || window.innerHeight;
    const fixedOf = new Map<Element, Element | null>();
    const fixedAncestor = (element: Element): Element | null => {
      const path: Element[] = [];
      let found: Element | null = null;
      for (let e: Element | null = element; e && e !== root && e !== body; e = e.parentElement) {
        if (fixedOf.has(e)) {
          found = fixedOf.get(e) ?? null;
          break;
        }
        path.push(e);
        if (getComputedStyle(e).position === 'fixed') {
          found = e;
          break;
        }
      }
      for (const e of path) fixedOf.set(e, found);
      return found;
    };
    const stacks: Element[][] = [];
    for (let row = 0; row < grid.rows; row++) {
      for (let column = 0; column < grid.columns; column++) {
        const at = document.elementsFromPoint(((column + 0.5) * viewWidth) / grid.columns, ((row + 0.5) * viewHeight) / grid.rows);
        stacks.push(at.filter((e) => e !== root && e !== body));
      }
    }
    /** Whether `e` is the page's content beside the fixed element `fixed`: neither inside it nor holding it. */
    const besides = (fixed: Element) => (e: Element) => !fixed.contains(e) && !e.contains(fixed);
    const hiding = new Map<Element, number>();
    const topmost = new Map<Element, number>();
    for (const stack of stacks) {
      const fixed = stack[0] ? fixedAncestor(stack[0]) : null;
      if (!fixed) continue;
      topmost.set(fixed, (topmost.get(fixed) ?? 0) + 1);
      if (stack.some(besides(fixed))) hiding.set(fixed, (hiding.get(fixed) ?? 0) + 1);
    }
    let total = 0;
    let largest: Element | null = null;
    for (const [element, count] of hiding) {
      total += count;
      if (!largest || count > (hiding.get(largest) ?? 0)) largest = element;
    }
    if (!largest || stacks.length === 0) return null;
    const content = stacks.filter((stack) => stack.some(besides(largest))).length;
    return {
      over: total / stacks.length,
      covered: (topmost.get(largest) ?? 0) / stacks.length,
      hidden: content > 0 ? (hiding.get(largest) ?? 0) / content : 0,
      element: nameOf(largest),
    };
  };

  /** Class words that name a loading state ("ant-skeleton", "MuiSkeleton-root", "spinner-border", "page-loader"). */
  const LOADING_WORDS = new Set(['spinner', 'loading', 'loader', 'skeleton', 'shimmer']);
  /** Whole class names of loading states whose words alone say nothing (Bootstrap's placeholders). */
  const LOADING_CLASSES = new Set(['placeholder-glow', 'placeholder-wave']);
  /** Icons of waiting (Font Awesome's), counted outside a control: in a button or a link the same icon means "refresh". */
  const LOADING_ICONS = new Set(['fa-spin', 'fa-pulse', 'fa-circle-notch', 'fa-sync', 'fa-sync-alt', 'fa-rotate', 'fa-arrows-rotate', 'fa-refresh']);
  const CONTROLS = 'button, a, [role="button"], label, summary, select';
  /** The whole text of an element that says it is loading: "Loading…", "Loading data...", in a few languages. */
  const LOADING_TEXT =
    /^(loading|please wait|chargement|cargando|carregando|caricamento|wird geladen|laden|загрузка|読み込み中|加载中|載入中)( [^ .…]{1,20}){0,2} ?(\.{2,3}|…)$/i;
  /** The whole text of a figure that has no value yet: a dash or an ellipsis, in type of at least FIGURE_MIN_PX. */
  const BLANK_FIGURE = /^(-|--|–|—|…|\.\.\.)$/;
  const FIGURE_MIN_PX = 20;
  /** Class words of an svg chart's axes and of its furniture, whose shapes are not data. */
  const AXIS_WORDS = new Set(['axis', 'tick', 'ticks']);
  const FURNITURE_WORDS = new Set(['axis', 'tick', 'ticks', 'grid', 'gridline', 'gridlines', 'domain', 'legend', 'background', 'bg', 'title', 'label', 'labels', 'tooltip', 'crosshair']);
  const wordsOf = (e: Element) =>
    (e.getAttribute('class') ?? '')
      .split(/\s+/)
      .flatMap((token) => token.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase().split(/[\s_-]+/));

  const findPlaceholders = () => {
    const found: Element[] = [];
    const names: string[] = [];
    let count = 0;
    const note = (e: Element, name: string) => {
      if (found.some((f) => f === e || f.contains(e)) || !shownBox(e, 4)) return;
      count++;
      if (found.length < 50) found.push(e);
      if (names.length < 3) names.push(name);
    };
    const each = (selector: string, check: (e: Element) => string | null) =>
      attempt(() => {
        const list = document.querySelectorAll(selector);
        for (let i = 0; i < list.length && i < maxNodes; i++) {
          const e = list[i]!;
          if (e === root || e === body) continue;
          const name = check(e);
          if (name) note(e, name);
        }
      }, undefined);
    each('[aria-busy="true"]', (e) => `${nameOf(e)}[aria-busy]`);
    each('progress:indeterminate, [role="progressbar"]:not([aria-valuenow])', (e) => `${nameOf(e)} (progress)`);
    each('[class*="spinner" i], [class*="load" i], [class*="skeleton" i], [class*="shimmer" i], [class*="placeholder-" i], [class*="fa-" i]', (e) => {
      const classes = (e.getAttribute('class') ?? '').split(/\s+/);
      if (classes.some((c) => LOADING_CLASSES.has(c)) || wordsOf(e).some((w) => LOADING_WORDS.has(w))) return nameOf(e);
      return classes.some((c) => LOADING_ICONS.has(c)) && !e.closest(CONTROLS) ? nameOf(e) : null;
    });
    attempt(() => {
      if (!body) return;
      const walker = document.createTreeWalker(body, NodeFilter.SHOW_TEXT);
      const dashes: Element[] = [];
      for (let n = 0, node = walker.nextNode(); node && n < maxNodes; n++, node = walker.nextNode()) {
        const text = node.nodeValue ?? '';
        if (text.length > 80) continue;
        const trimmed = text.trim().replace(/\s+/g, ' ');
        const parent = node.parentElement;
        const dash = BLANK_FIGURE.test(trimmed);
        if (!parent || !(dash || (trimmed.length >= 4 && trimmed.length <= 48 && LOADING_TEXT.test(trimmed)))) continue;
        // The element's whole text, read only for the few texts that match (a parent's text may be the whole document).
        if ((parent.textContent ?? '').trim().replace(/\s+/g, ' ') !== trimmed) continue;
        if (!dash) note(parent, `"${trimmed}"`);
        else if (parseFloat(getComputedStyle(parent).fontSize) >= FIGURE_MIN_PX) dashes.push(parent);
      }
      // One large dash may be a design; several are a dashboard's figures waiting for their values.
      const shown = dashes.filter((e) => shownBox(e));
      if (shown.length >= 2) for (const e of shown) note(e, `${nameOf(e)} "${(e.textContent ?? '').trim()}"`);
    }, undefined);
    each('svg', (svg) => {
      if (svg.parentElement?.closest('svg')) return null;
      const box = shownBox(svg, 60);
      if (!box) return null;
      const parts = svg.querySelectorAll('*');
      if (parts.length > maxNodes) return null;
      let axes = 0;
      for (const part of Array.from(parts)) if (wordsOf(part).some((w) => AXIS_WORDS.has(w))) axes++;
      if (axes < 2) return null;
      const furniture = (e: Element) => {
        for (let at: Element | null = e; at && at !== svg; at = at.parentElement) {
          if (/^(defs|clippath|mask|pattern|marker|symbol|lineargradient|radialgradient|text)$/i.test(at.tagName)) return true;
          if (wordsOf(at).some((w) => FURNITURE_WORDS.has(w))) return true;
        }
        return false;
      };
      const area = box.width * box.height;
      for (const part of Array.from(svg.querySelectorAll('path, rect, circle, ellipse, line, polyline, polygon, use, image'))) {
        if (furniture(part)) continue;
        const r = part.getBoundingClientRect();
        // A shape with a size that is not the plot's whole background is a data mark.
        if ((r.width >= 2 || r.height >= 2) && r.width * r.height < area * 0.8) return null;
      }
      return `${nameOf(svg)} ${Math.round(box.width)}×${Math.round(box.height)} with axes but no data`;
    });
    return { count, first: names };
  };

  const findCanvases = () => {
    const canvases: CanvasInPicture[] = [];
    const list = document.querySelectorAll('canvas');
    for (let i = 0; i < list.length && i < maxNodes && canvases.length < 10; i++) {
      const canvas = list[i]!;
      const box = shownBox(canvas);
      if (!box || box.width < 60 || box.height < 40) continue;
      const share = (v: number, from: number, size: number) => Math.min(1, Math.max(0, (v - from) / size));
      // What the canvas draws on: inside its border.
      const left = box.left + canvas.clientLeft;
      const top = box.top + canvas.clientTop;
      canvases.push({
        name: `canvas ${Math.round(canvas.clientWidth)}×${Math.round(canvas.clientHeight)}`,
        left: share(left, x, width),
        top: share(top, y, height),
        right: share(left + canvas.clientWidth, x, width),
        bottom: share(top + canvas.clientHeight, y, height),
      });
    }
    return canvases;
  };

  const findLogin = (): PageProbe['login'] => {
    if (!body) return null;
    const viewWidth = root.clientWidth || window.innerWidth;
    const viewHeight = root.clientHeight || window.innerHeight;
    const passwords = Array.from(document.querySelectorAll('input[type="password"]')).slice(0, 5);
    for (const password of passwords) {
      const at = shownBox(password, 4);
      if (!at) continue;
      // The form holding the field, or the nearest element around it that also holds a user-name field.
      let form: Element | null = (password as HTMLInputElement).form;
      const userName = 'input[type="text"], input[type="email"], input[type="tel"], input:not([type])';
      for (let e = password.parentElement, up = 0; !form && e && e !== body && up < 8; e = e.parentElement, up++) {
        if (e.querySelector(userName)) form = e;
      }
      if (!form) continue;
      if (!Array.from(form.querySelectorAll(userName)).some((e) => shownBox(e, 4))) continue;
      if (!Array.from(form.querySelectorAll('button, input[type="submit"], input[type="image"], [role="button"]')).some((e) => shownBox(e, 4))) continue;
      const r = form.getBoundingClientRect();
      const middleX = (r.left + r.width / 2) / viewWidth;
      const middleY = (r.top + r.height / 2) / viewHeight;
      if (middleY < 1 / 8 || middleX < 0.15 || middleX > 0.85) continue;
      let links = 0;
      for (const link of Array.from(document.querySelectorAll('a[href]')).slice(0, maxNodes)) {
        if (!form.contains(link) && shownBox(link) && ++links > 40) break;
      }
      if (links > 40) continue;
      let inside = 0;
      let outside = 0;
      const walker = document.createTreeWalker(body, NodeFilter.SHOW_TEXT);
      for (let n = 0, node = walker.nextNode(); node && n < maxNodes; n++, node = walker.nextNode()) {
        const parent = node.parentElement;
        const length = (node.nodeValue ?? '').trim().length;
        if (!parent || length === 0 || /^(script|style|noscript|template|title)$/i.test(parent.tagName) || !shownBox(parent)) continue;
        if (form.contains(parent)) inside += length;
        else outside += length;
      }
      if (outside <= Math.max(600, 2 * inside)) return { form: nameOf(form) };
    }
    return null;
  };

  return {
    images,
    fonts,
    overlay: attempt(findOverlay, null),
    placeholders: attempt(findPlaceholders, { count: 0, first: [] }),
    canvases: attempt(findCanvases, []),
    login: attempt(findLogin, null),
  };
}

/** The most blocked addresses handed to the probe; a page with more may see some of its blocked images counted. */
const MAX_BLOCKED = 1_000;
/** The most elements of one kind, and text nodes, a part of the probe looks at: a page decides how many it has. */
const MAX_NODES = 20_000;

/** The probe's argument for an area. */
export const probeArguments = (area: ProbeArea) => ({ ...area, blocked: area.blocked.slice(0, MAX_BLOCKED), grid: GRID, maxNodes: MAX_NODES });
