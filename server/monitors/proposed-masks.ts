import { type Rect } from './picture-regions.js';

/** How proposeMasks reads its pictures. */
export interface ProposeOptions {
  /** Picture px per CSS px (the capture's device scale factor). Default 1. */
  scale?: number;
}

/**
 * The regions that differ between two captures of a page taken seconds apart (clocks, carousels,
 * live counters), merged into a few boxes, in CSS px: masks to propose.
 */
export async function proposeMasks(_first: Buffer, _second: Buffer, _options: ProposeOptions = {}): Promise<Rect[]> {
  return [];
}
