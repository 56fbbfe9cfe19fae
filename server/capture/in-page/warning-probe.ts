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
  /** Images in the area that failed to load, and those still loading. */
  images: { failed: number; loading: number; first: string | null };
  /** Families of web fonts that failed to load, and of those still loading. */
  fonts: { failed: string[]; loading: string[] };
  /** The share of the viewport (0–1) a fixed element covers over the page's content, and which element. */
  overlay: { share: number; element: string } | null;
}

/** What a probe that could not run says: nothing (a page that broke the functions it calls still gets its picture). */
export const NOTHING_PROBED: PageProbe = { images: { failed: 0, loading: 0, first: null }, fonts: { failed: [], loading: [] }, overlay: null };

/** Columns and rows of the grid of points the overlay is looked for at. */
const GRID = { columns: 16, rows: 12 };

/**
 * Looks at the page as it is captured:
 * - images: every `<img>` of the document that is rendered and meets `area`, and that is still
 *   loading (`complete` false) or finished without a picture (`naturalWidth` 0: failed or not an
 *   image); an `<img>` without any source, or whose address the capture blocked, is not counted;
 * - fonts: the `FontFace`s of `document.fonts` whose status is `error` or `loading` (a face the
 *   page declares but never uses stays `unloaded` and is not counted);
 * - overlay: at a grid of points over the viewport, whether the topmost element is (inside) a
 *   `position: fixed` element with other content of the page under it. The share of such points
 *   is the share of the viewport covered. A fixed element with nothing but the page's background
 *   under it (a fixed app shell holding the whole page) covers nothing.
 */
export function probePage(args: ProbeArea & { grid: { columns: number; rows: number } }): PageProbe {
  const { x, y, width, height, grid } = args;
  const blocked = new Set(args.blocked);
  const images = { failed: 0, loading: 0, first: null as string | null };
  const sx = window.scrollX;
  const sy = window.scrollY;
  for (const img of Array.from(document.images)) {
    const source = img.currentSrc || img.getAttribute('src') || img.getAttribute('srcset');
    if (!source || blocked.has(img.currentSrc) || blocked.has(img.src)) continue;
    if (img.getClientRects().length === 0 || getComputedStyle(img).visibility === 'hidden') continue;
    const r = img.getBoundingClientRect();
    const left = r.left + sx;
    const top = r.top + sy;
    if (left > x + width || left + r.width < x || top > y + height || top + r.height < y) continue;
    const loading = !img.complete;
    const failed = img.complete && img.naturalWidth === 0 && img.naturalHeight === 0;
    if (!loading && !failed) continue;
    if (loading) images.loading++;
    else images.failed++;
    if (images.first === null) images.first = img.currentSrc || source;
  }

  const fonts = { failed: [] as string[], loading: [] as string[] };
  if (document.fonts) {
    document.fonts.forEach((face) => {
      const list = face.status === 'error' ? fonts.failed : face.status === 'loading' ? fonts.loading : null;
      const family = face.family.replace(/^["']|["']$/g, '');
      if (list && !list.includes(family)) list.push(family);
    });
  }

  let overlay: PageProbe['overlay'] = null;
  if (args.overlay && document.body) {
    const root = document.documentElement;
    const viewWidth = root.clientWidth || window.innerWidth;
    const viewHeight = root.clientHeight || window.innerHeight;
    const fixedOf = new Map<Element, Element | null>();
    const fixedAncestor = (element: Element): Element | null => {
      const path: Element[] = [];
      let found: Element | null = null;
      for (let e: Element | null = element; e && e !== root && e !== document.body; e = e.parentElement) {
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
    const covered = new Map<Element, number>();
    let points = 0;
    for (let row = 0; row < grid.rows; row++) {
      for (let column = 0; column < grid.columns; column++) {
        points++;
        const at = document.elementsFromPoint(((column + 0.5) * viewWidth) / grid.columns, ((row + 0.5) * viewHeight) / grid.rows);
        const top = at[0];
        const fixed = top ? fixedAncestor(top) : null;
        if (!fixed) continue;
        const hides = at.some((e) => e !== root && e !== document.body && !fixed.contains(e) && !e.contains(fixed));
        if (hides) covered.set(fixed, (covered.get(fixed) ?? 0) + 1);
      }
    }
    let total = 0;
    let largest: Element | null = null;
    for (const [element, count] of covered) {
      total += count;
      if (!largest || count > (covered.get(largest) ?? 0)) largest = element;
    }
    if (largest && points > 0) {
      const id = largest.id ? `#${largest.id}` : '';
      const classes = !id && typeof largest.className === 'string' && largest.className.trim() ? `.${largest.className.trim().split(/\s+/).slice(0, 2).join('.')}` : '';
      overlay = { share: total / points, element: largest.tagName.toLowerCase() + id + classes };
    }
  }
  return { images, fonts, overlay };
}

/** The most blocked addresses handed to the probe; a page with more may see some of its blocked images counted. */
const MAX_BLOCKED = 1_000;

/** The probe's argument for an area. */
export const probeArguments = (area: ProbeArea) => ({ ...area, blocked: area.blocked.slice(0, MAX_BLOCKED), grid: GRID });
