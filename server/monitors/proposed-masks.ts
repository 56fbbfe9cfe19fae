import { comparePictures } from './picture-diff.js';
import { type Rect } from './picture-regions.js';

/** How proposeMasks reads its pictures. */
export interface ProposeOptions {
  /** Picture px per CSS px (the capture's device scale factor). Default 1. */
  scale?: number;
}

/** CSS px added around each region, so a clock whose digits widen is still covered. */
const PADDING = 8;
/** Regions closer than this (CSS px) become one box: the digits of one counter, the slides of one carousel. */
const NEAR = 32;
/** At most this many boxes are proposed; past it the nearest are merged. */
const MAX_PROPOSED = 6;

/**
 * The regions that differ between two captures of a page taken seconds apart (clocks, carousels,
 * live counters), merged into a few boxes, in CSS px of the second: masks to propose. Rows that
 * only moved are not proposed (the content is the same); rows changed or inserted are.
 */
export async function proposeMasks(first: Buffer, second: Buffer, options: ProposeOptions = {}): Promise<Rect[]> {
  const { regions } = await comparePictures(first, second, { scale: options.scale });
  const boxes = regions.flatMap((region) => (region.kind === 'changed' || region.kind === 'inserted') && region.after ? [padded(region.after)] : []);
  return mergeBoxes(boxes, NEAR, MAX_PROPOSED);
}

function padded(rect: Rect): Rect {
  const x = Math.max(0, rect.x - PADDING);
  const y = Math.max(0, rect.y - PADDING);
  return { x, y, width: rect.x + rect.width + PADDING - x, height: rect.y + rect.height + PADDING - y };
}

/** Merges boxes closer than `near` until none are, then the nearest two until at most `max` are left. */
export function mergeBoxes(boxes: Rect[], near: number, max: number): Rect[] {
  const left = [...boxes];
  for (;;) {
    let best: [number, number, number] | null = null;
    for (let i = 0; i < left.length; i++) {
      for (let j = i + 1; j < left.length; j++) {
        const gap = gapBetween(left[i]!, left[j]!);
        if (!best || gap < best[2]) best = [i, j, gap];
      }
    }
    if (!best || (best[2] >= near && left.length <= max)) return left;
    const [i, j] = best;
    left[i] = union(left[i]!, left[j]!);
    left.splice(j, 1);
  }
}

/** The distance between two boxes (0 when they touch or overlap). */
function gapBetween(a: Rect, b: Rect): number {
  const dx = Math.max(0, Math.max(a.x, b.x) - Math.min(a.x + a.width, b.x + b.width));
  const dy = Math.max(0, Math.max(a.y, b.y) - Math.min(a.y + a.height, b.y + b.height));
  return Math.max(dx, dy);
}

function union(a: Rect, b: Rect): Rect {
  const x = Math.min(a.x, b.x);
  const y = Math.min(a.y, b.y);
  return { x, y, width: Math.max(a.x + a.width, b.x + b.width) - x, height: Math.max(a.y + a.height, b.y + b.height) - y };
}
