import type { Monitor } from '../admin-types.js';

type MaskRect = Monitor['mask_rects'][number];

/** One rectangle mask as the form holds it: the text of each box. */
export type MaskRectDraft = Record<'x' | 'y' | 'width' | 'height' | 'tolerance', string>;

const SIDES = [
  ['x', 'x'],
  ['y', 'y'],
  ['width', 'Width'],
  ['height', 'Height'],
  ['tolerance', 'Tolerance'],
] as const;

export const draftOf = (r: MaskRect): MaskRectDraft => ({
  x: String(r.x),
  y: String(r.y),
  width: String(r.width),
  height: String(r.height),
  tolerance: r.tolerance === undefined ? '' : String(r.tolerance),
});

/** The rectangles to save, or why one cannot be (naming it by its place in the list). */
export function parseMaskRects(drafts: MaskRectDraft[]): MaskRect[] | { error: string } {
  const rects: MaskRect[] = [];
  for (const [i, d] of drafts.entries()) {
    const n = (text: string) => (/^\d+(\.\d+)?$/.test(text.trim()) ? Number(text) : NaN);
    const [x, y, width, height] = [n(d.x), n(d.y), n(d.width), n(d.height)];
    if ([x, y, width, height].some(Number.isNaN) || width <= 0 || height <= 0) {
      return { error: `Rectangle ${i + 1}: enter x and y (0 or more) and a width and height above 0, in CSS pixels.` };
    }
    const rect: MaskRect = { x, y, width, height };
    if (d.tolerance.trim() !== '') {
      const tolerance = n(d.tolerance);
      if (Number.isNaN(tolerance) || tolerance > 1) return { error: `Rectangle ${i + 1}: the tolerance is a fraction from 0 to 1, or empty to leave the rectangle out.` };
      rect.tolerance = tolerance;
    }
    rects.push(rect);
  }
  return rects;
}

/**
 * The list editor of a monitor's rectangle masks (CSS px of the page): each left out of every
 * comparison, or with a tolerance counted only past that share of its pixels.
 */
export function MaskRectsField({ drafts, onChange, error }: { drafts: MaskRectDraft[]; onChange: (next: MaskRectDraft[]) => void; error?: string }) {
  const set = (i: number, side: keyof MaskRectDraft, value: string) => onChange(drafts.map((d, j) => (j === i ? { ...d, [side]: value } : d)));
  return (
    <fieldset class="field mask-rects">
      <legend>Masked rectangles</legend>
      {drafts.length > 0 && (
        <table class="mask-rects-table">
          <thead>
            <tr>
              {SIDES.map(([side, label]) => (
                <th key={side} scope="col">
                  {label}
                </th>
              ))}
              <th scope="col">
                <span class="visually-hidden">Remove</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {drafts.map((d, i) => (
              <tr key={i}>
                {SIDES.map(([side, label]) => (
                  <td key={side}>
                    <input
                      type="text"
                      inputMode="decimal"
                      value={d[side]}
                      aria-label={`${label} of rectangle ${i + 1}`}
                      placeholder={side === 'tolerance' ? 'ignore' : undefined}
                      onInput={(e) => set(i, side, e.currentTarget.value)}
                    />
                  </td>
                ))}
                <td>
                  <button type="button" class="button small danger-text" onClick={() => onChange(drafts.filter((_, j) => j !== i))}>
                    Remove<span class="visually-hidden"> rectangle {i + 1}</span>
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <button type="button" class="button small" onClick={() => onChange([...drafts, { x: '0', y: '0', width: '', height: '', tolerance: '' }])}>
        Add a rectangle
      </button>
      {error ? (
        <p class="field-error" role="alert">
          {error}
        </p>
      ) : (
        <p class="field-hint">CSS pixels from the page's top left corner. Without a tolerance the rectangle is left out; with one (0 to 1) it counts only past that share of its pixels.</p>
      )}
    </fieldset>
  );
}
